// cosched-rm's configuration, filled from the command line (rm/main.cpp: one options table).
#pragma once

#include <string>
#include <vector>

#include "cosched/cpuset.hpp"
#include "policies/registry.hpp"

namespace cosched::rm {

struct Config {
  std::string policy = "equip";
  policy::ParamList params;
  CpuSet cpus;                  // empty: every CPU this process may use
  std::string socket;
  std::string socket_group;     // allow this group to connect (mode 0660), empty: owner only (0600)
  int quantum_ms = 100;
  int nice = -10;                 // the RM's niceness when permitted (raise_priority)
  int client_timeout_ms = 10000;  // a peer that leaves a frame half-sent, or says nothing, this long is dropped
  std::string decision_log;     // JSON lines, empty: none
  std::string accounting;       // per-job records (accounting.hpp); empty: next to the socket, "none": off
  std::string enforce = "auto";
  std::string synthetic_topology;  // hwloc synthetic description instead of the real machine
  int baseline_cpus = 1;        // the SelfAnalyzer's baseline allocation, published to jobs
  std::string baseline = "auto";  // auto: jobs measure a baseline when the policy uses speedups; always; never
  bool foreground = false;
  std::string messages;         // where a daemonized RM writes its log lines
  std::string log_level = "info";
};

}  // namespace cosched::rm
