// Control requests (cosched-ctl, qsubmit) parsed and type-checked in one place, before the daemon acts on
// them. Every field a client may send is checked here for presence and JSON type; an error names the field.
// Nothing here throws, so a request of any shape can only ever produce a typed request or one error
// (tests/fuzz/fuzz_ctl_request.cpp holds it to that).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "cosched/error.hpp"
#include "policies/registry.hpp"
#include "policies/snapshot.hpp"

namespace cosched::rm {

enum class CtlCmd { status, may_start, shutdown, decisions, policies, why, policy, set, cluster_local, cluster_switch,
                    release, expect, report };

struct CtlRequest {
  CtlCmd cmd = CtlCmd::status;
  std::string name;          // policy: the policy to switch to (non-empty)
  policy::ParamList params;  // policy, set: NAME=VALUE pairs, values as text
  double since = -1;         // decisions: entries with t > since
  policy::JobId job = 0;     // why, release, report: the job
  int queued = -1;           // may_start: jobs waiting in the asking queuing system (-1: not said)
  int starting = -1;         // may_start: jobs it started that may not have registered yet (-1: not said)
  std::vector<policy::JobId> order;  // cluster_switch: this node's jobs in the cluster's agreed order
  std::int64_t slurm_job_id = -1;    // expect: the Slurm job starting on this node (its prolog says so)
};

// Parses one control request payload (a JSON object {"cmd": ..., ...}).
Result<CtlRequest> parse_ctl_request(std::string_view payload);

// What a refusal calls the command: "shut the RM down", "switch the policy", "set parameters", ...
constexpr const char* ctl_command_name(CtlCmd c) noexcept {
  switch (c) {
    case CtlCmd::shutdown: return "shut the RM down";
    case CtlCmd::policy: return "switch the policy";
    case CtlCmd::set: return "set policy parameters";
    case CtlCmd::cluster_switch: return "switch the cluster's gang (cosched-cluster)";
    case CtlCmd::expect: return "announce a starting Slurm job";
    case CtlCmd::release: return "release another user's job";
    default: return "use this command";
  }
}

// The command list shown when `cmd` is unknown.
inline constexpr std::string_view kCtlCommands =
    "status, may_start, policy, set, why, report, release, decisions, policies, shutdown, cluster_local, cluster_switch, "
    "expect";

}  // namespace cosched::rm
