// Control requests (cosched-ctl, qsubmit): JSON in, JSON out, one request per connection. A malformed
// request gets {"ok": false, "error": "..."} naming the field, and the RM carries on.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "cosched/log.hpp"
#include "ctl_request.hpp"
#include "daemon.hpp"
#include "job_status.hpp"
#include "policies/registry.hpp"
#include "rm/accounting/cpu_report.hpp"

namespace cosched::rm {

namespace {

using nlohmann::json;

json error_reply(const std::string& msg) { return {{"ok", false}, {"error", msg}}; }

// `cosched-ctl policies`: each policy's parameters as a fresh one holds them (its table's defaults, preset applied).
json policies_json() {
  json list = json::array();
  for (const auto& p : policy::list_policies()) {
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

// `cosched-ctl why JOB`: a running job's decisions, or a recently departed one's.
json why_json(const JobTable& jobs, const std::map<policy::JobId, std::deque<WhyEntry>>& departed, policy::JobId id) {
  const std::deque<WhyEntry>* why = nullptr;
  if (auto it = jobs.find(id); it != jobs.end()) why = &it->second.why;
  if (auto it = departed.find(id); why == nullptr && it != departed.end()) why = &it->second;
  if (why == nullptr) return error_reply("no job " + std::to_string(id));
  json entries = json::array();
  for (const auto& w : *why) {
    entries.push_back({{"t", w.at}, {"event", w.event}, {"from", w.from}, {"to", w.to}, {"reason", w.reason}});
  }
  return {{"ok", true}, {"job", id}, {"running", jobs.count(id) != 0}, {"decisions", entries}};
}

// `cosched-ctl report JOB`: what its CPUs bought. Shown to whoever may see the job's status and `why`: it is
// measurements, and it changes nothing.
json report_json(const JobTable& jobs, const std::map<policy::JobId, json>& departed, policy::JobId id, double now) {
  json entry;
  const bool running = jobs.count(id) != 0;
  if (running) {
    const Job& j = jobs.at(id);
    entry = {{"command", j.command}, {"uid", j.uid}, {"report", cpu_report_of(j, now)}};
  } else if (auto it = departed.find(id); it != departed.end()) {
    entry = it->second;
  } else {
    return error_reply("no job " + std::to_string(id));
  }
  entry.update({{"ok", true}, {"job", id}, {"running", running}, {"text", cpu_report_text(entry["report"])}});
  return entry;
}

}  // namespace

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
    jobs.push_back(job_json(j, {now(), baseline_.wanted(*policy_) && baseline_.waits(), &sensing_.sensors()}));
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
          {"cpu_share", cpu_share_},
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
                        R"(,"decisions":)" + records_.since(req->since) + "}";
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
    case CtlCmd::policies: return policies_json();
    case CtlCmd::why: return why_json(jobs_, departed_why_, req.job);
    case CtlCmd::report: return report_json(jobs_, departed_reports_, req.job, now());
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
      if (records_.tracing()) records_.trace({{"policy", req.name}, {"same", same}, {"params", req.params}});
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
  for (auto m : members) {
    // Its own pidfd, duplicated before departure closes it: the decision the departure makes counts it.
    const int pidfd = jobs_.at(m).pidfd;
    admission_.released(pidfd >= 0 ? ::fcntl(pidfd, F_DUPFD_CLOEXEC, 0) : -1);
    depart(m, "released by uid " + std::to_string(c.uid) + " (cosched-ctl release): native");
  }
  return {{"ok", true}, {"job", id}, {"pids", pids}};
}

}  // namespace cosched::rm
