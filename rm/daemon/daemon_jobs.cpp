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
#include "register_body.hpp"

namespace cosched::rm {

namespace {

constexpr std::size_t kWhyDepth = 32;
constexpr std::size_t kHistoryDepth = 16;
constexpr std::size_t kDepartedKept = 256;

int pidfd_open(pid_t pid) { return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)); }

}  // namespace

void Daemon::handle_register(Conn& c, const wire::Frame& f) {
  auto refuse = [&](const std::string& why) {
    COSCHED_THROTTLED(peer_log_, rm, warn, "registration from pid {} refused: {}", c.pid, why);
    c.closing = true;
    queue_reply(c, proto::MsgType::refused, why);
  };
  if (c.job >= 0) {
    // The connection is the job's lifeline (its EOF sends the job native): refuse the frame, keep the job.
    COSCHED_THROTTLED(peer_log_, rm, warn, "pid {}: second registration refused: already job {}", c.pid, c.job);
    queue_reply(c, proto::MsgType::refused, "already registered as job " + std::to_string(c.job));
    return;
  }
  auto body = parse_register_body(f.payload);
  if (!body) return refuse(body.error().message);
  admit(c, std::move(*body), {}, 0);
}

void Daemon::admit(Conn& c, RegisterRequest body, const std::string& key, int rank) {
  auto refuse = [&](const std::string& why) {
    COSCHED_THROTTLED(peer_log_, rm, warn, "registration from pid {} refused: {}", c.pid, why);
    c.closing = true;
    queue_reply(c, proto::MsgType::refused, why);
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
  // A process of a job of several joins the job its key names under its own uid (never another user's);
  // the first one founds it, and its id is the job's (mpi_jobs.cpp).
  bool joined = false;
  if (!key.empty()) {
    j.rank = rank;
    j.job_key = key;
    j.slurm_job_id = slurm_job_id_of(key);
    if (j.slurm_job_id >= 0) {
      read_slurm_confinement(j, topo_.cpus());
      registered_slurm_job(j.slurm_job_id);
    }
    j.gang = j.id;
    for (auto& [gid, g] : gangs_) {
      if (g.uid == c.uid && g.key == key) {
        j.gang = gid;
        joined = true;
      }
    }
    if (!joined) gangs_[j.id] = Gang{c.uid, key, {}, 0, {}};
    gangs_[j.gang].members.push_back(j.id);
  }
  const policy::JobId view = view_id(j);
  auto arena = ArenaHost::create(static_cast<std::uint32_t>(view));
  if (!arena) {
    if (!key.empty()) {
      auto& m = gangs_[j.gang].members;
      m.erase(std::remove(m.begin(), m.end(), j.id), m.end());
      if (m.empty()) gangs_.erase(j.gang);
    }
    return refuse("internal error: " + arena.error().message);
  }
  j.arena = std::move(*arena);
  j.arena->set_baseline(baseline_cpus_for(cfg_, j.request));
  j.baseline_check = baseline_wanted();
  j.arena->set_baseline_wanted(j.baseline_check);
  j.arena->set_baseline_waits(baseline_waits());
  j.pidfd = pidfd_open(j.pid);
  if (auto st = enforcer_->attach(j); !st) {
    COSCHED_WARN(enforce, "job {}: cannot confine it ({}); it is scheduled by team size only", j.id, st.error().message);
  }
  const policy::JobId id = j.id;
  c.job = id;
  if (j.pidfd >= 0) {
    pidfds_[j.pidfd] = id;
    watch(j.pidfd, EPOLLIN);
  }
  if (key.empty()) {
    COSCHED_INFO(rm, "job {} admitted: pid {} uid {} requests {} CPU(s): {}", id, j.pid, j.uid, j.request, j.command);
  } else {
    COSCHED_INFO(rm, "job {} rank {} ({}) admitted as process {}: pid {} uid {} requests {} CPU(s): {}", view, rank,
                 key, id, j.pid, j.uid, j.request, j.command);
  }
  sensors_.attach(id, j.pid);
  jobs_.emplace(id, std::move(j));
  // The queuing system counted this job when it last asked may_start: among the jobs being started if it asked
  // after starting it, else among the waiting ones (it starts a job on a yes). Until it asks again, one fewer
  // of those. Only a new job, not a rank joining its job.
  if (view == id && starting_ > 0) {
    --starting_;
  } else if (view == id && queued_ > 0) {
    --queued_;
  }
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
  release_stop(j);  // first: the cpuset release tells the guard to forget the job altogether
  enforcer_->release(j);
  if (j.pidfd >= 0) {
    ::epoll_ctl(epfd_, EPOLL_CTL_DEL, j.pidfd, nullptr);
    pidfds_.erase(j.pidfd);
    ::close(j.pidfd);
  }
  if (j.conn_fd >= 0 && conns_.count(j.conn_fd) != 0) close_conn(j.conn_fd);
  COSCHED_INFO(rm, "job {} (pid {}) left: {}; {} CPU(s) freed", id, j.pid, why, j.allocation);
  remember_why(j, "departure", j.allocation, 0, why);
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
  jobs_.erase(it);
  sensors_.forget(id);
  if (gang != 0) {
    // A rank left: the job goes on with the others (a smaller job), or it was the last one.
    auto& members = gangs_[gang].members;
    members.erase(std::remove(members.begin(), members.end(), id), members.end());
    if (!members.empty()) {
      decide(policy::Event::departure, id);  // `id` is in no snapshot: the policies see a job that shrank
      return;
    }
    gangs_.erase(gang);
    id = gang;
  }
  policy_->forget(id);
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
    note_team(j, j.arena->read_progress());
    follow_narrowing(j);
    if (!j.runnable) continue;  // stopped: no new report, and it may be frozen mid-write (time_sharing.cpp)
    if (!read_estimates(j)) continue;
    const ChosenEstimate c = choose_estimate(j.measured, j.efficiency.estimate, j.allocation, j.measured_below);
    if (c.note != j.estimate_note) {
      if (!c.note.empty()) remember_why(j, "estimate", j.allocation, j.allocation, c.note);
      j.estimate_note = c.note;
    }
    j.measured_failed = c.measured_failed;
    if (!c.perf.valid || c.perf.seq == j.perf.seq) continue;
    j.perf = c.perf;
    note_estimate(j, c.perf);
    write_slurm_comment(j, cpu_report_of(j, now()), false);
    follow_check(j);
    j.history.push_back({c.perf.cpus, c.perf.speedup, c.perf.efficiency, c.perf.iteration_s, now()});
    if (j.history.size() > kHistoryDepth) j.history.erase(j.history.begin());
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
  s.queued = queued_now();
  s.starting = starting_now();
  s.cluster = cluster_;
  s.jobs.reserve(jobs_.size());
  for (const Unit& u : units()) {
    const bool suspended = std::any_of(u.members.begin(), u.members.end(), [](const Job* m) { return m->suspended; });
    if (suspended) continue;  // stopped by a signal: it cannot use CPUs (suspended.cpp)
    const Job& j = *u.members.front();
    policy::JobView v;
    v.id = u.id;
    v.request = j.request;
    v.allocation = j.allocation;
    v.runnable = j.runnable;
    v.arrival = j.arrival;
    v.analyzing = j.progress.phase == proto::Phase::baseline || j.progress.phase == proto::Phase::measuring;
    if (v.analyzing && j.analyzing_since >= 0) {
      v.analyzing_since = j.analyzing_since;
      v.analyzed_iterations = j.progress.iterations >= j.iterations_at_analyzing
                                  ? j.progress.iterations - j.iterations_at_analyzing
                                  : 0;
    }
    v.perf = j.perf;
    if (!j.perf.valid) v.perf = policy::Perf{};  // a rejected first report is no report
    v.history = j.history;
    // The sensors follow processes: a job of several (MPI ranks) uses the sum of its processes' windows,
    // sample by sample, for memory traffic as for network payload (sensors::sum_windows).
    std::vector<policy::JobId> processes;
    for (const Job* m : u.members) processes.push_back(m->id);
    v.bandwidth = sensors_.bandwidth(processes);
    v.network = sensors_.network(processes);
    v.rate = j.rate;
    if (j.gang != 0 && u.members.size() > 1) {
      // A job of several processes: what they ask for together, the allocation they share. A rank's speedup
      // is not the job's (measured at its share, with its partners' pace), so it reports none.
      const Gang& g = gangs_.at(u.id);
      v.request = 0;
      for (const Job* m : u.members) v.request += m->request;
      v.request = std::min(v.request, proto::kMaxCpus);
      v.allocation = g.allocation;
      v.analyzing = false;
      v.analyzing_since = -1;
      v.perf = policy::Perf{};
      v.history.clear();
    }
    // Never more than Slurm let it use: a policy grants nothing placement could not place.
    if (const CpuSet allowed = allowed_cpus(u.members); !allowed.empty()) {
      v.request = std::min(v.request, allowed.count());
    }
    s.jobs.push_back(std::move(v));
  }
  return s;
}

void Daemon::decide(policy::Event event, policy::JobId subject) {
  const policy::Snapshot s = snapshot(event, subject);
  follow_sharing(s);
  auto d = policy_->decide(s);
  apply(d, event, subject);
}

void Daemon::apply(const policy::Decision& d, policy::Event event, policy::JobId subject) {
  ++decisions_;
  const int ncpu = topo_.machine().cpus;
  // The policy's word, made safe: one allocation per job, each in [1, cpus].
  std::map<policy::JobId, const policy::Allocation*> by_id;
  for (const auto& a : d.jobs) by_id[a.id] = &a;

  // Time sharing. Jobs the policy stops leave their CPUs before the others are placed on them; jobs it
  // resumes are placed with the others and continue once their CPUs and team are published (below). A
  // stopped job keeps its allocation and CPU set, which placement may give to the running jobs. A job of
  // several processes (MPI ranks) is stopped and resumed whole.
  std::vector<Unit> all = units();
  auto unit_suspended = [](const Unit& u) {
    return std::any_of(u.members.begin(), u.members.end(), [](const Job* m) { return m->suspended; });
  };
  std::vector<policy::JobId> stopping;
  std::vector<policy::JobId> resuming;
  for (Unit& u : all) {
    if (unit_suspended(u)) continue;
    auto it = by_id.find(u.id);
    const bool run = it == by_id.end() || it->second->runnable;
    const std::string reason = it != by_id.end() && !it->second->reason.empty() ? it->second->reason : "policy";
    const bool any_running = std::any_of(u.members.begin(), u.members.end(), [](const Job* m) { return m->runnable; });
    const bool any_stopped = std::any_of(u.members.begin(), u.members.end(), [](const Job* m) { return !m->runnable; });
    if (!run && any_running) {
      if (stop_unit(u, reason)) {
        stopping.push_back(u.id);
        COSCHED_DEBUG(policy, "job {}: stopped ({})", u.id, reason);
      }
    } else if (run && any_stopped) {
      resuming.push_back(u.id);
    }
  }

  std::vector<PlaceRequest> reqs;
  std::map<policy::JobId, Unit*> unit_of;
  for (Unit& u : all) {
    if (unit_suspended(u)) continue;  // keeps its allocation and CPU set; placement may lend those CPUs
    const Job& lead = *u.members.front();
    const bool stopped = std::none_of(u.members.begin(), u.members.end(), [](const Job* m) { return m->runnable; });
    if (stopped && std::find(resuming.begin(), resuming.end(), u.id) == resuming.end()) continue;
    const bool several = lead.gang != 0;
    const int held = several ? gangs_.at(u.id).allocation : lead.allocation;
    const CpuSet& current = several ? gangs_.at(u.id).cpus : lead.cpus;
    auto it = by_id.find(u.id);
    int want = it != by_id.end() ? it->second->cpus : std::max(held, 1);
    if (it == by_id.end() || want < 1 || want > ncpu) {
      COSCHED_ERROR(policy, "{} gave job {} {} CPUs (must be 1..{}); keeping {}", policy_->name(), u.id,
                    it == by_id.end() ? 0 : want, ncpu, std::max(held, 1));
      want = std::clamp(std::max(held, 1), 1, ncpu);
    }
    // A Slurm job stays inside the CPUs Slurm gave it (placement.hpp).
    reqs.push_back({u.id, want, current, allowed_cpus(u.members)});
    unit_of[u.id] = &u;
  }
  auto placed = place_with_groups(topo_.order(), topo_.core_of(), reqs, d.co_schedule);
  // Each job's group partners (sensing.cpp: a progress-rate sample names them); an interval is sampled with
  // one set of partners only.
  std::map<policy::JobId, std::vector<policy::JobId>> partners;
  bool groups_changed = false;
  for (const auto& g : d.co_schedule) {
    for (policy::JobId id : g) {
      for (policy::JobId o : g) {
        if (o != id) partners[id].push_back(o);
      }
    }
  }
  for (auto& [id, j] : jobs_) {
    auto now_p = partners.find(view_id(j));
    auto was_p = partners_.find(view_id(j));
    const bool same = (now_p == partners.end() ? std::vector<policy::JobId>{} : now_p->second) ==
                      (was_p == partners_.end() ? std::vector<policy::JobId>{} : was_p->second);
    if (!same) j.sensor_mark.open = false;
    groups_changed = groups_changed || !same;
  }
  partners_ = std::move(partners);
  grouping_ = !d.co_schedule.empty();

  bool changed = false;
  // The --log file gets every job in every entry; the in-memory history only the jobs this decision changed.
  nlohmann::json jobs_json = nlohmann::json::array();
  nlohmann::json changes_json = nlohmann::json::array();
  for (const auto& r : reqs) {
    Unit& u = *unit_of.at(r.id);
    const CpuSet& unit_cpus = placed.at(r.id);
    const auto* a = by_id.count(r.id) != 0 ? by_id.at(r.id) : nullptr;
    const bool several = u.members.front()->gang != 0;
    // Each process's part: the whole for a job of its own, a share for each rank (rank_split.hpp).
    const std::vector<int> shares = several ? rank_shares(r.count, static_cast<int>(u.members.size()))
                                            : std::vector<int>{r.count};
    const std::vector<CpuSet> slices = several ? split_cpus(unit_cpus, shares) : std::vector<CpuSet>{unit_cpus};
    if (several) {
      gangs_.at(r.id).allocation = r.count;
      gangs_.at(r.id).cpus = unit_cpus;
    }
    const bool resumed = std::find(resuming.begin(), resuming.end(), r.id) != resuming.end();
    for (std::size_t k = 0; k < u.members.size(); ++k) {
      Job& j = *u.members[k];
      const int count = shares[k];
      const CpuSet& cpus = slices[k];
      const std::string state_before = j.policy_state;
      const bool restated = a != nullptr && a->state != state_before;
      if (a != nullptr) j.policy_state = a->state;
      bool moved = !(cpus == j.cpus) || count != j.allocation;
      if (!moved && j.policy_state != state_before && !state_before.empty()) {
        // A state change without a new allocation (e.g. PDPA's INC waiting for CPUs) is a decision too: `why`
        // lists it, as the decision log does.
        remember_why(j, policy::to_string(event), j.allocation, j.allocation,
                     a != nullptr && !a->reason.empty() ? a->reason : state_before + " → " + j.policy_state);
      } else if (!moved && event == policy::Event::report && subject == r.id && a != nullptr && !a->reason.empty()) {
        remember_why(j, policy::to_string(event), j.allocation, j.allocation, a->reason);  // e.g. a report ignored
      }
      if (moved) {
        changed = true;
        j.sensor_mark.open = false;  // an interval is sampled on one allocation only
        int from = j.allocation;
        publish_and_apply(j, running_set(j, j.allocation, j.cpus).first, count, cpus);
        j.allocation = count;
        j.cpus = cpus;
        note_cpus(j, now(), count);
        std::string reason = a != nullptr && !a->reason.empty() ? a->reason : "placement";
        if (several) reason += " (rank " + std::to_string(j.rank) + ": " + std::to_string(count) + " of the job's " +
                               std::to_string(r.count) + ")";
        remember_why(j, policy::to_string(event), from, count, reason);
        COSCHED_INFO(policy, "job {}: {} → {} CPU(s) [{}] ({})", j.id, from, count, cpus.to_string(), reason);
      }
      nlohmann::json job_entry = {{"id", j.id},
                                  {"pid", j.pid},  // joins the log to qsubmit's jobs.csv and to ps
                                  {"slurm_job_id", slurm_id_json(j)},  // joins it to sacct and jobcomp
                                  {"allocated", count},
                                  {"cpus", cpus.to_string()},
                                  {"run", "running"},
                                  {"state", j.policy_state},
                                  {"reason", a != nullptr ? a->reason : ""}};
      if (several) job_entry["job"] = r.id;
      if (moved || restated || resumed || (a != nullptr && !a->reason.empty())) changes_json.push_back(job_entry);
      if (log_.is_open()) jobs_json.push_back(std::move(job_entry));
    }
    // Resumed once every process has its CPUs and team: the ranks of a job continue back to back, with no
    // cgroup write (milliseconds) between them.
    for (Job* m : u.members) {
      if (!resumed || m->runnable) continue;
      resume_job(*m, a != nullptr && !a->reason.empty() ? a->reason : "policy");
      COSCHED_DEBUG(policy, "job {}: resumed on {} CPU(s) [{}]", m->id, m->allocation, m->cpus.to_string());
    }
  }
  // The jobs that sit this decision out (stopped now or before), in the log too.
  for (auto& [id, j] : jobs_) {
    if (j.runnable || j.suspended) continue;
    const auto* a = by_id.count(view_id(j)) != 0 ? by_id.at(view_id(j)) : nullptr;
    if (a != nullptr) j.policy_state = a->state;
    const bool just_stopped = std::find(stopping.begin(), stopping.end(), view_id(j)) != stopping.end();
    nlohmann::json job_entry = {{"id", id},
                                {"slurm_job_id", slurm_id_json(j)},
                                {"allocated", j.allocation},
                                {"cpus", j.cpus.to_string()},
                                {"run", "stopped"},
                                {"state", j.policy_state},
                                {"reason", a != nullptr ? a->reason : ""}};
    if (just_stopped) changes_json.push_back(job_entry);
    if (log_.is_open()) jobs_json.push_back(std::move(job_entry));
  }
  changed = changed || !stopping.empty() || !resuming.empty();
  const bool may_start_before = may_start_;
  may_start_ = d.may_start;
  may_start_reason_ = d.may_start_reason;
  hold_for_expected(may_start_, may_start_reason_);
  const bool ml_changed = may_start_ != may_start_before;
  if (gate_) gate_->apply(may_start_, now());
  if (d.wake_at) arm_wake(*d.wake_at);

  bool noteworthy = changed || ml_changed || groups_changed || event == policy::Event::arrival || event == policy::Event::departure ||
                    event == policy::Event::report || event == policy::Event::param_change;
  if (noteworthy) {
    nlohmann::json entry = {{"t", now()},
                            {"event", policy::to_string(event)},
                            {"subject", subject},
                            {"policy", policy_->name()},
                            {"may_start", may_start_},
                            {"may_start_reason", may_start_reason_}};
    if (!d.co_schedule.empty()) entry["groups"] = d.co_schedule;  // co-runners: SMT siblings / adjacent cores
    if (log_.is_open()) {
      entry["jobs"] = std::move(jobs_json);
      log_.write(entry);
    }
    entry["jobs"] = std::move(changes_json);
    recent_decisions_.add(entry["t"].get<double>(),
                          entry.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  }
}

bool Daemon::baseline_wanted() const {
  if (cfg_.baseline == "always") return true;
  if (cfg_.baseline == "never") return false;
  return policy_->uses_speedup();
}

// Under --baseline auto a job measures its baseline only where the policy says the check could change a
// decision (Policy::speedup_check_matters; docs/selfanalyzer.md, "Two estimates"): a job PDPA decreases
// whatever the check finds is not slowed for it. --baseline always and never are what they say.
void Daemon::follow_check(Job& j) {
  bool wanted = baseline_wanted();
  if (wanted && cfg_.baseline == "auto") {
    policy::JobView v;
    v.id = view_id(j);
    v.request = j.request;
    v.allocation = j.allocation;
    v.perf = j.perf;
    wanted = policy_->speedup_check_matters(v);
  }
  if (wanted == j.baseline_check) return;
  j.baseline_check = wanted;
  j.arena->set_baseline_wanted(wanted);
  remember_why(j, "check", j.allocation, j.allocation,
               wanted ? "a baseline check could change the policy's decision: it may run"
                      : fmt::format("no baseline check: its waiting-time efficiency {:.2f} at {} bounds its true "
                                    "one, and no check could change the policy's decision",
                                    j.perf.efficiency, j.perf.cpus));
}

bool Daemon::baseline_waits() const { return cfg_.baseline == "auto" && !sharing_; }

// Under --baseline auto, a job's baseline waits while it is alone (our choice; PDPA §3.1 measures every
// job's baseline as it starts). A job alone gets every CPU it asked for whatever its speedup, so a baseline
// then changes no decision and only costs the job: NPB EP class A alone under PDPA on 2 CPUs, whose 16
// iterations last 0.2 s each, spent 4 of them on 1 CPU and took 1.34 times its native time; left alone by
// its neighbour, it ran its last 2.2 s on 1 CPU of 2. The machine is shared while two jobs run or one waits
// for admission (the queuing system's count at may_start). An attempt in progress when the job is left
// alone pauses and keeps its samples (Analyzer::set_baseline_waits).
void Daemon::follow_sharing(const policy::Snapshot& s) {
  if (cfg_.baseline != "auto") return;
  const bool others = s.jobs.size() >= 2;
  const bool sharing = others || s.queued > 0 || s.starting > 0;
  if (sharing == sharing_) return;  // runs at every decision: nothing to do unless it changed
  sharing_ = sharing;
  for (auto& [id, j] : jobs_) {
    j.arena->set_baseline_waits(!sharing);
    if (!baseline_wanted()) continue;
    remember_why(j, "sharing", j.allocation, j.allocation,
                 !sharing ? "alone: its SelfAnalyzer baseline waits"
                 : others ? "another job runs: its SelfAnalyzer baseline may run"
                          : "a job waits for admission: its SelfAnalyzer baseline may run");
  }
}

int Daemon::queued_now() const {
  return queued_at_ >= 0 && now() - queued_at_ <= kQueuedFreshS ? queued_ : 0;
}

int Daemon::starting_now() const {
  return queued_at_ >= 0 && now() - queued_at_ <= kQueuedFreshS ? starting_ : 0;
}

// The job's own account of its teams (rule 5 of docs/architecture.md, "Team sizes a program can observe"):
// a change of team mode, and a formed team that differs from the allocation, each get one `why` line; so
// does a SelfAnalyzer restart (docs/selfanalyzer.md, "Comparing like with like").
void Daemon::note_team(Job& j, const ArenaProgress& p) {
  const ArenaProgress before = j.progress;
  j.progress = p;
  // When the SelfAnalyzer found its period: a policy bounds the wait for the first report from then on, in
  // the job's own iterations (JobView::analyzing_since).
  const bool analyzing = p.phase == proto::Phase::baseline || p.phase == proto::Phase::measuring;
  if (!analyzing) {
    j.analyzing_since = -1;
  } else if (j.analyzing_since < 0) {
    j.analyzing_since = now();
    j.iterations_at_analyzing = p.iterations;
  }
  if (p.team_mode != before.team_mode && p.team_mode != proto::TeamMode::unknown) {
    const std::string mode = proto::team_mode_name(p.team_mode);
    COSCHED_INFO(rm, "job {}: team {}", j.id, mode);
    remember_why(j, "team", j.allocation, j.allocation, "team " + mode);
  }
  if (p.restarts > before.restarts) {
    remember_why(j, "measurement", j.allocation, j.allocation,
                 std::string("measurement restarted: ") + proto::measure_restart_name(p.restart_reason));
  }
  const bool differs = p.last_team > 0 && p.last_team != j.allocation;
  if (differs != j.team_differs) {
    j.team_differs = differs;
    if (differs) {
      remember_why(j, "team", j.allocation, j.allocation,
                   "formed team " + std::to_string(p.last_team) + " differs from the " + std::to_string(j.allocation) +
                       " CPU(s) granted (" + proto::team_mode_name(p.team_mode) + ")");
    }
  }
}

void Daemon::remember_why(Job& j, const std::string& event, int from, int to, const std::string& reason) {
  j.why.push_back({now(), event, from, to, reason});
  while (j.why.size() > kWhyDepth) j.why.pop_front();
}

}  // namespace cosched::rm
