// The decision core's inputs, written by cosched-rm --core-trace and replayed by cosched-sim --replay-core:
// the test that the daemon and the simulator cannot drift (issue 49) gives the core, as the simulator calls
// it, the very sequence the daemon gave it, and compares the two decision logs.
//
// JSON lines. The first names the machine and the policy; then, in the daemon's order:
//   {"decide": SNAPSHOT, "jobs": [CORE JOB...], "stopped": [ID...], "may_start_before": B, "hold": TEXT|null}
//   {"forget": ID}                                      the policy forgets a departed job
//   {"policy": NAME, "same": B, "params": [[K, V]...]}  cosched-ctl policy/set (with_params or make_policy)
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "policies/registry.hpp"
#include "policies/snapshot.hpp"
#include "rm/decision/decision_core.hpp"

namespace cosched::rm {

nlohmann::json trace_header(const CoreMachine& m, const policy::Machine& view, const std::string& policy,
                            const policy::ParamList& params);
nlohmann::json trace_decide(const policy::Snapshot& s, const std::vector<CoreJob>& jobs,
                            const std::vector<policy::JobId>& stopped, bool may_start_before,
                            const std::optional<std::string>& hold);

// Reads them back; a record that does not parse is an error naming what is wrong (json's own message).
CoreMachine core_machine_from(const nlohmann::json& header);
policy::Machine machine_view_from(const nlohmann::json& header);
policy::Snapshot snapshot_from(const nlohmann::json& j);
std::vector<CoreJob> core_jobs_from(const nlohmann::json& j);
policy::ParamList params_from(const nlohmann::json& j);

}  // namespace cosched::rm
