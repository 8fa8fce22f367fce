// Control requests (cosched-ctl, qsubmit): JSON in, JSON out, one request per connection. A malformed
// request gets {"ok": false, "error": "..."} naming the field, and the RM carries on.
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "cosched/log.hpp"
#include "ctl_request.hpp"
#include "daemon.hpp"
#include "policies/registry.hpp"
#include "rm/accounting/cpu_report.hpp"

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

// CPU time the process received so far (user + system, all its threads, live and exited), in seconds;
// null when /proc cannot tell (the process is gone).
json cpu_seconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  std::getline(in, stat);
  const auto close = stat.rfind(')');
  if (close == std::string::npos) return nullptr;
  std::istringstream rest(stat.substr(close + 2));
  std::string field;
  unsigned long long utime = 0, stime = 0;
  // Fields after comm: state(3) ... utime(14) stime(15).
  for (int n = 3; n <= 15 && (rest >> field); ++n) {
    if (n == 14) utime = std::stoull(field);
    if (n == 15) stime = std::stoull(field);
  }
  return static_cast<double>(utime + stime) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

// True once the job has a period (of regions, or of constructs inside a long region); false when the sampler
// saw nothing repeat for 2 s, or, from a libcosched without the sampler, no period 1 s after arrival (PDPA's
// default unmeasured_after_s, our choice); null before that.
json iterative_json(const Job& j, double now) {
  if (j.progress.period > 0 || j.efficiency.structure == proto::Structure::regions ||
      j.efficiency.structure == proto::Structure::constructs) {
    return true;
  }
  if (j.efficiency.structure == proto::Structure::none) return false;
  if (j.efficiency.ticks == 0 && now - j.arrival >= 1.0) return false;
  return nullptr;
}

// A job's speedup estimates in status: the one the policy uses, and both as the job published them.
void add_estimates(json& o, const Job& j) {
  // The same keys for every job, null until the first report (and amdahl_f while no fit exists), so that
  // scripts reading status --json see one schema.
  // These are the estimate the policy uses (rm/job/estimate.hpp): its kind says which of the two below it is.
  const bool m = j.perf.valid;
  auto measured = [m](auto v) { return m ? json(v) : json(nullptr); };
  o["speedup"] = measured(j.perf.speedup);
  o["efficiency"] = measured(j.perf.efficiency);
  o["iteration_s"] = m && j.perf.iteration_s > 0 ? json(j.perf.iteration_s) : json(nullptr);
  o["baseline_s"] = m && j.perf.baseline_s > 0 ? json(j.perf.baseline_s) : json(nullptr);
  o["spread"] = measured(j.perf.spread);
  o["measured_cpus"] = measured(j.perf.cpus);
  o["samples"] = measured(j.perf.samples);
  o["reports"] = measured(j.perf.seq);
  o["amdahl_f"] = m && j.perf.amdahl_f >= 0 ? json(j.perf.amdahl_f) : json(nullptr);
  o["estimate_kind"] = m ? json(policy::to_string(j.perf.kind)) : json(nullptr);
  o["confidence"] = measured(j.perf.confidence);
  o["estimate_note"] = j.estimate_note.empty() ? json(nullptr) : json(j.estimate_note);
  // Both estimates as the job published them (null until each has one): the waiting-time efficiency at the
  // CPUs it holds, and the SelfAnalyzer's measured speedup (`failed`: impossible, never given to the policy).
  const WaitingEstimate& w = j.efficiency.estimate;
  o["waiting_time"] = w.valid ? json{{"efficiency", w.efficiency},
                                     {"std_error", w.std_error},
                                     {"speedup", w.efficiency * w.cpus},
                                     {"cpus", w.cpus},
                                     {"intervals", w.intervals},
                                     {"window_s", w.window_s},
                                     {"cpu_wait", w.cpu_wait >= 0 ? json(w.cpu_wait) : json(nullptr)},
                                     {"reports", w.seq}}
                              : json(nullptr);
  o["waiting_time_pending"] = proto::efficiency_pending_name(j.efficiency.pending);
  o["state_samples"] = j.efficiency.ticks;
  const policy::Perf& ms = j.measured;
  o["measured_speedup"] = ms.seq > 0 && ms.cpus > 0 ? json{{"speedup", ms.speedup},
                                                         {"efficiency", ms.efficiency},
                                                         {"cpus", ms.cpus},
                                                         {"iteration_s", ms.iteration_s},
                                                         {"baseline_s", ms.baseline_s},
                                                         {"spread", ms.spread},
                                                         {"amdahl_f", ms.amdahl_f >= 0 ? json(ms.amdahl_f) : json(nullptr)},
                                                         {"reports", ms.seq},
                                                         {"failed", j.measured_failed}}
                                                   : json(nullptr);
}

}  // namespace

