// Control requests (cosched-ctl, qsubmit): JSON in, JSON out, one request per connection. A malformed
// request gets {"ok": false, "error": "..."} naming the field, and the RM carries on.
#include <unistd.h>

#include "cosched/log.hpp"
#include "daemon.hpp"
#include "policies/registry.hpp"

namespace cosched::rm {

namespace {

using nlohmann::json;

const char* phase_name(proto::Phase p) {
  switch (p) {
    case proto::Phase::none: return "none";
    case proto::Phase::detecting: return "detecting";
    case proto::Phase::baseline: return "baseline";
    case proto::Phase::measuring: return "measuring";
  }
  return "none";
}

json error_reply(const std::string& msg) { return {{"ok", false}, {"error", msg}}; }

// Reads {"params": {"k": "v" or number}} into a ParamList; errors name the key.
Result<policy::ParamList> params_of(const json& req) {
  policy::ParamList out;
  if (!req.contains("params")) return out;
  const auto& p = req.at("params");
  if (!p.is_object()) return make_error(Errc::invalid_argument, "field 'params' must be an object");
  for (const auto& [k, v] : p.items()) {
    if (v.is_string()) {
      out.emplace_back(k, v.get<std::string>());
    } else if (v.is_number()) {
      out.emplace_back(k, v.dump());
    } else {
      return make_error(Errc::invalid_argument, "parameter '" + k + "' must be a string or a number");
    }
  }
  return out;
}

}  // namespace

json Daemon::job_json(const Job& j) const {
  json o = {{"id", j.id},
            {"pid", j.pid},
            {"uid", j.uid},
            {"command", j.command},
            {"requested", j.request},
            {"allocated", j.allocation},
            {"cpus", j.cpus.to_vector()},
            {"cpu_list", j.cpus.to_string()},
            {"state", j.runnable ? "running" : "stopped"},
            {"policy_state", j.policy_state},
            {"arrival_s", j.arrival},
            {"regions", j.progress.regions},
            {"iterations", j.progress.iterations},
            {"team", j.progress.last_team},
            {"team_mode", proto::team_mode_name(j.progress.team_mode)},
            {"resizable", j.progress.team_mode == proto::TeamMode::resizable ||
                              j.progress.team_mode == proto::TeamMode::malleable},
            {"team_mismatches", j.progress.team_mismatches},
            {"measurement_restarts", j.progress.restarts},
            {"restart_reason", proto::measure_restart_name(j.progress.restart_reason)},
            {"cpu_wait", j.progress.cpu_wait >= 0 ? json(j.progress.cpu_wait) : json(nullptr)},
            {"contaminated_samples", j.progress.contaminated},
            {"phase", phase_name(j.progress.phase)},
            {"period", j.progress.period}};
  // The same keys for every job, null until the first report (and amdahl_f while no fit exists), so that
  // scripts reading status --json see one schema.
  const bool m = j.perf.valid;
  auto measured = [m](auto v) { return m ? json(v) : json(nullptr); };
  o["speedup"] = measured(j.perf.speedup);
  o["efficiency"] = measured(j.perf.efficiency);
  o["iteration_s"] = measured(j.perf.iteration_s);
  o["baseline_s"] = measured(j.perf.baseline_s);
  o["spread"] = measured(j.perf.spread);
  o["measured_cpus"] = measured(j.perf.cpus);
  o["samples"] = measured(j.perf.samples);
  o["reports"] = measured(j.perf.seq);
  o["amdahl_f"] = m && j.perf.amdahl_f >= 0 ? json(j.perf.amdahl_f) : json(nullptr);
  return o;
}

json Daemon::status_json() const {
  json params = json::object();
  for (const auto& p : policy_->params()) params[p.name] = p.value;
  json jobs = json::array();
  int allocated = 0;
  for (const auto& [id, j] : jobs_) {
    jobs.push_back(job_json(j));
    allocated += j.allocation;
  }
  return {{"ok", true},
          {"policy", policy_->name()},
          {"params", params},
          {"cpus", topo_.cpus().to_vector()},
          {"cpu_list", topo_.cpus().to_string()},
          {"machine", {{"cpus", topo_.machine().cpus}, {"cores", topo_.machine().cores},
                       {"packages", topo_.machine().packages}, {"threads_per_core", topo_.machine().threads_per_core}}},
          {"enforcement", enforcer_->name()},
          {"quantum_ms", cfg_.quantum_ms},
          {"baseline", baseline_wanted()},
          {"uptime_s", now()},
          {"rm_pid", ::getpid()},
          {"may_start", may_start_},
          {"may_start_reason", may_start_reason_},
          {"allocated", allocated},
          {"decisions", decisions_},
          {"jobs", jobs}};
}

void Daemon::handle_ctl(Conn& c, const wire::Frame& f) {
  json req = json::parse(f.payload, nullptr, false);
  auto reply = [&](const json& r) {
    c.closing = true;
    queue_reply(c, proto::MsgType::ctl_reply, r.dump(-1, ' ', false, json::error_handler_t::replace));
  };
  if (req.is_discarded() || !req.is_object()) {
    COSCHED_WARN(ctl, "pid {}: control request is not a JSON object", c.pid);
    return reply(error_reply("request is not a JSON object"));
  }
  if (!req.contains("cmd") || !req["cmd"].is_string()) return reply(error_reply("missing string field 'cmd'"));
  const std::string cmd = req["cmd"];
  COSCHED_DEBUG(ctl, "pid {}: {}", c.pid, cmd);

  if (cmd == "status") return reply(status_json());
  if (cmd == "may_start") {
    return reply({{"ok", true}, {"may_start", may_start_}, {"reason", may_start_reason_}, {"running", jobs_.size()}});
  }
  if (cmd == "shutdown") {
    COSCHED_INFO(ctl, "shutdown requested by pid {}", c.pid);
    running_ = false;
    return reply({{"ok", true}});
  }
  if (cmd == "decisions") {
    // The decision log's recent entries (newest last) with t > since: how qsubmit records the decisions of
    // an RM it did not start.
    double since = -1;
    if (req.contains("since")) {
      if (!req["since"].is_number()) return reply(error_reply("field 'since' must be a number (seconds)"));
      since = req["since"];
    }
    json out = json::array();
    for (const auto& e : recent_decisions_) {
      if (e.value("t", 0.0) > since) out.push_back(e);
    }
    return reply({{"ok", true}, {"now", now()}, {"decisions", out}});
  }
  if (cmd == "policies") {
    json list = json::array();
    for (const auto& p : policy::list_policies()) list.push_back({{"name", p.name}, {"summary", p.summary}});
    return reply({{"ok", true}, {"policies", list}});
  }
  if (cmd == "why") {
    if (!req.contains("job") || !req["job"].is_number_integer()) return reply(error_reply("field 'job' must be an integer"));
    policy::JobId id = req["job"];
    const std::deque<WhyEntry>* why = nullptr;
    if (auto it = jobs_.find(id); it != jobs_.end()) why = &it->second.why;
    if (auto it = departed_why_.find(id); why == nullptr && it != departed_why_.end()) why = &it->second;
    if (why == nullptr) return reply(error_reply("no job " + std::to_string(id)));
    json entries = json::array();
    for (const auto& w : *why) {
      entries.push_back({{"t", w.at}, {"event", w.event}, {"from", w.from}, {"to", w.to}, {"reason", w.reason}});
    }
    return reply({{"ok", true}, {"job", id}, {"running", jobs_.count(id) != 0}, {"decisions", entries}});
  }
  if (cmd == "policy" || cmd == "set") {
    auto params = params_of(req);
    if (!params) return reply(error_reply(params.error().message));
    std::string name = cmd == "set" ? std::string(policy_->name()) : req.value("name", std::string());
    if (name.empty()) return reply(error_reply("field 'name' (the policy) is required"));
    if (name == policy_->name()) {
      // Same policy: change parameters in place, keeping its memory of the jobs (PDPA states).
      for (const auto& [k, v] : *params) {
        if (auto st = policy_->set_param(k, v); !st) return reply(error_reply(st.error().message));
      }
    } else {
      auto p = policy::make_policy(name, topo_.machine(), *params);
      if (!p) return reply(error_reply(p.error().message));
      COSCHED_INFO(ctl, "policy {} → {}", policy_->name(), name);
      policy_ = std::move(*p);
      for (auto& [id, j] : jobs_) j.arena->set_baseline_wanted(baseline_wanted());
    }
    decide(policy::Event::param_change, -1);
    return reply(status_json());
  }
  return reply(error_reply("unknown command '" + cmd + "' (status, may_start, policy, set, why, decisions, policies, shutdown)"));
}

}  // namespace cosched::rm
