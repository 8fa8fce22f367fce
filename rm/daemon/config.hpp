// cosched-rm's configuration, filled from the command line (rm/daemon/main.cpp: one options table).
#pragma once

#include <string>
#include <vector>

#include "cosched/cpuset.hpp"
#include "policies/registry.hpp"

namespace cosched::rm {

struct Config {
  std::string policy{policy::kDefaultPolicy};
  policy::ParamList params;
  CpuSet cpus;                  // empty: every CPU this process may use
  std::string socket;
  std::string socket_group;     // allow this group to connect (mode 0660), empty: owner only (0600)
  bool all_users = false;       // any local user may connect (mode 0666): a node's RM run by root
  std::string admin_group;      // members may change the policy or parameters and shut the RM down
  int quantum_ms = 100;
  int nice = -10;                 // the RM's niceness when permitted (raise_priority)
  int rt_priority = 0;            // SCHED_FIFO priority of the RM (realtime.cpp); 0: normal scheduling
  int client_timeout_ms = 10000;  // a peer that leaves a frame half-sent, or says nothing, this long is dropped
  std::string decision_log;     // JSON lines, empty: none
  std::string core_trace;       // the decision core's inputs, JSON lines (rm/decision/core_trace.hpp); empty: none
  std::string accounting;       // per-job records (accounting.hpp); empty: next to the socket, "none": off
  std::string enforce = "auto";
  std::string cpu_share = "job";  // how jobs sharing a CPU divide it: job (a cpu cgroup each), thread
  std::string stop_with = "auto";  // time sharing's backend: auto, cgroup-v2, cgroup-v1, signal
  std::string synthetic_topology;  // hwloc synthetic description instead of the real machine
  int baseline_cpus = 0;        // the SelfAnalyzer's baseline allocation, published to jobs; 0: auto, a
                                // quarter of each job's request (baseline_cpus_for)
  std::string baseline = "auto";  // auto: jobs measure a baseline when the policy uses speedups; always; never
  bool foreground = false;
  std::string messages;         // where a daemonized RM writes its log lines
  std::string log_level = "info";
  // Sensors (sensors/detect.hpp): which backends, and the counter-free estimate's calibration.
  std::string sensor = "auto";
  std::vector<std::string> also_sensor;  // backends run for comparison only (status `estimates`)
  std::string papi_event;       // a PAPI event instead of the presets; empty: PAPI_L3_TCM, PAPI_L2_TCM
  double mem_bandwidth = 0;     // bytes/s all CPUs sustain streaming (also Machine::mem_bandwidth); 0 unknown
  double thread_bandwidth = 0;  // bytes/s one streaming thread (BBMA) moves alone; 0 unknown
  double contention = 1;        // slowdown per unit of excess demand of a fully memory-bound job
  // Slurm (docs/slurm.md): the node whose admission the policy's may_start gates (drain/resume); empty: none.
  std::string slurm_node;
  std::string scontrol = "scontrol";  // the program that drains and resumes it, and sets AdminComment (PATH)
  bool slurm_comment = true;  // a departing Slurm job's CPU report goes to its AdminComment (rm/enforce/slurm_node.hpp)
  // Progress rates for the co-scheduling policies (sensors/rates.hpp): auto, app-work, iterations, regions,
  // replay:FILE.
  std::string rate_sensor = "auto";
  // Where those three come from when not given as options (rm/daemon/sensing.cpp, resolve_calibration):
  // measured at start (--calibrate; saved to calibration_file when one is named too) or read from
  // calibration_file.
  bool calibrate = false;
  std::string calibration_file;
  double calibrate_seconds = 1;  // each calibration run
  bool mem_bandwidth_given = false, thread_bandwidth_given = false, contention_given = false;
};

// The baseline a job of `request` CPUs measures. The PDPA paper (§3.1) says only "a small number of
// processors"; our choice for auto is a quarter of the request, at least 1: a 1-CPU baseline of a 16-CPU
// job ran 15 of its 16 CPUs idle for its first iterations (bt.A: 1.43x native alone), and the Amdahl
// normalisation (selfanalyzer/speedup.hpp) still gives the speedup against one CPU.
inline int baseline_cpus_for(const Config& cfg, int request) {
  return cfg.baseline_cpus > 0 ? cfg.baseline_cpus : (request / 4 > 1 ? request / 4 : 1);
}

}  // namespace cosched::rm
