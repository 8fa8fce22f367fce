// Counting a hardware event in every thread of another process: what the perf_event and PAPI backends
// share. Threads come and go, so the list in /proc/PID/task is read again at every interval's start and end;
// a thread that ended keeps its final count in the job's total. A job's rate over an interval is the
// growth of its total between open() and sample(), times the bytes each count stands for (a cache line).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "sensor.hpp"

namespace cosched::sensors {

class PerThreadCounting : public Backend {
 public:
  Status attach(policy::JobId id, pid_t pid) override;
  void forget(policy::JobId id) override;
  void open(policy::JobId id, double now) override;
  void sample(const std::vector<Interval>& jobs, std::vector<Reading>& out) override;
  ~PerThreadCounting() override = default;

 protected:
  explicit PerThreadCounting(double bytes_per_count) : bytes_per_count_(bytes_per_count) {}
  // One thread's counter: start counting in `tid` (a handle >= 0, or an error), read it, stop it.
  virtual Result<long> start_thread(pid_t tid) = 0;
  virtual std::optional<std::uint64_t> read_thread(long handle) = 0;
  virtual void stop_thread(long handle) = 0;
  // The subclass's destructor calls it while its primitives still exist.
  void stop_all();

 private:
  struct Job {
    pid_t pid = 0;
    std::map<pid_t, long> threads;  // tid → handle
    std::map<pid_t, std::uint64_t> last;  // tid → its latest count
    std::uint64_t retired = 0;      // final counts of threads that ended
    std::optional<std::uint64_t> opened_at;  // the total when the interval opened
    double opened_t = -1;
  };
  std::uint64_t total(Job& j);  // rescans the threads, reads every counter
  double bytes_per_count_;
  std::map<policy::JobId, Job> jobs_;
};

}  // namespace cosched::sensors