json Daemon::job_json(const Job& j) const {
  const auto [running, running_cpus] = running_set(j, j.allocation, j.cpus);
  json o = {{"id", j.id},
            {"pid", j.pid},
            {"uid", j.uid},
            {"command", j.command},
            {"requested", j.request},
            {"allocated", j.allocation},
            {"cpus", j.cpus.to_vector()},
            {"cpu_list", j.cpus.to_string()},
            // A baseline by narrowing (narrowing.cpp): the CPUs it runs on meanwhile; null when none.
            {"baseline_narrowed_to", running < j.allocation ? json(running_cpus.to_string()) : json(nullptr)},
            {"state", j.suspended ? "suspended" : j.runnable ? "running" : "stopped"},
            {"run_state", j.runnable ? "running" : "stopped"},
            {"stops", j.stops},
            {"stopped_s", j.stopped_s + (j.runnable ? 0.0 : now() - j.stopped_at)},
            {"cpu_s", cpu_seconds(j.pid)},
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
            // Why the job published no speedup (null: it did, or has nothing to compare yet).
            {"no_speedup", j.progress.no_speedup == proto::NoSpeedup::none
                               ? json(nullptr) : json(proto::no_speedup_name(j.progress.no_speedup))},
            {"cpu_wait", j.progress.cpu_wait >= 0 ? json(j.progress.cpu_wait) : json(nullptr)},
            {"contaminated_samples", j.progress.contaminated},
            {"phase", phase_name(j.progress.phase)},
            // Its baseline waits while it is alone (--baseline auto; BaselineSteering::follow_sharing).
            {"baseline_waits", baseline_.wanted(*policy_) && baseline_.waits()},
            {"period", j.progress.period},
            // Whether the SelfAnalyzer found an iterative structure: true once it has a period; false when
            // it has none 1 s after arrival (one long region, or nothing that repeats: PDPA then counts the
            // job as unmeasured, docs/policies.md); null before that. 1 s: PDPA's default
            // unmeasured_after_s (our choice).
            // Inside one long region the period is one of constructs (structure); "none" says the sampler saw
            // nothing repeat in either sequence for 2 s.
            {"iterative", iterative_json(j, now())},
            {"structure", proto::structure_name(j.efficiency.structure)},
            {"structure_period", j.efficiency.period},
            {"construct_iterations", j.efficiency.construct_iterations},
            // A process of a job of several (an MPI rank): the job id all its processes share, its rank and the
            // launcher's key; for a job of its own, job = id and rank/job_key are null.
            {"job", view_id(j)},
            {"rank", j.gang != 0 ? json(j.rank) : json(nullptr)},
            {"job_key", j.gang != 0 ? json(j.job_key) : json(nullptr)},
            {"slurm_job_id", slurm_id_json(j)},
            // The PMPI wrappers' exact counts (0 for a program that is no MPI rank) and the network sensor's
            // latest rate (null before its first sample).
            {"net_bytes_out", j.progress.net_bytes_out},
            {"net_bytes_in", j.progress.net_bytes_in},
            {"net_messages", j.progress.net_messages},
            {"net_bytes_per_s", nullptr}};
  if (const policy::Bandwidth n = sensing_.sensors().network(j.id); n.valid()) o["net_bytes_per_s"] = n.latest().bytes_per_s;
  add_estimates(o, j);
  // While the job reports no speedup (no_speedup), its latest window's iteration time is still a
  // measurement: shown with its team next to the last report's fields, which stay one consistent report
  // (docs/selfanalyzer.md, "A speedup is a measurement"). Null when the job reports.
  const bool u = j.progress.unreported_s > 0;
  o["unreported_iteration_s"] = u ? json(j.progress.unreported_s) : json(nullptr);
  o["unreported_cpus"] = u ? json(j.progress.unreported_cpus) : json(nullptr);
  o["bandwidth"] = sensing_.sensors().job_json(j.id);
  // The latest progress-rate sample (sensors/rates.hpp), null until the first.
  if (j.rate.valid()) {
    o["rate"] = {{"per_s", j.rate.latest.per_s},
                 {"source", j.rate.latest.source},
                 {"seconds", j.rate.latest.seconds},
                 {"at", j.rate.latest.at},
                 {"with", j.rate.latest.with},
                 {"samples", j.rate.seq}};
  } else {
    o["rate"] = nullptr;
  }
  // The memory traffic the program reported through cosched_report_bytes, in all since it started (null when
  // it never called it): what the app-reported sensor turns into bytes/s, as the job wrote it.
  const ArenaSensors c = j.arena->read_sensors();
  o["bytes_reported"] = c.reports_bytes ? json(c.bytes) : json(nullptr);
  return o;
}

