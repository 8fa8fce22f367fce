#include "selfanalyzer/efficiency_meter.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

namespace cosched::sa {

namespace {

constexpr std::uint64_t kUnknown = ~std::uint64_t{0};

EfficiencyConfig sanitized(EfficiencyConfig c) noexcept {
  auto bounded = [](double v, double lo, double hi, double fallback) {
    return std::isfinite(v) && v >= lo && v <= hi ? v : fallback;
  };
  c.min_interval_s = bounded(c.min_interval_s, 1e-4, 3600, 0.04);
  c.aperiodic_interval_s = bounded(c.aperiodic_interval_s, 1e-4, 3600, 0.2);
  c.max_interval_s = bounded(c.max_interval_s, std::max(c.min_interval_s, c.aperiodic_interval_s), 1e6, 60);
  c.window = std::clamp(c.window, 1, kMaxEfficiencyWindow);
  c.min_intervals = std::clamp(c.min_intervals, 1, c.window);
  if (!(c.max_wait_fraction > 0)) c.max_wait_fraction = 0.1;
  c.load_shift_confirm = std::clamp(c.load_shift_confirm, 1, 64);
  return c;
}

}  // namespace

EfficiencyMeter::EfficiencyMeter(const EfficiencyConfig& config) : cfg_(sanitized(config)) {}

void EfficiencyMeter::Window::push(const Interval& x, int capacity) noexcept {
  if (count < capacity) {
    items[static_cast<std::size_t>((head + count) % kMaxEfficiencyWindow)] = x;
    ++count;
  } else {
    items[static_cast<std::size_t>(head)] = x;
    head = (head + 1) % kMaxEfficiencyWindow;
  }
  // The level: the mean run-queue share of the intervals that know theirs.
  double sum = 0;
  int known = 0;
  for (int i = 0; i < count; ++i) {
    if (at(i).wait >= 0) sum += at(i).wait, ++known;
  }
  level = known > 0 ? sum / known : -1;
}

const EfficiencyMeter::Interval& EfficiencyMeter::Window::at(int i) const noexcept {
  return items[static_cast<std::size_t>((head + i) % kMaxEfficiencyWindow)];
}

bool EfficiencyMeter::tick(std::uint64_t t_ns, std::uint64_t busy_ns, int cpus, std::uint64_t iterations,
                           bool periodic) noexcept {
  if (cpus <= 0) {  // no team yet (or gone): nothing to measure against
    cur_.cpus = 0;
    cur_.started = false;
    return false;
  }
  if (cpus != cur_.cpus) {
    // Another CPU count: its own window. The one just left is kept as `before_`; coming back to it (the end
    // of a baseline, a short excursion) resumes its intervals, which still describe the job at those CPUs.
    if (before_.cpus == cpus) {
      std::swap(now_, before_);
    } else {
      before_ = now_;
      now_.clear();
      now_.load_changed = false;
      now_.cpus = cpus;
    }
    cur_.cpus = cpus;
    cur_.started = false;
    cur_.warmup = true;  // threads wake, migrate and warm their caches: the first interval is not kept
    if (now_.count >= cfg_.min_intervals) publish(now_);
  }
  cur_.last_ns = t_ns;
  cur_.last_busy = busy_ns;
  if (!cur_.started) {
    cur_.started = true;
    cur_.start_ns = t_ns;
    cur_.start_busy = busy_ns;
    cur_.start_wait = kUnknown;
    cur_.mark_iterations = iterations;
    cur_.marked = false;
    dirty_ = false;
    return false;
  }
  const double elapsed = t_ns > cur_.start_ns ? static_cast<double>(t_ns - cur_.start_ns) * 1e-9 : 0;
  if (elapsed >= cfg_.max_interval_s) return true;
  // The warm-up interval is never kept: it need not span whole iterations.
  if (cur_.warmup) return elapsed >= cfg_.min_interval_s;
  if (!periodic) return elapsed >= cfg_.aperiodic_interval_s;
  // With a period, an interval ends at the first reading after an iteration boundary that came once it lasted
  // min_interval_s: it then spans whole iterations (within one reading at either end).
  if (elapsed < cfg_.min_interval_s) return false;
  if (!cur_.marked) {
    cur_.marked = true;
    cur_.mark_iterations = iterations;
    return false;
  }
  return iterations != cur_.mark_iterations;
}

void EfficiencyMeter::close_interval(std::uint64_t wait_ns) noexcept {
  if (!cur_.started || cur_.cpus <= 0) return;
  Interval x;
  x.seconds = cur_.last_ns > cur_.start_ns ? static_cast<double>(cur_.last_ns - cur_.start_ns) * 1e-9 : 0;
  x.busy_s = cur_.last_busy > cur_.start_busy ? static_cast<double>(cur_.last_busy - cur_.start_busy) * 1e-9 : 0;
  x.cap_s = x.seconds * cur_.cpus;
  if (cur_.start_wait != kUnknown && wait_ns != kUnknown && wait_ns >= cur_.start_wait && x.seconds > 0) {
    x.wait = static_cast<double>(wait_ns - cur_.start_wait) * 1e-9 / x.cap_s;
  }
  if (!cur_.warmup && !dirty_ && x.cap_s > 0) admit(x);
  // The next interval starts where this one ended.
  cur_.warmup = false;
  dirty_ = false;
  cur_.start_ns = cur_.last_ns;
  cur_.start_busy = cur_.last_busy;
  cur_.start_wait = wait_ns;
  cur_.marked = false;
}

void EfficiencyMeter::admit(const Interval& x) noexcept {
  Window& w = now_;
  if (x.wait >= 0 && w.level >= 0 && std::fabs(x.wait - w.level) > cfg_.max_wait_fraction) {
    const int dir = x.wait > w.level ? 1 : -1;
    w.shift = dir == w.shift_dir ? w.shift + 1 : 1;
    w.shift_dir = dir;
    if (w.shift < cfg_.load_shift_confirm) {  // a burst: this interval ran under another load
      ++contaminated_;
      return;
    }
    // The load changed for good: the window starts over at the new level, never mixing the two.
    const int cpus = w.cpus;
    w.clear();
    w.cpus = cpus;
    w.load_changed = true;
  } else {
    w.shift = 0;
  }
  w.push(x, cfg_.window);
  if (w.count >= cfg_.min_intervals) {
    w.load_changed = false;
    publish(w);
  }
}

void EfficiencyMeter::publish(const Window& w) noexcept {
  double busy = 0;
  double cap = 0;
  double seconds = 0;
  double sum = 0;
  double sum_sq = 0;
  for (int i = 0; i < w.count; ++i) {
    const Interval& x = w.at(i);
    busy += x.busy_s;
    cap += x.cap_s;
    seconds += x.seconds;
    // More threads than CPUs (a nested team, a team on fewer CPUs than threads) can work more than the CPUs'
    // time: at most all of it was used.
    const double e = std::min(1.0, x.busy_s / x.cap_s);
    sum += e;
    sum_sq += e * e;
  }
  if (cap <= 0) return;
  const double n = w.count;
  const double mean = sum / n;
  const double var = n > 1 ? std::max(0.0, (sum_sq - n * mean * mean) / (n - 1)) : 0;
  estimate_.efficiency = std::min(1.0, busy / cap);
  estimate_.std_error = n > 1 ? std::sqrt(var / n) : 0;
  estimate_.cpu_wait = w.level;
  estimate_.window_s = seconds;
  estimate_.cpus = w.cpus;
  estimate_.intervals = w.count;
  ++estimate_.seq;
}

proto::EfficiencyPending EfficiencyMeter::pending() const noexcept {
  if (cur_.cpus <= 0) return proto::EfficiencyPending::no_team;
  if (now_.load_changed) return proto::EfficiencyPending::load_changing;  // the estimate is of the old load
  if (estimate_.seq > 0 && estimate_.cpus == cur_.cpus) return proto::EfficiencyPending::none;
  return proto::EfficiencyPending::warming;
}

}  // namespace cosched::sa
