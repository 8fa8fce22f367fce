// Jobs: admission, departure, performance reports, and the decide → place → enforce → publish cycle.
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "cosched/log.hpp"
#include "daemon.hpp"
#include "rm/placement/placement.hpp"
#include "rm/enforce/slurm_node.hpp"
#include "rm/placement/rank_split.hpp"
#include "rm/slurm/slurm_confinement.hpp"
#include "narrowing.hpp"
#include "register_body.hpp"
#include "time_sharing.hpp"
#include "rm/decision/core_trace.hpp"

namespace cosched::rm {

namespace {

constexpr std::size_t kDepartedKept = 256;

int pidfd_open(pid_t pid) { return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)); }

}  // namespace

void Daemon::handle_register(Conn& c, const wire::Frame& f) {
  auto refuse = [&](const std::string& why) {
    COSCHED_THROTTLED(server_.peer_log(), rm, warn, "registration from pid {} refused: {}", c.pid, why);
    c.closing = true;
    server_.queue_reply(c, proto::MsgType::refused, why);
  };
  if (c.job >= 0) {
    // The connection is the job's lifeline (its EOF sends the job native): refuse the frame, keep the job.
    COSCHED_THROTTLED(server_.peer_log(), rm, warn, "pid {}: second registration refused: already job {}", c.pid, c.job);
    server_.queue_reply(c, proto::MsgType::refused, "already registered as job " + std::to_string(c.job));
    return;
  }
  auto body = parse_register_body(f.payload);
  if (!body) return refuse(body.error().message);
  admit(c, std::move(*body), {}, 0);
}

void Daemon::admit(Conn& c, RegisterRequest body, const std::string& key, int rank) {
  auto refuse = [&](const std::string& why) {
    COSCHED_THROTTLED(server_.peer_log(), rm, warn, "registration from pid {} refused: {}", c.pid, why);
    c.closing = true;
    server_.queue_reply(c, proto::MsgType::refused, why);
  };
  for (auto& [id, j] : jobs_) {
    if (j.pid == c.pid) return refuse("pid " + std::to_string(c.pid) + " is already job " + std::to_string(id));
  }

  Job j;
  j.id = next_id_++;
  j.pid = c.pid;
  j.uid = c.uid;
  j.command = std::move(body.command);
  j.request = body.request;
  j.flags = body.flags;
  j.arrival = now();
  j.conn_fd = c.fd;
  // A process of a job of several joins the job its key names (mpi_jobs.cpp).
  if (!key.empty()) {
    j.rank = rank;
    j.job_key = key;
    j.slurm_job_id = slurm_job_id_of(key);
    if (j.slurm_job_id >= 0) {
      read_slurm_confinement(j, topo_.cpus());
      admission_.registered_slurm(j.slurm_job_id);
    }
    join_gang(gangs_, j);
  }
  const policy::JobId view = view_id(j);
  auto arena = ArenaHost::create(static_cast<std::uint32_t>(view));
  if (!arena) {
    if (!key.empty()) leave_gang(gangs_, j);
    return refuse("internal error: " + arena.error().message);
  }
  j.arena = std::move(*arena);
  j.arena->set_baseline(baseline_cpus_for(cfg_, j.request));
  j.baseline_check = baseline_.wanted(*policy_);
  j.arena->set_baseline_wanted(j.baseline_check);
  j.arena->set_baseline_waits(baseline_.waits());
  j.pidfd = pidfd_open(j.pid);
  if (auto st = enforcer_->attach(j); !st) {
    COSCHED_WARN(enforce, "job {}: cannot confine it ({}); it is scheduled by team size only", j.id, st.error().message);
  }
  const policy::JobId id = j.id;
  c.job = id;
  if (j.pidfd >= 0) {
    pidfds_[j.pidfd] = id;
    watch_fd(epfd_, j.pidfd, EPOLLIN);
  }
  if (key.empty()) {
    COSCHED_INFO(rm, "job {} admitted: pid {} uid {} requests {} CPU(s): {}", id, j.pid, j.uid, j.request, j.command);
  } else {
    COSCHED_INFO(rm, "job {} rank {} ({}) admitted as process {}: pid {} uid {} requests {} CPU(s): {}", view, rank,
                 key, id, j.pid, j.uid, j.request, j.command);
  }
  sensing_.sensors().attach(id, j.pid);
  jobs_.emplace(id, std::move(j));
  if (view == id) admission_.registered();  // a new job, not a rank joining its job
  // A rank joining its job makes the job bigger: an arrival of the job again, for the policy.
  decide(policy::Event::arrival, view);

  Job& job = jobs_.at(id);
  proto::RegisterOkBody ok{static_cast<std::uint32_t>(view), static_cast<std::uint32_t>(proto::kArenaSize)};
  if (!wire::send_frame(c.fd, proto::MsgType::register_ok, &ok, sizeof ok, job.arena->fd())) {
    COSCHED_WARN(rm, "job {}: cannot send its arena ({}); dropping it", id, std::strerror(errno));
    depart(id, "registration reply failed");
    return;
  }
  // After the reply, and after every other peer of this event batch: the job starts with its team size at
  // once, and confinement (a cgroup.procs write waits ~9 ms for an RCU grace period) delays no registration.
  to_confine_.push_back(id);
}