// What a co-scheduling policy learned (cosched-ctl pairs reads it from status --json).
static json pairs_json(const policy::PairsReport& r) {
  json entries = json::array();
  for (const auto& e : r.entries) {
    entries.push_back({{"job", e.job}, {"with", e.with}, {"slowdown", e.slowdown}, {"samples", e.samples}, {"at", e.at}});
  }
  json jobs = json::array();
  for (const auto& j : r.jobs) {
    jobs.push_back({{"id", j.id},
                    {"progress", j.progress},
                    {"alone_per_s", j.alone > 0 ? json(j.alone) : json(nullptr)},
                    {"source", j.source},
                    {"quanta_since_estimate", j.since_estimate},
                    {"expired", j.expired},
                    {"last_ratio", j.last_ratio >= 0 ? json(j.last_ratio) : json(nullptr)}});
  }
  return {{"model", r.model},
          {"entries", entries},
          {"jobs", jobs},
          {"exploration", {{"quanta", r.quanta}, {"explored", r.explored}, {"predicted_cost", r.exploration_cost},
                           {"every", r.explore_every}}}};
}

json Daemon::status_json() const {
  json params = json::object();
  for (const auto& p : policy_->params()) params[p.name] = p.value;
  json jobs = json::array();
  int allocated = 0;
  for (const auto& [id, j] : jobs_) {
    jobs.push_back(job_json(j));
    if (j.runnable && !j.suspended) allocated += j.allocation;
  }
  return {{"ok", true},
          {"policy", policy_->name()},
          {"params", params},
          {"cpus", topo_.cpus().to_vector()},
          {"cpu_list", topo_.cpus().to_string()},
          {"machine", {{"cpus", topo_.machine().cpus}, {"cores", topo_.machine().cores},
                       {"packages", topo_.machine().packages}, {"threads_per_core", topo_.machine().threads_per_core},
                       {"mem_bandwidth", topo_.machine().mem_bandwidth > 0 ? json(topo_.machine().mem_bandwidth)
                                                                           : json(nullptr)}}},
          {"enforcement", enforcer_->name()},
          {"stopping", stopper_->name()},
          {"sensor", sensing_.status_json(cfg_, policy_.get())},
          {"rate_sensor", sensing_.rates().spec()},
          {"pairs", [&] { auto r = policy_->pairs(); return r ? pairs_json(*r) : json(nullptr); }()},
          {"quantum_ms", cfg_.quantum_ms},
          {"realtime", realtime_.active() ? json(cfg_.rt_priority) : json(nullptr)},
          {"baseline", baseline_.wanted(*policy_)},
          {"uptime_s", now()},
          {"rm_pid", ::getpid()},
          {"may_start", may_start_},
          {"slurm", gate_ ? gate_->status_json() : json(nullptr)},
          {"may_start_reason", may_start_reason_},
          {"allocated", allocated},
          {"decisions", decisions_},
          {"jobs", jobs}};
}

