// `cosched-sim replay-core TRACE`: the decision core's inputs as cosched-rm --core-trace recorded them, given
// to the core as the simulator calls it (Simulator::decide: propose, the stops, settle), with the policy
// rebuilt from the trace. It writes the decision log the simulator would write for them; the test that the
// daemon and the simulator cannot drift compares it with the daemon's --log (tests/integration/
// test_core_replay.py).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <fstream>
#include <iostream>

#include "cosched/log.hpp"
#include "policies/registry.hpp"
#include "rm/decision/core_trace.hpp"
#include "sim/cli/options.hpp"

namespace cosched::sim {

namespace {

int replay_fail(const std::string& msg, int code = kExitBadInput) {
  std::cerr << "cosched-sim replay-core: " << msg << "\n";
  return code;
}

// The processes the daemon stopped are not runnable when it settles (Daemon::decide).
void apply_stops(std::vector<rm::CoreJob>& jobs, const std::vector<policy::JobId>& stopped) {
  for (rm::CoreJob& j : jobs) {
    if (std::find(stopped.begin(), stopped.end(), j.id) == stopped.end()) continue;
    for (rm::CoreProcess& p : j.processes) p.runnable = false;
  }
}

}  // namespace

int replay_core_main(int argc, char** argv) {
  std::string trace_path;
  std::string out_path = "-";
  CLI::App app{
      "cosched-sim replay-core: replays a cosched-rm --core-trace through the decision core as cosched-sim calls\n"
      "it, and writes the decision log it gives (JSON lines, cosched-rm --log's records without pid and Slurm\n"
      "job id). Exit status: 0 done, 1 the log could not be written, 2 bad input."};
  app.add_option("trace", trace_path, "the trace cosched-rm --core-trace wrote")->required();
  app.add_option("--out,-o", out_path, "where to write the decision log ('-': standard output)")->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? kExitOk : kExitBadInput;
  }

  std::ifstream in(trace_path);
  if (!in) return replay_fail("cannot read " + trace_path);
  std::ofstream file;
  if (out_path != "-") {
    file.open(out_path, std::ios::trunc);
    if (!file) return replay_fail("cannot write " + out_path, kExitOutputFailed);
  }
  std::ostream& out = out_path == "-" ? std::cout : file;

  std::string line;
  std::size_t line_no = 0;
  std::unique_ptr<policy::Policy> pol;
  rm::DecisionCore core;
  policy::Machine machine;
  try {
    while (std::getline(in, line)) {
      ++line_no;
      if (line.empty()) continue;
      const nlohmann::json r = nlohmann::json::parse(line);
      if (line_no == 1) {
        core = rm::DecisionCore(rm::core_machine_from(r));
        machine = rm::machine_view_from(r);
        auto p = policy::make_policy(r.at("policy").get<std::string>(), machine, rm::params_from(r.at("params")));
        if (!p) return replay_fail(fmt::format("{}:1: {}", trace_path, p.error().message));
        pol = std::move(*p);
      } else if (r.contains("forget")) {
        pol->forget(r["forget"].get<policy::JobId>());
      } else if (r.contains("policy")) {
        const auto params = rm::params_from(r.at("params"));
        auto next = r.at("same").get<bool>() ? policy::with_params(*pol, params)
                                             : policy::make_policy(r["policy"].get<std::string>(), machine, params);
        if (!next) return replay_fail(fmt::format("{}:{}: {}", trace_path, line_no, next.error().message));
        pol = std::move(*next);
      } else {
        const policy::Snapshot s = rm::snapshot_from(r.at("decide"));
        std::vector<rm::CoreJob> jobs = rm::core_jobs_from(r.at("jobs"));
        const rm::Proposal p = core.propose(*pol, s, jobs);
        apply_stops(jobs, r.at("stopped").get<std::vector<policy::JobId>>());
        std::optional<std::string> hold;
        if (!r.at("hold").is_null()) hold = r["hold"].get<std::string>();
        const rm::Settled st =
            core.settle(p, jobs, {std::string(pol->name()), r.at("may_start_before").get<bool>(), hold, true});
        if (!st.noteworthy) continue;
        nlohmann::json entry = st.record;
        entry["jobs"] = st.entries;
        out << entry.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
      }
    }
  } catch (const std::exception& e) {
    return replay_fail(fmt::format("{}:{}: {}", trace_path, line_no, e.what()));
  }
  if (line_no == 0) return replay_fail(trace_path + ": empty");
  out.flush();
  if (!out) return replay_fail("cannot write " + out_path, kExitOutputFailed);
  return kExitOk;
}

}  // namespace cosched::sim