void Daemon::confine_admitted() {
  for (auto id : to_confine_) {
    auto it = jobs_.find(id);
    if (it == jobs_.end()) continue;  // already gone
    if (auto st = enforcer_->confine(it->second); !st) {
      COSCHED_WARN(enforce, "job {}: cannot confine it ({}); it is scheduled by team size only", id,
                   st.error().message);
    }
  }
  to_confine_.clear();
}

void Daemon::depart(policy::JobId id, const std::string& why) {
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return;
  Job& j = it->second;
  release_stop(*stopper_, j);  // first: the cpuset release tells the guard to forget the job altogether
  enforcer_->release(j);
  if (j.pidfd >= 0) {
    ::epoll_ctl(epfd_, EPOLL_CTL_DEL, j.pidfd, nullptr);
    pidfds_.erase(j.pidfd);
    ::close(j.pidfd);
  }
  if (j.conn_fd >= 0 && server_.has(j.conn_fd)) server_.close(j.conn_fd);
  COSCHED_INFO(rm, "job {} (pid {}) left: {}; {} CPU(s) freed", id, j.pid, why, j.allocation);
  remember_why(j, now(), "departure", j.allocation, 0, why);
  const double wall_now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  accounting_.record(j, why, now(), wall_now,
                     {{"policy", policy_->name()}, {"rm_pid", ::getpid()}, {"socket", cfg_.socket}});
  departed_why_[id] = std::move(j.why);
  while (departed_why_.size() > kDepartedKept) departed_why_.erase(departed_why_.begin());
  nlohmann::json report = cpu_report_of(j, now());
  write_slurm_comment(j, report, true);
  slurm_comment_at_.erase(j.slurm_job_id);
  departed_reports_[id] = {{"command", j.command}, {"uid", j.uid}, {"report", std::move(report)}};
  while (departed_reports_.size() > kDepartedKept) departed_reports_.erase(departed_reports_.begin());
  const policy::JobId gang = j.gang;
  // A rank left: the job goes on with the others (a smaller job), or it was the last one.
  const bool last = gang == 0 || leave_gang(gangs_, j);
  jobs_.erase(it);
  sensing_.sensors().forget(id);
  if (!last) {
    decide(policy::Event::departure, id);  // `id` is in no snapshot: the policies see a job that shrank
    return;
  }
  if (gang != 0) id = gang;
  policy_->forget(id);
  if (records_.tracing()) records_.trace({{"forget", id}});
  decide(policy::Event::departure, id);
}

// Where Slurm users look (docs/slurm.md, "What the job's CPUs bought"): the Slurm job's AdminComment, which
// slurmctld no longer takes once the job has finished, so it is kept up to date while the job runs, at most
// once per kSlurmCommentEvery per Slurm job (our choice: a process per update), and written once more when
// the process leaves, which is too late when it was the batch script's last. The text is the RM's own, the
// program named by its file name only.
void Daemon::write_slurm_comment(const Job& j, const nlohmann::json& report, bool leaving) {
  constexpr double kSlurmCommentEvery = 5;
  if (j.slurm_job_id < 0 || !cfg_.slurm_comment) return;
  auto [at, fresh] = slurm_comment_at_.try_emplace(j.slurm_job_id, now());
  if (!fresh && !leaving && now() - at->second < kSlurmCommentEvery) return;
  at->second = now();
  const std::string prog = j.command.substr(0, j.command.find(' '));
  const std::string text = "cosched: " + prog.substr(prog.rfind('/') + 1) + ": " + report.value("summary", "");
  if (slurm::spawn_admin_comment(cfg_.scontrol, j.slurm_job_id, j.uid, text.substr(0, 1000)) < 0) {
    COSCHED_WARN(rm, "job {}: cannot start {} for Slurm job {}'s AdminComment: {}", j.id, cfg_.scontrol,
                 j.slurm_job_id, std::strerror(errno));
  }
}