void Daemon::handle_ctl(Conn& c, const wire::Frame& f) {
  auto reply = [&](const json& r) {
    c.closing = true;
    server_.queue_reply(c, proto::MsgType::ctl_reply, r.dump(-1, ' ', false, json::error_handler_t::replace));
  };
  auto req = parse_ctl_request(f.payload);
  if (!req) {
    COSCHED_THROTTLED(server_.peer_log(), ctl, warn, "pid {}: bad control request: {}", c.pid, req.error().message);
    return reply(error_reply(req.error().message));
  }
  const bool changes_rm = req->cmd == CtlCmd::shutdown || req->cmd == CtlCmd::policy || req->cmd == CtlCmd::set ||
                          req->cmd == CtlCmd::cluster_switch || req->cmd == CtlCmd::expect;
  if (changes_rm && !server_.is_admin(c)) {
    COSCHED_THROTTLED(server_.peer_log(), ctl, warn, "refused {} from pid {} uid {}: not root, uid {}{}", ctl_command_name(req->cmd),
                      c.pid, c.uid, ::geteuid(),
                      cfg_.admin_group.empty() ? std::string() : " or a member of group " + cfg_.admin_group);
    return reply(error_reply("permission denied: uid " + std::to_string(c.uid) + " may not " +
                             ctl_command_name(req->cmd) + " (only root, uid " + std::to_string(::geteuid()) +
                             (cfg_.admin_group.empty() ? std::string() : " or members of group " + cfg_.admin_group) +
                             ")"));
  }
  // The request is typed now; what follows only reads the RM's own state. A library exception there is
  // still one error for this client, never the end of the RM (and of every job's coordination).
  try {
    if (req->cmd == CtlCmd::decisions) {
      // The recent decisions (oldest first) with t > since, spliced in as the text they are kept as: how
      // qsubmit records the decisions of an RM it did not start.
      c.closing = true;
      std::string out = R"({"ok":true,"now":)" + json(now()).dump() +
                        R"(,"decisions":)" + recent_decisions_.since(req->since) + "}";
      return server_.queue_reply(c, proto::MsgType::ctl_reply, out);
    }
    reply(answer_ctl(c, *req));
  } catch (const std::exception& e) {
    COSCHED_ERROR(ctl, "pid {}: control request failed: {}", c.pid, e.what());
    reply(error_reply(std::string("internal error: ") + e.what()));
  }
}

std::pair<bool, std::string> Daemon::may_start_counting_starting() {
  // On a copy: a question must not change the policy's memory of the jobs (PDPA states, time-sharing turns).
  auto probe = policy_->clone();
  policy::Decision d = probe->decide(snapshot(policy::Event::query, -1));
  admission_.hold(d.may_start, d.may_start_reason, now());
  return {d.may_start, std::move(d.may_start_reason)};
}

