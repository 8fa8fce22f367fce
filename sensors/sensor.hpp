// The sensor layer's one interface (docs/architecture.md, "Sensors"). Sensors are mechanisms: they turn
// what a job did over an interval into a rate — of memory traffic, or for the network sensor of MPI payload —
// and never decide anything (DESIGN rule 1).
//
// Each RM quantum the daemon (rm/daemon/sensing.cpp) — or the simulator (sim/contention.cpp) — builds one
// Interval per job that ran that whole quantum on an unchanged allocation, and hands them all to every
// backend at once: the counter-free estimate needs the whole co-running set, the others look at one job at a
// time. SensorSet (sensor_set.hpp) keeps, per job, the first backend's reading in a window of 5 samples and
// fills policy::JobView::bandwidth with it.
//
// Backends, in the order they are tried (SensorSet::make in the daemon, detect.hpp):
//   perf_event    hardware last-level-cache misses per thread × the line size (needs a PMU)
//   papi          PAPI_L3_TCM (else PAPI_L2_TCM) per thread × the line size (needs a PMU)
//   app-reported  bytes the program adds with cosched_report_bytes() (include/cosched/selfanalyzer.h)
//   counter-free  the SelfAnalyzer's iteration-time slowdown against the same job alone (counter_free.hpp)
//   replay        rates read from a file (tests, what-if runs)
// and, outside that chain, the network sensor (network.hpp): the PMPI wrappers' byte counts, BW^N of MemBUS.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string_view>
#include <vector>

#include "cosched/error.hpp"
#include "policies/snapshot.hpp"

namespace cosched::sensors {

// What one job did during one sampling interval [start, end], which it ran all of, on `threads` CPUs.
struct Interval {
  policy::JobId id = 0;
  pid_t pid = 0;               // 0 in the simulator: the PMU backends have nothing to read there
  double start = 0;            // seconds, the RM's time base
  double end = 0;
  double since_arrival = 0;    // end − the job's admission (replay files are keyed by it)
  int threads = 1;             // its allocation during the interval
  bool reports_bytes = false;  // the program has called cosched_report_bytes (ever)
  double bytes = 0;            // bytes it reported during the interval
  double iteration_s = 0;      // mean clean iteration time during the interval (SelfAnalyzer), net of the
                               // time its threads waited for a CPU; 0 unknown
  int team = 0;                // the team size of those iterations
  double cpu_share = 1;        // the share of those iterations' time the threads were not waiting for a CPU
  bool counts_network = false; // the PMPI wrappers count this process's MPI payload (an MPI rank that has
                               // sent or received anything)
  double net_bytes = 0;        // MPI payload it sent and received during the interval (bytes out + in)

  [[nodiscard]] double length() const { return end - start; }
};

// One backend's verdict on one job for one interval.
struct Reading {
  policy::JobId id = 0;
  bool has_rate = false;       // false: only a slowdown (an uncalibrated counter-free estimate)
  double bytes_per_s = 0;      // memory traffic (the network sensor: MPI payload) of the job over the interval
  double slowdown = 0;         // counter-free: iteration time / alone at the same team; 0 unknown

  // A measured traffic rate (every backend but the uncalibrated counter-free one).
  static Reading rate(policy::JobId job, double bytes_per_s) { return {job, true, bytes_per_s, 0}; }
};

class Backend {
 public:
  virtual ~Backend() = default;
  Backend() = default;
  Backend(const Backend&) = delete;
  Backend& operator=(const Backend&) = delete;

  // The name status, logs and JobView::bandwidth.source use.
  [[nodiscard]] virtual std::string_view name() const = 0;
  // Whether it can measure any job without the program's help (everything but app-reported). The first
  // such backend of the chain is "the" sensor that `cosched-ctl status` names.
  [[nodiscard]] virtual bool serves_every_job() const { return true; }
  // Caller: the daemon when a job is admitted / leaves. PMU backends start and stop counting its threads
  // here; a failure is logged by the caller and the job simply gets no reading from this backend.
  virtual Status attach(policy::JobId /*id*/, pid_t /*pid*/) { return {}; }
  virtual void forget(policy::JobId /*id*/) {}
  // Caller: the daemon when an interval begins for a job (it runs now, on the allocation the interval will
  // have); `now` is that interval's Interval::start. Backends that read counters take their start value here.
  virtual void open(policy::JobId /*id*/, double /*now*/) {}
  // Caller: SensorSet::sample, once per quantum. `jobs` ended at the same instant and ran all of their
  // intervals side by side (the co-running set). Appends a Reading for each job it can say something about.
  virtual void sample(const std::vector<Interval>& jobs, std::vector<Reading>& out) = 0;
};

}  // namespace cosched::sensors
