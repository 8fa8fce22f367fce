// A baseline by narrowing (docs/selfanalyzer.md, "Teams that cannot shrink"). A job whose team cannot run
// its SelfAnalyzer baseline below its allocation (a fixed team, the team floor of 2 at a 2-CPU grant, reads
// latched at the grant) asks, through JobBlock::narrow_cpus, to run its baseline on fewer CPUs with the same
// team. The RM confines it to the first that many of its CPUs and tells it that allocation, so that its
// samples are keyed by the CPUs that ran them; the policy's allocation and CPU set stay as decided, and the
// CPUs left out wait for the baseline's few iterations, as a resizable job's do during its own baseline.
// This is mechanism, not policy: the policies never see it. The guard undoes it like any confinement.
#include "narrowing.hpp"

#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "cosched/log.hpp"

namespace cosched::rm {
namespace {

// Our choice: while a job runs narrowed, the RM reads its request every 5 ms instead of once per quantum.
// The job withdraws the request the moment its baseline ends, and the delay after that is time its team
// spends on too few CPUs: up to a quantum (100 ms by default), against the 6-11 ms that the whole narrowed
// baseline of `team-patterns --pattern setnum` (a fixed team of 2, 0.29 s alone natively on 2 CPUs) takes.
// 5 ms bounds that delay for a few reads of shared memory per poll, and only while some job runs narrowed.
constexpr long kNarrowPollNs = 5'000'000L;

CpuSet first_cpus(const CpuSet& cpus, int n) {
  CpuSet out;
  for (int c = cpus.first(); c >= 0 && n > 0; c = cpus.next(c), --n) out.set(c);
  return out;
}

}  // namespace

std::pair<int, CpuSet> running_set(const Job& j, int count, const CpuSet& cpus) {
  if (j.narrow_request < 1 || j.narrow_request >= count || cpus.count() < count) return {count, cpus};
  return {j.narrow_request, first_cpus(cpus, j.narrow_request)};
}

void publish_and_apply(Enforcer& enforcer, Job& j, int from_count, int count, const CpuSet& cpus) {
  const auto [n, set] = running_set(j, count, cpus);
  if (n >= from_count) {
    if (auto st = enforcer.apply(j, set); !st) COSCHED_WARN(enforce, "job {}: {}", j.id, st.error().message);
    j.arena->publish(n, set, enforcer.applies_mask_for(j));
  } else {
    j.arena->publish(n, set, enforcer.applies_mask_for(j));
    if (auto st = enforcer.apply(j, set); !st) COSCHED_WARN(enforce, "job {}: {}", j.id, st.error().message);
  }
}

bool follow_narrowing(Enforcer& enforcer, Job& j, double t) {
  // The RM trusts nothing the job writes: a request counts only for a job of its own that runs, in its
  // baseline phase, under a backend that confines, for fewer CPUs than it holds.
  const int asked = j.progress.narrow_cpus;  // read this quantum by poll_reports (note_team)
  const bool valid = asked >= 1 && j.runnable && !j.suspended && j.gang == 0 && enforcer.confines() &&
                     j.progress.phase == proto::Phase::baseline && asked < j.allocation;
  const int request = valid ? asked : 0;
  if (request == j.narrow_request) return false;
  const int before = running_set(j, j.allocation, j.cpus).first;
  j.narrow_request = request;
  const auto [n, set] = running_set(j, j.allocation, j.cpus);
  if (n == before) return false;
  publish_and_apply(enforcer, j, before, j.allocation, j.cpus);
  const std::string reason =
      request != 0 ? "baseline by narrowing: " + std::to_string(n) + " of its " + std::to_string(j.allocation) +
                         " CPU(s) [" + set.to_string() + "], its team unchanged"
                   : "baseline by narrowing done: its " + std::to_string(j.allocation) + " CPU(s) back";
  remember_why(j, t, "baseline", before, n, reason);
  COSCHED_INFO(policy, "job {}: {} → {} CPU(s) ({})", j.id, before, n, reason);
  return true;
}

NarrowPoll::~NarrowPoll() {
  if (fd_ >= 0) ::close(fd_);
}

Status NarrowPoll::open() {
  fd_ = ::timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
  if (fd_ < 0) return make_error(Errc::io_error, std::string("event loop setup: ") + std::strerror(errno));
  return {};
}

void NarrowPoll::drain() const {
  std::uint64_t ticks;
  while (::read(fd_, &ticks, sizeof ticks) > 0) {
  }
}

void NarrowPoll::arm(const JobTable& jobs) {
  const bool wanted =
      std::any_of(jobs.begin(), jobs.end(), [](const auto& kv) { return kv.second.narrow_request != 0; });
  if (wanted == armed_) return;
  itimerspec t{};
  if (wanted) t.it_interval.tv_nsec = t.it_value.tv_nsec = kNarrowPollNs;
  ::timerfd_settime(fd_, 0, &t, nullptr);  // all zero: disarmed
  armed_ = wanted;
}

}  // namespace cosched::rm