json Daemon::answer_ctl(const Conn& c, const CtlRequest& req) {
  switch (req.cmd) {
    case CtlCmd::status: return status_json();
    case CtlCmd::may_start: {
      if (req.queued >= 0 || req.starting >= 0) {
        admission_.heard(req.queued, req.starting, topo_.machine().cpus, now());
      }
      // The latest decision's answer counts only registered jobs; one that counts the starting ones is worked
      // out now (qsubmit asks with them instead of waiting for each start to register).
      auto [ok, reason] = admission_.starting(now()) > 0 ? may_start_counting_starting() : std::pair{may_start_, may_start_reason_};
      return {{"ok", true}, {"may_start", ok}, {"reason", reason}, {"running", jobs_.size()}};
    }
    case CtlCmd::shutdown:
      COSCHED_INFO(ctl, "shutdown requested by pid {}", c.pid);
      running_ = false;
      return {{"ok", true}};
    case CtlCmd::decisions: break;  // answered as text by handle_ctl
    case CtlCmd::cluster_local: return cluster_local_json();
    case CtlCmd::cluster_switch: return cluster_switch(req.order);
    case CtlCmd::expect:
      expect_slurm_job(req.slurm_job_id);
      return {{"ok", true}, {"may_start", may_start_}, {"reason", may_start_reason_}};
    case CtlCmd::policies: {
      json list = json::array();
      for (const auto& p : policy::list_policies()) {
        // Each policy's parameters as a fresh one holds them (its table's defaults, preset applied).
        json params = json::array();
        for (const auto& q : p.params) {
          params.push_back({{"name", q.name}, {"default", q.value}, {"accepts", q.accepts}, {"help", q.help}});
        }
        json preset = json::object();
        for (const auto& [k, v] : p.preset) preset[k] = v;
        list.push_back({{"name", p.name}, {"summary", p.summary}, {"preset", preset}, {"params", params}});
      }
      return {{"ok", true}, {"policies", list}};
    }
    case CtlCmd::why: {
      const std::deque<WhyEntry>* why = nullptr;
      if (auto it = jobs_.find(req.job); it != jobs_.end()) why = &it->second.why;
      if (auto it = departed_why_.find(req.job); why == nullptr && it != departed_why_.end()) why = &it->second;
      if (why == nullptr) return error_reply("no job " + std::to_string(req.job));
      json entries = json::array();
      for (const auto& w : *why) {
        entries.push_back({{"t", w.at}, {"event", w.event}, {"from", w.from}, {"to", w.to}, {"reason", w.reason}});
      }
      return {{"ok", true}, {"job", req.job}, {"running", jobs_.count(req.job) != 0}, {"decisions", entries}};
    }
    case CtlCmd::report: {
      // Shown to whoever may see the job's status and `why`: it is measurements, and it changes nothing.
      json entry;
      const bool running = jobs_.count(req.job) != 0;
      if (running) {
        const Job& j = jobs_.at(req.job);
        entry = {{"command", j.command}, {"uid", j.uid}, {"report", cpu_report_of(j, now())}};
      } else if (auto it = departed_reports_.find(req.job); it != departed_reports_.end()) {
        entry = it->second;
      } else {
        return error_reply("no job " + std::to_string(req.job));
      }
      entry.update({{"ok", true}, {"job", req.job}, {"running", running},
                    {"text", cpu_report_text(entry["report"])}});
      return entry;
    }
    case CtlCmd::release: return release_job(c, req.job);
    case CtlCmd::policy:
    case CtlCmd::set: {
      const bool same = req.cmd == CtlCmd::set || req.name == policy_->name();
      // Same policy: new parameters on a copy that keeps its memory of the jobs (PDPA states), kept only
      // when every parameter was accepted. Another policy: a new one, built with all of them or not at all.
      auto next = same ? policy::with_params(*policy_, req.params)
                       : policy::make_policy(req.name, topo_.machine(), req.params);
      if (!next) return error_reply(next.error().message);
      if (!same) COSCHED_INFO(ctl, "policy {} → {}", policy_->name(), req.name);
      policy_ = std::move(*next);
      if (core_trace_.is_open()) trace({{"policy", req.name}, {"same", same}, {"params", req.params}});
      for (auto& [id, j] : jobs_) {
        j.baseline_check = baseline_.wanted(*policy_);
        j.arena->set_baseline_wanted(j.baseline_check);
        baseline_.follow_check(j, *policy_, now());
      }
      decide(policy::Event::param_change, -1);
      return status_json();
    }
  }
  return error_reply("unknown command");
}

// `cosched-ctl release JOB`: the job goes back to the native runtime for the rest of its life (its team the
// size it asked for, no confinement, never stopped), as when the RM dies, and its CPUs go to the others. A
// job of several processes (an MPI job's ranks) is released whole. Its owner may, and administrators.
json Daemon::release_job(const Conn& c, policy::JobId id) {
  std::vector<policy::JobId> members;
  if (auto g = gangs_.find(id); g != gangs_.end()) {
    members = g->second.members;
  } else if (auto it = jobs_.find(id); it != jobs_.end()) {
    if (it->second.gang != 0 && gangs_.count(it->second.gang) != 0) {
      members = gangs_.at(it->second.gang).members;
    } else {
      members = {id};
    }
  }
  if (members.empty()) return error_reply("no job " + std::to_string(id));
  const uid_t owner = jobs_.at(members.front()).uid;
  if (owner != c.uid && !server_.is_admin(c)) {
    COSCHED_THROTTLED(server_.peer_log(), ctl, warn, "refused release of job {} (uid {}) from pid {} uid {}", id, owner, c.pid,
                      c.uid);
    return error_reply("permission denied: job " + std::to_string(id) + " belongs to uid " + std::to_string(owner) +
                       "; uid " + std::to_string(c.uid) + " may release only its own jobs");
  }
  json pids = json::array();
  for (auto m : members) pids.push_back(jobs_.at(m).pid);
  COSCHED_INFO(ctl, "job {} released by uid {} (pid {})", id, c.uid, c.pid);
  for (auto m : members) depart(m, "released by uid " + std::to_string(c.uid) + " (cosched-ctl release): native");
  return {{"ok", true}, {"job", id}, {"pids", pids}};
}

}  // namespace cosched::rm
