#include "membus.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "policies/job_list.hpp"

namespace cosched::policy {

namespace {

// What the job used over the quantum that began at `since`, bytes/s: the mean of the sensor's samples taken
// in it (one per RM quantum, the latest Bandwidth::kWindow), or its latest sample when none was (0 when it has
// none at all). §4 predicts from "the bandwidth consumption ... during the w previous time quanta": one
// 100-ms sample does not stand for a 500-ms quantum when a program reports its traffic in lumps (a loaded
// run saw BBMA's latest sample at 0 in a third of its quanta, and the two BBMA jobs paired).
double quantum_bps(const Bandwidth& b, double since) {
  if (!b.valid()) return 0.0;
  const int n = b.count_after(since);
  return n > 0 ? b.mean(n) : b.latest().bytes_per_s;
}

int procs_of(const JobView& v, int cpus) { return std::clamp(v.request, 1, std::max(cpus, 1)); }

// Algorithm 1, lines 3-5: the applications that ran go to the end of the list, in their order.
std::vector<JobId> rotated(const std::vector<JobId>& list, const std::vector<JobId>& ran) {
  std::vector<JobId> out;
  for (JobId id : list) {
    if (!contains(ran, id)) out.push_back(id);
  }
  for (JobId id : list) {
    if (contains(ran, id)) out.push_back(id);
  }
  return out;
}

}  // namespace

MembusDemand Membus::demand(const JobView& v, int cpus) const {
  MembusDemand d;
  d.procs = procs_of(v, cpus);
  auto it = window_.find(v.id);
  if (it == window_.end() || it->second.empty()) return d;  // no sample yet: predicted at 0 (our choice)
  for (const Sample& x : it->second) {
    d.mem_per_proc += x.mem;
    d.net_per_proc += x.net;
  }
  d.mem_per_proc /= static_cast<double>(it->second.size());
  d.net_per_proc /= static_cast<double>(it->second.size());
  return d;
}

std::vector<JobId> Membus::list_for(const Snapshot& s) const {
  std::vector<JobId> out;
  for (JobId id : list_) {
    if (s.find(id) != nullptr) out.push_back(id);
  }
  for (const auto& j : s.jobs) {
    if (!contains(out, j.id)) out.push_back(j.id);
  }
  return out;
}

std::vector<JobId> Membus::select_local(const Snapshot& s, const std::vector<JobId>& list) const {
  std::vector<MembusDemand> demands;
  demands.reserve(list.size());
  for (JobId id : list) demands.push_back(demand(*s.find(id), s.machine.cpus));
  const std::vector<int> sel = membus_select(demands, std::max(s.machine.cpus, 1), mem_bw_, net_bw_);
  std::vector<JobId> out;
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (sel[i] != 0) out.push_back(list[i]);
  }
  return out;
}

// §4: the prediction is "based on the bandwidth consumption of its processes during the w previous time
// quanta": each job that ran the quantum now ending adds what it used per process.
void Membus::record_samples(const Snapshot& s) {
  for (JobId id : running_) {
    const JobView* v = s.find(id);
    if (v == nullptr || !v->runnable) continue;
    const double p = procs_of(*v, s.machine.cpus);
    const double net = quantum_bps(v->network, switched_at_);
    auto& win = window_[id];
    win.push_back({(quantum_bps(v->bandwidth, switched_at_) + net) / p, net / p});
    while (static_cast<int>(win.size()) > w_) win.pop_front();
  }
}

std::optional<std::vector<JobId>> Membus::cluster_candidates(const Snapshot& s) const {
  // What Algorithm 1 would select locally at the next switch: the list rotated past the running jobs.
  return select_local(s, rotated(list_for(s), running_));
}

