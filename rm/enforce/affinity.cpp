// Affinity backend: sched_setaffinity on every thread of the job. New threads are caught twice: the job's
// libcosched applies the arena mask in its thread-begin callback, and refresh() re-applies each quantum.
// A thread may also widen its own mask later: GROMACS' mdrun resets its main thread's mask to every CPU at
// start-up (seen here: `gmx mdrun -pin off` on 2 CPUs under --cpus 0 ran at 2 CPUs' speed). So refresh()
// also reads the mask of every thread it set and confines again any that left the job's CPUs; a thread that
// narrowed itself inside them (a program pinning its own threads) is left as it is.
#include <dirent.h>
#include <sched.h>

#include <cstdlib>
#include <map>
#include <set>

#include "cosched/log.hpp"
#include "enforcer.hpp"

namespace cosched::rm {

namespace {

std::set<pid_t> threads_of(pid_t pid) {
  std::set<pid_t> tids;
  std::string dir = "/proc/" + std::to_string(pid) + "/task";
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return tids;
  while (dirent* e = ::readdir(d)) {
    if (e->d_name[0] != '.') tids.insert(static_cast<pid_t>(std::atoi(e->d_name)));
  }
  ::closedir(d);
  return tids;
}

cpu_set_t to_cpu_set(const CpuSet& s) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : s.to_vector()) {
    if (c < CPU_SETSIZE) CPU_SET(c, &set);
  }
  return set;
}

class AffinityEnforcer final : public Enforcer {
 public:
  explicit AffinityEnforcer(const CpuSet& managed) : managed_(managed) {}
  [[nodiscard]] std::string_view name() const override { return "affinity"; }
  [[nodiscard]] bool job_applies_mask() const override { return true; }

  Status attach(Job& job) override {
    cpu_set_t orig;
    CPU_ZERO(&orig);
    ::sched_getaffinity(job.pid, sizeof orig, &orig);
    state_[job.id].original = orig;
    return {};
  }

  Status apply(Job& job, const CpuSet& cpus) override {
    auto& st = state_[job.id];
    st.mask = to_cpu_set(cpus);
    st.known.clear();
    set_all(job, st);
    return {};
  }

  void refresh(Job& job) override {
    auto it = state_.find(job.id);
    if (it == state_.end() || CPU_COUNT(&it->second.mask) == 0) return;
    set_all(job, it->second);
  }

  void release(Job& job) override {
    auto it = state_.find(job.id);
    if (it == state_.end()) return;
    for (pid_t tid : threads_of(job.pid)) ::sched_setaffinity(tid, sizeof(cpu_set_t), &it->second.original);
    state_.erase(it);
  }

 private:
  struct PerJob {
    cpu_set_t original{};
    cpu_set_t mask{};
    std::set<pid_t> known;  // threads already given `mask`
    bool told_escape = false;
  };

  static void set_all(const Job& job, PerJob& st) {
    const std::set<pid_t> now = threads_of(job.pid);
    std::erase_if(st.known, [&](pid_t tid) { return now.count(tid) == 0; });  // exited threads
    for (pid_t tid : now) {
      const bool known = st.known.count(tid) != 0;
      if (known && inside(tid, st.mask)) continue;
      if (::sched_setaffinity(tid, sizeof st.mask, &st.mask) != 0) continue;  // exiting, or not ours
      if (known && !st.told_escape) {  // once per job: a program may reset its masks again and again
        COSCHED_INFO(enforce, "job {}: thread {} had left the job's CPUs (the program set its own mask): confined "
                     "again, as every such thread will be each quantum", job.id, tid);
        st.told_escape = true;
      }
      st.known.insert(tid);
    }
  }

  // Whether thread `tid` may run only on CPUs of `mask` (true when it cannot be read: it is exiting).
  static bool inside(pid_t tid, const cpu_set_t& mask) {
    cpu_set_t now;
    CPU_ZERO(&now);
    if (::sched_getaffinity(tid, sizeof now, &now) != 0) return true;
    cpu_set_t outside;
    CPU_XOR(&outside, &now, &mask);
    CPU_AND(&outside, &outside, &now);  // in `now`, not in `mask`
    return CPU_COUNT(&outside) == 0;
  }

  CpuSet managed_;
  std::map<policy::JobId, PerJob> state_;
};

class NullEnforcer final : public Enforcer {
 public:
  [[nodiscard]] std::string_view name() const override { return "none"; }
  Status attach(Job&) override { return {}; }
  Status apply(Job&, const CpuSet&) override { return {}; }
  void release(Job&) override {}
  [[nodiscard]] bool confines() const override { return false; }
};

}  // namespace

std::unique_ptr<Enforcer> make_affinity_enforcer(const CpuSet& managed) {
  return std::make_unique<AffinityEnforcer>(managed);
}

std::unique_ptr<Enforcer> make_null_enforcer() { return std::make_unique<NullEnforcer>(); }

Result<std::unique_ptr<Enforcer>> make_enforcer(std::string_view kind, const CpuSet& managed, Guard& guard) {
  if (kind == "affinity") return make_affinity_enforcer(managed);
  if (kind == "none") return make_null_enforcer();
  if (kind == "cgroup-v1") return make_cgroup_enforcer(1, managed, guard);
  if (kind == "cgroup-v2") return make_cgroup_enforcer(2, managed, guard);
  if (kind == "cgroup" || kind == "auto") {
    auto v2 = make_cgroup_enforcer(2, managed, guard);
    if (v2.ok()) return v2;
    auto v1 = make_cgroup_enforcer(1, managed, guard);
    if (v1.ok()) return v1;
    if (kind == "cgroup") {
      return make_error(Errc::unsupported, "no usable cpuset cgroup: " + v2.error().message + "; " + v1.error().message);
    }
    COSCHED_INFO(enforce, "no usable cpuset cgroup ({}; {}): using thread affinity", v2.error().message,
                 v1.error().message);
    return make_affinity_enforcer(managed);
  }
  return make_error(Errc::invalid_argument,
                    "unknown enforcement '" + std::string(kind) + "' (auto|cgroup|cgroup-v1|cgroup-v2|affinity|none)");
}

}  // namespace cosched::rm
