#include "bus_bandwidth.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "policies/job_list.hpp"

namespace cosched::policy {

namespace {

int width_of(const JobView& j, int P) { return std::clamp(j.request, 1, P); }

const char* pick_name(int p) { return p == 0 ? "fitness" : p == 1 ? "list" : "random"; }

}  // namespace

double BusBandwidth::fitness(double abbw_per_proc, double bbw_per_thread) {
  return 1000.0 / (1.0 + std::fabs(abbw_per_proc - bbw_per_thread));
}

double BusBandwidth::per_thread(const JobView& j) const {
  const Bandwidth& b = j.bandwidth;
  if (!b.valid()) return -1;
  if (mode_ == Mode::quanta_window) return b.mean_per_thread(window_);
  // Latest Quantum: the samples of the latest quantum the job ran, i.e. within one quantum of its latest.
  return b.mean_per_thread(std::max(b.count_after(b.latest().at - quantum_s_ * (1 - 1e-6)), 1));
}

// Why the fitness cannot be used this quantum (gang order then); empty when it can.
std::string BusBandwidth::blind_reason(const Snapshot& s, double B) const {
  bool any_sample = false;
  for (const auto& j : s.jobs) any_sample |= per_thread(j) >= 0;
  if (pick_ != Pick::fitness) return std::string("pick=") + pick_name(static_cast<int>(pick_));
  if (!(B > 0)) return "no bus capacity known: give cosched-rm --mem-bandwidth or the policy's bus_bandwidth";
  if (!any_sample) return "no job has a bandwidth sample yet";
  return {};
}

void BusBandwidth::rotate_list(bool blind, double now) {
  if (blind && pick_ == Pick::fitness && !running_.empty() && contains(running_, list_.front())) {
    // No data: gang order, the list sliding by one job per quantum (as SSW-DSS's window), so that jobs
    // meet different neighbours. Moving all the runners to the end would keep the same groups for ever
    // in a symmetric workload, and the counter-free sensor could never see a job run under two loads.
    std::rotate(list_.begin(), list_.begin() + 1, list_.end());
  } else {
    // §4: "The previously running jobs are then transferred to the end of the applications list."
    std::stable_partition(list_.begin(), list_.end(), [&](JobId id) { return !contains(running_, id); });
  }
  running_.clear();
  elected_at_ = now;
}

// The best and the second-best job that is not running and fits in `free` CPUs.
struct BusBandwidth::Choice {
  const JobView* best = nullptr;
  double best_f = -1;
  JobId second = -1;
  double second_f = -1;
};

BusBandwidth::Choice BusBandwidth::choose(const Snapshot& s, int free, double abbw, bool blind, double fair) {
  const int P = std::max(s.machine.cpus, 1);
  Choice c;
  if (pick_ == Pick::random) {
    std::vector<const JobView*> fits;
    for (JobId id : list_) {
      const JobView* j = s.find(id);
      if (!contains(running_, id) && width_of(*j, P) <= free) fits.push_back(j);
    }
    if (!fits.empty()) c.best = fits[splitmix64(rng_) % fits.size()];
  }
  // One traversal: the fittest job that fits (ties: the earlier in the list).
  for (JobId id : list_) {
    if (c.best != nullptr && blind) break;
    if (contains(running_, id)) continue;
    const JobView* j = s.find(id);
    if (width_of(*j, P) > free) continue;
    if (blind) {  // gang order: the first that fits
      c.best = j;
      break;
    }
    const double f = fitness(to_tr_per_us(abbw), to_tr_per_us(bbw_or(*j, fair)));
    if (f > c.best_f) {
      c.second_f = c.best_f;
      c.second = c.best != nullptr ? c.best->id : -1;
      c.best_f = f;
      c.best = j;
    } else if (f > c.second_f) {
      c.second_f = f;
      c.second = id;
    }
  }
  return c;
}

double BusBandwidth::bbw_or(const JobView& j, double fair) const {
  const double v = per_thread(j);
  return v >= 0 ? v : fair;
}

void BusBandwidth::elect(const Snapshot& s, bool rotate) {
  const int P = std::max(s.machine.cpus, 1);
  const double B = bus_ > 0 ? bus_ : s.machine.mem_bandwidth;
  const std::string blind = blind_reason(s, B);
  if (rotate) rotate_list(!blind.empty(), s.now);
  why_.clear();
  const double fair = B > 0 ? B / P : 0;  // per thread, for a job without a sample

  int free = P;
  double used = 0;  // bytes/s of the jobs allocated so far
  for (JobId id : running_) {
    const JobView* j = s.find(id);
    free -= width_of(*j, P);
    used += bbw_or(*j, fair) * width_of(*j, P);
  }
  auto take = [&](const JobView& j, std::string why) {
    running_.push_back(j.id);
    free -= width_of(j, P);
    used += bbw_or(j, fair) * width_of(j, P);
    why_.emplace_back(j.id, std::move(why));
  };
  auto sample_text = [&](const JobView& j) {
    const double v = per_thread(j);
    if (v < 0) return fmt::format("no sample yet, fair share B/P = {:.2f} tr/µs assumed", to_tr_per_us(fair));
    const int n = mode_ == Mode::quanta_window ? std::min(window_, j.bandwidth.count) : 0;
    return fmt::format("BBW/thread {:.2f} tr/µs ({}, {})", to_tr_per_us(v),
                       mode_ == Mode::quanta_window ? fmt::format("mean of {} sample(s)", n) : std::string("latest quantum"),
                       j.bandwidth.source);
  };

  // The head of the list runs by default (rotation only: a fill keeps who runs and adds to it).
  if (rotate && !list_.empty()) {
    const JobView* head = s.find(list_.front());
    take(*head, fmt::format("{}: head of the list, allocated by default ({} CPU(s)); {}", name(), width_of(*head, P),
                            blind.empty() ? sample_text(*head) : "gang order: " + blind));
  }
  while (free > 0) {
    const double abbw = B > 0 ? (B - used) / free : 0;
    const Choice c = choose(s, free, abbw, !blind.empty(), fair);
    if (c.best == nullptr) break;
    if (!blind.empty()) {
      take(*c.best, fmt::format("{}: gang order ({}): {} that fits the {} free CPU(s)", name(), blind,
                                pick_ == Pick::random ? "drawn at random among the jobs" : "next in the list", free));
    } else {
      take(*c.best, fmt::format("{}: fittest for the {} free CPU(s): ABBW/proc {:.2f} tr/µs, {}, fitness {:.1f}{}",
                                name(), free, to_tr_per_us(abbw), sample_text(*c.best), c.best_f,
                                c.second >= 0 ? fmt::format(" (next best: job {}, {:.1f})", c.second, c.second_f) : ""));
    }
  }
}

Decision BusBandwidth::decide(const Snapshot& s) {
  const int P = std::max(s.machine.cpus, 1);
  // The list follows the snapshot: departed jobs leave it, new ones join at its end (admission order).
  auto gone = [&](JobId id) { return s.find(id) == nullptr; };
  list_.erase(std::remove_if(list_.begin(), list_.end(), gone), list_.end());
  const std::size_t was_running = running_.size();
  running_.erase(std::remove_if(running_.begin(), running_.end(), gone), running_.end());
  for (const auto& j : s.jobs) {
    if (!contains(list_, j.id)) list_.push_back(j.id);
  }

  const bool tick = s.event == Event::quantum || s.event == Event::timer;
  const bool due = tick && s.now - elected_at_ >= quantum_s_ - 0.5 * s.quantum;
  why_.clear();
  if (!s.jobs.empty()) {
    if (due || running_.empty()) {
      elect(s, true);
    } else if (running_.size() < was_running || s.event == Event::departure || s.event == Event::arrival ||
               s.event == Event::param_change) {
      elect(s, false);  // CPUs freed by a departure, or a newcomer that may fit: fill them now
    }
  }

  Decision d;
  d.jobs.reserve(s.jobs.size());
  bool waiting = false;
  for (const auto& j : s.jobs) {
    const bool runs = contains(running_, j.id);
    waiting |= !runs;
    Allocation a{j.id, width_of(j, P), runs, runs ? "running" : "waiting", ""};
    for (const auto& [id, why] : why_) {
      if (id == j.id) a.reason = why;
    }
    if (a.reason.empty() && !why_.empty() && !runs) {
      std::string who;
      for (JobId r : running_) who += (who.empty() ? "" : ", ") + std::to_string(r);
      a.reason = fmt::format("{}: waits; job(s) {} run this quantum", name(), who);
    }
    d.jobs.push_back(std::move(a));
  }
  // A timer a quarter of an RM quantum after the rotation is due: a tick at that time rotates first (and
  // re-arms it), and where no tick comes (the simulator ticks only when needed) the timer does.
  if (waiting) d.wake_at = elected_at_ + quantum_s_ + 0.25 * s.quantum;
  d.may_start = true;
  d.may_start_reason = "time sharing: every job gets quanta";
  return d;
}

void BusBandwidth::forget(JobId id) {
  list_.erase(std::remove(list_.begin(), list_.end(), id), list_.end());
  running_.erase(std::remove(running_.begin(), running_.end(), id), running_.end());
}

const ParamTable<BusBandwidth>& BusBandwidth::param_table() {
  using B = BusBandwidth;
  static const ParamTable<B> t = {
      real_param<B>("quantum_ms", 1, 600000, "the list rotates every quantum (§5: 200 ms)",
                    {[](const B& p) { return p.quantum_s_ * 1e3; }, [](B& p, double ms) { p.quantum_s_ = ms / 1e3; }}),
      real_param<B>("bus_bandwidth", 0, 1e15, "bus capacity B in bytes/s; 0: the machine's (cosched-rm --mem-bandwidth)",
                    member<B, double>([](auto& p) -> auto& { return p.bus_; })),
      choice_param<B, Pick>("pick", {{"fitness", Pick::fitness}, {"list", Pick::list}, {"random", Pick::random}},
                            "fitness: eq. 1/2 picks the co-runners; list: gang order; random: co-runners drawn at "
                            "random (the two bandwidth-blind baselines)",
                            member<B, Pick>([](auto& p) -> auto& { return p.pick_; })),
      int_param<B>("seed", 0, std::numeric_limits<long>::max(), "pick=random: the seed of the draws",
                   {[](const B& p) { return static_cast<long>(p.seed_); },
                    [](B& p, long v) { p.rng_ = p.seed_ = static_cast<std::uint64_t>(v); }}),
      only_if<B>(int_param<B>("window", 1, Bandwidth::kWindow, "samples in the moving window (§4: 5; at most 5)",
                              member<B, long>([](auto& p) -> auto& { return p.window_; })),
                 [](const B& p) { return p.mode_ == Mode::quanta_window; }),
  };
  return t;
}

}  // namespace cosched::policy