Decision Membus::decide(const Snapshot& s) {
  const int P = std::max(s.machine.cpus, 1);
  list_ = list_for(s);
  const bool have_order = s.cluster.at >= 0 && s.now - s.cluster.at <= stale_ * q_;
  const bool new_order = have_order && s.cluster.seq != cluster_seq_;
  const bool running_left =
      std::any_of(running_.begin(), running_.end(), [&](JobId id) { return s.find(id) != nullptr; });
  // A quantum ends (Algorithm 1 runs "at alarm") when q has passed, when the coordinator sends an order, or
  // when every application of the quantum has left.
  const bool due = switched_at_ < 0 || s.now - switched_at_ >= q_ * 0.999 || !running_left;
  std::string how;
  if (!s.jobs.empty() && (new_order || (!have_order && due) || (have_order && !running_left))) {
    record_samples(s);
    list_ = rotated(list_, running_);
    if (new_order) {
      std::vector<int> procs(list_.size());
      for (std::size_t i = 0; i < list_.size(); ++i) procs[i] = procs_of(*s.find(list_[i]), P);
      std::vector<std::size_t> order;
      for (JobId id : s.cluster.order) {
        auto it = std::find(list_.begin(), list_.end(), id);
        if (it != list_.end()) order.push_back(static_cast<std::size_t>(it - list_.begin()));
      }
      const std::vector<int> run = membus_allocate(order, procs, P);
      running_.clear();
      for (std::size_t i = 0; i < list_.size(); ++i) {
        if (run[i] != 0) running_.push_back(list_[i]);
      }
      cluster_seq_ = s.cluster.seq;
      how = "the cluster's agreed order (Algorithm 1, reduction)";
    } else {
      running_ = select_local(s, list_);
      how = have_order ? "Algorithm 2 (the agreed jobs left)" : "Algorithm 2 (local)";
    }
    switched_at_ = s.now;
  }
  std::erase_if(running_, [&](JobId id) { return s.find(id) == nullptr; });
  if (!have_order) {
    // Local mode: CPUs left idle go to whoever fits, head of the list first (work conservation).
    int used = 0;
    for (JobId id : running_) used += procs_of(*s.find(id), P);
    for (JobId id : list_) {
      const int p = procs_of(*s.find(id), P);
      if (contains(running_, id) || used + p > P) continue;
      running_.push_back(id);
      used += p;
    }
  }

  Decision d;
  d.jobs.reserve(s.jobs.size());
  for (const auto& j : s.jobs) {
    const bool run = contains(running_, j.id);
    const MembusDemand m = demand(j, P);
    Allocation a{j.id, procs_of(j, P), run,
                 fmt::format("{} M {:.0f} N {:.0f} MB/s/proc", run ? "run" : "wait", m.mem_per_proc / 1e6,
                             m.net_per_proc / 1e6),
                 ""};
    if (a.runnable != j.runnable || a.cpus != j.allocation) {
      a.reason = run ? fmt::format("membus: selected by {} on {} CPU(s)", how.empty() ? "filling idle CPUs" : how, a.cpus)
                     : fmt::format("membus: not selected this quantum ({})", how.empty() ? "no CPU left" : how);
    }
    d.jobs.push_back(std::move(a));
  }
  d.wake_at = have_order ? s.cluster.at + stale_ * q_ + q_ / 10 : switched_at_ + q_;
  d.may_start = true;
  d.may_start_reason = "membus time-shares: every job gets quanta";
  return d;
}

void Membus::forget(JobId id) {
  window_.erase(id);
  std::erase(list_, id);
  std::erase(running_, id);
}

const ParamTable<Membus>& Membus::param_table() {
  // M and N are given in MB/s and kept in bytes/s.
  auto mbs = [](double Membus::*m) {
    return Field<Membus, double>{[m](const Membus& p) { return p.*m / 1e6; }, [m](Membus& p, double v) { p.*m = v * 1e6; }};
  };
  static const ParamTable<Membus> t = {
      real_param<Membus>("q", 0.01, 3600, "quantum in seconds: how often Algorithm 1 switches gangs (paper §6: 0.5)",
                         member<Membus, double>([](auto& p) -> auto& { return p.q_; })),
      int_param<Membus>("w", 1, 1000, "window in quanta over which bandwidths are averaged (paper §6: 2)",
                        {[](const Membus& p) { return static_cast<long>(p.w_); },
                         [](Membus& p, long v) {
                           p.w_ = static_cast<int>(v);
                           for (auto& [id, win] : p.window_) {
                             while (static_cast<int>(win.size()) > p.w_) win.pop_front();
                           }
                         }}),
      real_param<Membus>("mem_bw", 1e-3, 1e9, "M: the node's memory bandwidth, MB/s (our default)",
                         mbs(&Membus::mem_bw_)),
      real_param<Membus>("net_bw", 1e-3, 1e9, "N: the node's network bandwidth, MB/s (our default)",
                         mbs(&Membus::net_bw_)),
      int_param<Membus>("stale", 1, 1000,
                        "quanta without an order from cosched-cluster before this node schedules alone (our choice)",
                        member<Membus, long>([](auto& p) -> auto& { return p.stale_; })),
  };
  return t;
}

}  // namespace cosched::policy