// Reads the job's two estimates (the SelfAnalyzer's report, the sampler's waiting-time efficiency); true when
// either moved. A report that fails validation is logged once and never used: the job keeps its last good one.
bool Daemon::read_estimates(Job& j) {
  bool moved = false;
  const ArenaReport r = j.arena->read_report();
  if (r.present && r.seq != j.measured.seq) {
    if (r.valid) {
      j.measured = r.perf;
      j.measured_below = measured_below_waiting(j.measured, j.efficiency.estimate) ? j.measured_below + 1 : 0;
      moved = true;
    } else {
      COSCHED_WARN(arena, "job {}: report {} rejected: {} out of range", j.id, r.seq, r.invalid_field);
      j.measured.seq = r.seq;
    }
  }
  const ArenaEfficiency e = j.arena->read_efficiency();
  const std::uint64_t seen = j.efficiency.estimate.seq;
  const WaitingEstimate kept = j.efficiency.estimate;
  j.efficiency = e;
  if (e.estimate.seq != seen) {
    if (e.estimate.valid) {
      moved = true;
    } else {
      if (!e.invalid_field.empty()) {
        COSCHED_WARN(arena, "job {}: efficiency estimate {} rejected: {} out of range", j.id, e.estimate.seq,
                     e.invalid_field);
      }
      j.efficiency.estimate = kept;
      j.efficiency.estimate.seq = e.estimate.seq;
    }
  } else {
    j.efficiency.estimate = kept;
  }
  return moved;
}

void Daemon::poll_reports() {
  std::vector<policy::JobId> fresh;
  for (auto& [id, j] : jobs_) {
    note_team(j, j.arena->read_progress(), now());
    if (follow_narrowing(*enforcer_, j, now())) narrow_poll_.arm(jobs_);
    if (!j.runnable) continue;  // stopped: no new report, and it may be frozen mid-write (time_sharing.cpp)
    if (!read_estimates(j)) continue;
    const ChosenEstimate c = choose_estimate(j.measured, j.efficiency.estimate, j.allocation, j.measured_below);
    if (c.note != j.estimate_note) {
      if (!c.note.empty()) remember_why(j, now(), "estimate", j.allocation, j.allocation, c.note);
      j.estimate_note = c.note;
    }
    j.measured_failed = c.measured_failed;
    if (!c.perf.valid || c.perf.seq == j.perf.seq) continue;
    j.perf = c.perf;
    note_estimate(j, c.perf);
    write_slurm_comment(j, cpu_report_of(j, now()), false);
    baseline_.follow_check(j, *policy_, now());
    push_history(j.history, c.perf, now());
    COSCHED_DEBUG(arena, "job {}: {} speedup {:.3f} efficiency {:.3f} at {} CPUs", id,
                  policy::to_string(c.perf.kind), c.perf.speedup, c.perf.efficiency, c.perf.cpus);
    fresh.push_back(id);
  }
  for (auto id : fresh) {
    if (auto it = jobs_.find(id); it != jobs_.end()) decide(policy::Event::report, view_id(it->second));
  }
}

policy::Snapshot Daemon::snapshot(policy::Event event, policy::JobId subject) {
  policy::Snapshot s;
  s.now = now();
  s.event = event;
  s.subject = subject;
  s.machine = topo_.machine();
  s.quantum = cfg_.quantum_ms / 1000.0;
  s.queued = admission_.queued(s.now);
  s.starting = admission_.starting(s.now);
  s.cluster = cluster_;
  s.jobs.reserve(jobs_.size());
  for (const Unit& u : units(jobs_)) {
    const bool suspended = std::any_of(u.members.begin(), u.members.end(), [](const Job* m) { return m->suspended; });
    if (suspended) continue;  // stopped by a signal: it cannot use CPUs (suspended.cpp)
    s.jobs.push_back(job_view(u, gangs_, sensing_.sensors()));
  }
  return s;
}

