// The RM at a real-time priority (--rt-priority): among hundreds of runnable job threads a niceness of -10
// still leaves a status or registration request waiting for a CPU for hundreds of milliseconds
// (docs/performance.md, "The RM under load"). SCHED_FIFO lets the RM preempt jobs the moment a peer
// writes to it. The RM blocks in epoll between events, so it takes a CPU only for the little work it does.
//
// A real-time task that spins by mistake would take a CPU from every job, so the priority is guarded:
// RLIMIT_RTTIME sends SIGXCPU once the RM has run kRtSoftLimit without a blocking call, and the handler
// puts it back to normal scheduling at once (the event is logged from the loop); the hard limit kills an RM
// whose handler could not run, and the guard then releases the jobs as for any RM death.
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "cosched/log.hpp"
#include "realtime.hpp"

namespace cosched::rm {

namespace {

// Our choice: the longest the RM legitimately runs without blocking is one decision with every job's
// confinement rewritten (about 20 ms at 256 jobs on this project's development machine, docs/performance.md
// "Policy step cost"); ten times that leaves room for a slow machine while bounding what a runaway RM
// takes from the jobs on its CPU.
constexpr rlim_t kRtSoftLimitUs = 200'000;
constexpr rlim_t kRtHardLimitUs = 2'000'000;

volatile sig_atomic_t g_rt_demoted = 0;

extern "C" void on_rttime_exceeded(int /*sig*/) {
  // Async-signal-safe: a plain system call. Leaving SCHED_FIFO needs no privilege.
  sched_param p{};
  p.sched_priority = 0;
  ::sched_setscheduler(0, SCHED_OTHER | SCHED_RESET_ON_FORK, &p);
  g_rt_demoted = 1;
}

}  // namespace

void RealtimePriority::enter(int priority) {
  if (priority <= 0) return;
  struct sigaction sa{};
  sa.sa_handler = &on_rttime_exceeded;
  sigemptyset(&sa.sa_mask);
  rlimit rl{kRtSoftLimitUs, kRtHardLimitUs};
  if (::sigaction(SIGXCPU, &sa, nullptr) != 0 || ::setrlimit(RLIMIT_RTTIME, &rl) != 0) {
    COSCHED_WARN(rm, "--rt-priority {}: cannot set the RLIMIT_RTTIME guard ({}); staying at normal priority",
                 priority, std::strerror(errno));
    return;
  }
  // SCHED_RESET_ON_FORK: what the RM starts (scontrol, calibration runs) gets normal scheduling.
  sched_param p{};
  p.sched_priority = priority;
  if (::sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK, &p) != 0) {
    COSCHED_WARN(rm, "--rt-priority {}: {}; staying at normal priority", priority, std::strerror(errno));
    return;
  }
  active_ = true;
  COSCHED_INFO(rm, "running at SCHED_FIFO priority {} (back to normal after {} ms without blocking)",
               priority, kRtSoftLimitUs / 1000);
}

void RealtimePriority::check() {
  if (!active_ || g_rt_demoted == 0) return;
  active_ = false;
  COSCHED_ERROR(rm, "ran {} ms at real-time priority without blocking: back to normal scheduling for good",
                kRtSoftLimitUs / 1000);
}

}  // namespace cosched::rm
