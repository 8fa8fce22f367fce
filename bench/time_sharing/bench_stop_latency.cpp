// Stop → resume latency of a job, per stop backend (rm/enforce/stopper.hpp), at 1, 8 and 64 threads.
//
//   build/release/bench/time_sharing/bench_stop_latency [ROUNDS]     (as root for the cgroup freezers)
//
// A child process runs N threads that spin, each bumping its own counter in shared memory. Per round:
//   stop:   from the stop request until the kernel reports every thread held (Stopper::stopped: the
//           freezer's own report, or every thread in state T);
//   resume: from the resume request until the first thread's counter moved (the job runs again), and
//           until every thread's did (each thread ran: with more threads than CPUs this is the kernel's
//           round over all of them, not the backend).
// The bench polls with 20 us sleeps, so that its own polling leaves the CPUs to the job and the kernel.
// Medians and 90th percentiles over ROUNDS rounds (default 50), in microseconds.
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "rm/enforce/stopper.hpp"
#include "rm/enforce/guard.hpp"
#include "rm/job/job.hpp"

namespace {

using Clock = std::chrono::steady_clock;

struct alignas(64) Counter {
  std::atomic<std::uint64_t> n{0};
};

pid_t spinning_child(int threads, Counter* counters) {
  pid_t pid = ::fork();
  if (pid != 0) return pid;
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([c = &counters[t]] {
      for (;;) c->n.fetch_add(1, std::memory_order_relaxed);
    });
  }
  for (auto& t : pool) t.join();
  ::_exit(0);
}

double us_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
}

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1))];
}

bool run(const char* kind, int threads, int rounds, cosched::rm::Guard& guard) {
  auto stopper = cosched::rm::make_stopper(kind, false, guard);
  if (!stopper) {
    std::printf("%-10s %3d threads: unavailable (%s)\n", kind, threads, stopper.error().message.c_str());
    return false;
  }
  auto* counters = static_cast<Counter*>(::mmap(nullptr, sizeof(Counter) * static_cast<std::size_t>(threads),
                                                PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  for (int t = 0; t < threads; ++t) new (&counters[t]) Counter{};
  cosched::rm::Job job;
  job.id = threads;
  job.pid = spinning_child(threads, counters);
  // Every thread running before the first round.
  for (int t = 0; t < threads; ++t) {
    while (counters[t].n.load(std::memory_order_relaxed) == 0) std::this_thread::yield();
  }
  std::vector<double> stop_us, first_us, resume_us;
  std::vector<std::uint64_t> seen(static_cast<std::size_t>(threads));
  for (int r = 0; r < rounds; ++r) {
    auto t0 = Clock::now();
    if (auto st = (*stopper)->stop(job); !st) {
      std::printf("%s: stop failed: %s\n", kind, st.error().message.c_str());
      break;
    }
    job.runnable = false;
    while (!(*stopper)->stopped(job)) ::usleep(20);
    stop_us.push_back(us_since(t0));
    for (int t = 0; t < threads; ++t) seen[static_cast<std::size_t>(t)] = counters[t].n.load(std::memory_order_relaxed);
    t0 = Clock::now();
    (void)(*stopper)->resume(job);
    job.runnable = true;
    auto moved = [&](int t) { return counters[t].n.load(std::memory_order_relaxed) != seen[static_cast<std::size_t>(t)]; };
    for (bool any = false; !any; ::usleep(20)) {
      for (int t = 0; t < threads && !any; ++t) any = moved(t);
    }
    first_us.push_back(us_since(t0));
    for (int t = 0; t < threads; ++t) {
      while (!moved(t)) ::usleep(20);
    }
    resume_us.push_back(us_since(t0));
    ::usleep(5000);
  }
  (*stopper)->release(job);
  ::kill(job.pid, SIGKILL);
  ::waitpid(job.pid, nullptr, 0);
  (*stopper)->shutdown();
  ::munmap(counters, sizeof(Counter) * static_cast<std::size_t>(threads));
  std::printf("| %s | %d | %.0f | %.0f | %.0f | %.0f | %.0f | %zu |\n", kind, threads, quantile(stop_us, 0.5),
              quantile(stop_us, 0.9), quantile(first_us, 0.5), quantile(first_us, 0.9), quantile(resume_us, 0.5),
              stop_us.size());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::max(1, std::atoi(argv[1])) : 50;
  cosched::rm::Guard guard;  // the stoppers announce to it; it thaws anything left if this program dies
  if (auto st = guard.start(); !st) {
    std::fprintf(stderr, "guard: %s\n", st.error().message.c_str());
    return 1;
  }
  std::printf("| backend | threads | stop median us | stop p90 | resume (first thread) median us | p90 | "
              "every thread ran, median us | rounds |\n|---|---|---|---|---|---|---|---|\n");
  for (const char* kind : {"cgroup-v2", "cgroup-v1", "signal"}) {
    for (int threads : {1, 8, 64}) {
      if (!run(kind, threads, rounds, guard)) break;
    }
  }
  guard.goodbye();
  return 0;
}