void Daemon::decide(policy::Event event, policy::JobId subject) {
  const policy::Snapshot s = snapshot(event, subject);
  baseline_.follow_sharing(s, jobs_, *policy_, now());
  ++decisions_;
  std::vector<Unit> all = units(jobs_);
  std::vector<CoreJob> jobs = core_jobs(all, gangs_);
  const std::vector<CoreJob> before = records_.tracing() ? jobs : std::vector<CoreJob>{};
  const Proposal p = core_.propose(*policy_, s, jobs);
  std::vector<policy::JobId> stopped;
  for (const auto& [id, reason] : p.stops) {
    auto u = std::find_if(all.begin(), all.end(), [id = id](const Unit& x) { return x.id == id; });
    if (!stop_unit(*stopper_, *u, reason, now())) continue;  // deferred: it runs on, and is placed with the others
    stopped.push_back(id);
    COSCHED_DEBUG(policy, "job {}: stopped ({})", id, reason);
  }
  if (!stopped.empty()) jobs = core_jobs(all, gangs_);
  // An announced Slurm job not registered yet holds the policy's yes back (Admission::hold).
  std::optional<std::string> hold;
  bool may_start = p.decision.may_start;
  std::string reason = p.decision.may_start_reason;
  admission_.hold(may_start, reason, now());
  if (may_start != p.decision.may_start) hold = reason;
  if (records_.tracing()) records_.trace(trace_decide(s, before, stopped, may_start_, hold));
  const Settled settled = core_.settle(p, jobs, {std::string(policy_->name()), may_start_, hold, true});
  apply(p, settled);
}

void Daemon::apply(const Proposal& p, const Settled& st) {
  for (const std::string& e : st.errors) COSCHED_ERROR(policy, "{}", e);
  const std::string event = policy::to_string(p.event);
  // An interval is sampled with one set of partners only (sensing.cpp: a progress-rate sample names them).
  for (auto& [id, j] : jobs_) {
    if (std::find(st.partners_changed.begin(), st.partners_changed.end(), view_id(j)) != st.partners_changed.end()) {
      j.sensor_mark.open = false;
    }
  }
  sensing_.set_groups(st.partners, !p.decision.co_schedule.empty());
  for (const auto& [id, count] : st.job_allocation) {
    if (auto g = gangs_.find(id); g != gangs_.end()) {
      g->second.allocation = count;
      g->second.cpus = st.job_cpus.at(id);
    }
  }
  for (const ProcessAction& a : st.processes) {
    Job& j = jobs_.at(a.id);
    j.policy_state = a.state;
    if (!a.running) continue;
    if (!a.moved) {
      if (!a.why.empty()) remember_why(j, now(), event, j.allocation, j.allocation, a.why);
      continue;
    }
    j.sensor_mark.open = false;  // an interval is sampled on one allocation only
    publish_and_apply(*enforcer_, j, running_set(j, j.allocation, j.cpus).first, a.count, a.cpus);
    j.allocation = a.count;
    j.cpus = a.cpus;
    note_cpus(j, now(), a.count);
    remember_why(j, now(), event, a.from, a.count, a.why);
    COSCHED_INFO(policy, "job {}: {} → {} CPU(s) [{}] ({})", j.id, a.from, a.count, a.cpus.to_string(), a.why);
  }
  // Resumed once every process has its CPUs and team: the ranks of a job continue back to back, with no
  // cgroup write (milliseconds) between them.
  for (const ProcessAction& a : st.processes) {
    if (!a.resumed) continue;
    Job& j = jobs_.at(a.id);
    resume_job(*stopper_, j, !a.reason.empty() ? a.reason : "policy", now());
    COSCHED_DEBUG(policy, "job {}: resumed on {} CPU(s) [{}]", j.id, j.allocation, j.cpus.to_string());
  }
  note_cpu_sharing(jobs_);  // after the moves, stops and resumes: who competes for whose CPUs now
  may_start_ = st.may_start;
  may_start_reason_ = st.may_start_reason;
  if (gate_) gate_->apply(may_start_, now());
  if (st.wake_at) arm_wake(*st.wake_at);
  if (st.noteworthy) records_.record(st, jobs_);
}

// The --log file gets every process in every record; the in-memory history only those this decision changed.
}  // namespace cosched::rm
