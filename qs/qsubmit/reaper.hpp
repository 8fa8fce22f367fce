// Reaping jobs off the replay loop. A job's end is what its response time stops at, and the moment it can be
// seen is when the whole process has exited: waitid(WNOWAIT) says so without reaping it. Reaping itself can
// take seconds on Linux: the kernel flushes the process's /proc entries in release_task, and beside jobs
// whose waiting threads sleep at every barrier (libomp's blocktime 0) a reap of a cosched job took up to 19 s
// of the reaper's CPU time on this guest (docs/performance.md, "Reaping a job beside barrier-heavy jobs";
// bench/oversubscribed/reap_cost.py). Done in the replay loop, that stall delayed every other job's end and
// every admission behind it. So the loop notes ends with ended_status() and hands the pid to a Reaper.
#pragma once

#include <sys/types.h>

#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>

namespace cosched::qsubmit {

// The exit status of child `pid` if it has ended, in the shell's convention (see try_reap), leaving it
// waitable; 255 when it is not our child (any more). Never blocks.
std::optional<int> ended_status(pid_t pid);

// Reaps the children handed to it, one after another, on a thread of its own (signals blocked there, so the
// replay loop's SIGCHLD wake-ups stay on the main thread). The destructor waits for every pid handed over.
class Reaper {
 public:
  Reaper() = default;
  Reaper(const Reaper&) = delete;
  Reaper& operator=(const Reaper&) = delete;
  ~Reaper();

  // `pid` has ended (ended_status said so): reap it, soon, not on the caller's thread.
  void reap(pid_t pid);
  // Returns once every pid handed over so far is reaped.
  void drain();

 private:
  void run();

  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<pid_t> pending_;
  int busy_ = 0;  // pids taken from pending_ and not reaped yet
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace cosched::qsubmit
