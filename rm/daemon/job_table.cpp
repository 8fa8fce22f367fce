// The job table's views (job_table.hpp).
#include "job_table.hpp"

#include <algorithm>

#include "cosched/log.hpp"
#include "rm/placement/cpu_sharing.hpp"
#include "rm/slurm/slurm_confinement.hpp"
#include "time_sharing.hpp"

namespace cosched::rm {

void join_gang(GangTable& gangs, Job& j) {
  j.gang = j.id;
  bool joined = false;
  for (auto& [gid, g] : gangs) {
    if (g.uid == j.uid && g.key == j.job_key) {
      j.gang = gid;
      joined = true;
    }
  }
  if (!joined) gangs[j.id] = Gang{j.uid, j.job_key, {}, 0, {}};
  gangs[j.gang].members.push_back(j.id);
}

bool leave_gang(GangTable& gangs, const Job& j) {
  auto& members = gangs[j.gang].members;
  members.erase(std::remove(members.begin(), members.end(), j.id), members.end());
  if (!members.empty()) return false;
  gangs.erase(j.gang);
  return true;
}

std::vector<Unit> units(JobTable& jobs) {
  std::vector<Unit> out;
  std::map<policy::JobId, std::size_t> at;  // job id → index in out
  for (auto& [id, j] : jobs) {  // admission order: a job's place is its first process's
    const policy::JobId v = view_id(j);
    auto [it, fresh] = at.emplace(v, out.size());
    if (fresh) out.push_back(Unit{v, {}});
    out[it->second].members.push_back(&j);
  }
  for (Unit& u : out) {
    std::stable_sort(u.members.begin(), u.members.end(), [](const Job* a, const Job* b) { return a->rank < b->rank; });
  }
  return out;
}

bool stop_unit(Stopper& stopper, Unit& u, const std::string& reason, double t) {
  for (Job* m : u.members) {
    if (m->runnable && m->arena->job_writing()) {
      for (Job* n : u.members) {
        remember_why(*n, t, "stop deferred", n->allocation, n->allocation,
                     "a process of the job is writing its report; " + reason);
      }
      return false;
    }
  }
  // All or none: a process that began a write since the check above is stopped too (the check and the stop are
  // never atomic; it costs that report's delay), never left running alone for a quantum while its partners
  // are stopped (seen as one rank of a gang stopped without the other for a whole quantum).
  bool any = false;
  for (Job* m : u.members) {
    if (m->runnable) any = stop_job(stopper, *m, reason, t, /*writing_checked=*/true) || any;
  }
  return any;
}

policy::JobView job_view(const Unit& u, const GangTable& gangs, const sensors::SensorSet& sensors) {
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
  v.bandwidth = sensors.bandwidth(processes);
  v.network = sensors.network(processes);
  v.rate = j.rate;
  if (j.gang != 0 && u.members.size() > 1) {
    // A job of several processes: what they ask for together, the allocation they share. A rank's speedup
    // is not the job's (measured at its share, with its partners' pace), so it reports none.
    const Gang& g = gangs.at(u.id);
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
  return v;
}

int fixed_team(const Job& j) {
  const proto::TeamMode m = j.progress.team_mode;
  const bool fixed =
      m != proto::TeamMode::unknown && m != proto::TeamMode::resizable && m != proto::TeamMode::malleable;
  return fixed ? j.progress.last_team : 0;
}

std::vector<CoreJob> core_jobs(const std::vector<Unit>& all, const GangTable& gangs) {
  std::vector<CoreJob> out;
  out.reserve(all.size());
  for (const Unit& u : all) {
    if (std::any_of(u.members.begin(), u.members.end(), [](const Job* m) { return m->suspended; })) continue;
    const Job& lead = *u.members.front();
    CoreJob c;
    c.id = u.id;
    c.several = lead.gang != 0;
    c.allocation = c.several ? gangs.at(u.id).allocation : lead.allocation;
    c.cpus = c.several ? gangs.at(u.id).cpus : lead.cpus;
    c.allowed = allowed_cpus(u.members);  // a Slurm job stays inside the CPUs Slurm gave it
    // A fixed team weighs as its threads only where the kernel shares CPUs per thread: in a cpu cgroup of its
    // own (--cpu-share job) it gets one job's share of each CPU, however many threads it runs there.
    if (!c.several && lead.share_dir.empty()) c.threads = fixed_team(lead);
    for (const Job* m : u.members) c.processes.push_back({m->id, m->allocation, m->cpus, m->runnable, m->policy_state});
    out.push_back(std::move(c));
  }
  return out;
}

void note_cpu_sharing(JobTable& jobs) {
  std::vector<Job*> running;
  std::vector<const CpuSet*> sets;
  for (auto& [id, j] : jobs) {
    if (j.arena == nullptr) continue;
    if (!j.runnable || j.suspended) {
      j.arena->set_cpus_shared(false);
      continue;
    }
    running.push_back(&j);
    sets.push_back(&j.cpus);
  }
  const std::vector<char> shared = sharing_a_cpu(sets);
  for (std::size_t i = 0; i < running.size(); ++i) running[i]->arena->set_cpus_shared(shared[i] != 0);
}

// The job's own account of its teams (rule 5 of docs/architecture.md, "Team sizes a program can observe"):
// a change of team mode, and a formed team that differs from the allocation, each get one `why` line; so
// does a SelfAnalyzer restart (docs/selfanalyzer.md, "Comparing like with like").
void note_team(Job& j, const ArenaProgress& p, double t) {
  const ArenaProgress before = j.progress;
  j.progress = p;
  // When the SelfAnalyzer found its period: a policy bounds the wait for the first report from then on, in
  // the job's own iterations (JobView::analyzing_since).
  const bool analyzing = p.phase == proto::Phase::baseline || p.phase == proto::Phase::measuring;
  if (!analyzing) {
    j.analyzing_since = -1;
  } else if (j.analyzing_since < 0) {
    j.analyzing_since = t;
    j.iterations_at_analyzing = p.iterations;
  }
  if (p.team_mode != before.team_mode && p.team_mode != proto::TeamMode::unknown) {
    const std::string mode = proto::team_mode_name(p.team_mode);
    COSCHED_INFO(rm, "job {}: team {}", j.id, mode);
    remember_why(j, t, "team", j.allocation, j.allocation, "team " + mode);
  }
  if (p.restarts > before.restarts) {
    remember_why(j, t, "measurement", j.allocation, j.allocation,
                 std::string("measurement restarted: ") + proto::measure_restart_name(p.restart_reason));
  }
  const bool differs = p.last_team > 0 && p.last_team != j.allocation;
  if (differs != j.team_differs) {
    j.team_differs = differs;
    if (differs) {
      remember_why(j, t, "team", j.allocation, j.allocation,
                   "formed team " + std::to_string(p.last_team) + " differs from the " + std::to_string(j.allocation) +
                       " CPU(s) granted (" + proto::team_mode_name(p.team_mode) + ")");
    }
  }
}

}  // namespace cosched::rm
