// The job table's views, a room of the daemon: the processes the RM holds (Job, by record id, in admission
// order), grouped into the jobs a policy sees (Unit: a job of its own, or the ranks of a job of several), and
// what the policy and the decision core are given of each. Pure functions of the table, for unit tests.
#pragma once

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

#include "rm/decision/decision_core.hpp"
#include "rm/enforce/stopper.hpp"
#include "rm/job/job.hpp"
#include "sensors/sensor_set.hpp"

namespace cosched::rm {

// One policy-visible job: a job of its own, or the processes (ranks) of a job of several, in rank order.
struct Unit {
  policy::JobId id = 0;
  std::vector<Job*> members;
};

// A job of several processes on this node (an MPI job): its key, members and what the policy gave it.
struct Gang {
  uid_t uid = 0;
  std::string key;
  std::vector<policy::JobId> members;  // record ids, in registration order
  int allocation = 0;
  CpuSet cpus;
};

using JobTable = std::map<policy::JobId, Job>;
using GangTable = std::map<policy::JobId, Gang>;

// The id the policy knows a process by: its job of several, or its own.
inline policy::JobId view_id(const Job& j) { return j.gang != 0 ? j.gang : j.id; }

// A process of a job of several (j.job_key set) joins the job its key names under its own uid, never another
// user's; the first one founds it, and its id is the job's (j.gang).
void join_gang(GangTable& gangs, Job& j);
// The process leaves its job of several; true when it was the last one (the job is gone too).
bool leave_gang(GangTable& gangs, const Job& j);

// The policy's jobs, in admission order (a job's place is its first process's), each one's processes in rank order.
std::vector<Unit> units(JobTable& jobs);
// What the policy sees of one job: a job of several asks for what its processes ask together and shares
// their allocation; none asks for more CPUs than Slurm let it use.
policy::JobView job_view(const Unit& u, const GangTable& gangs, const sensors::SensorSet& sensors);
// The team the job keeps whatever its allocation (a fixed team mode: GROMACS' -ntomp, omp_set_num_threads,
// num_threads clauses, threadprivate data), as it last formed it; 0 for a team that follows the allocation.
// Placement spreads it as threads where it outnumbers the CPUs placed (PlaceRequest::threads).
int fixed_team(const Job& j);
// The table as the decision core takes it (rm/decision/decision_core.hpp). A job stopped by a signal from
// outside is left out: it cannot use CPUs, and keeps its allocation and CPU set, which placement may lend.
std::vector<CoreJob> core_jobs(const std::vector<Unit>& all, const GangTable& gangs);
// Stops every process of the job or none (one writing its report defers them all: a rank never spins while
// its partner is stopped). Returns whether they were stopped.
bool stop_unit(Stopper& stopper, Unit& u, const std::string& reason, double t);
// Tells each process whether another running process's threads may use one of its CPUs
// (proto::rm_cpus_shared); a process stopped by the RM or from outside competes for none.
void note_cpu_sharing(JobTable& jobs);
// What the job wrote of its progress, kept; a change of team mode, a formed team that differs from the
// allocation, and a SelfAnalyzer restart each get one `why` line at `t`.
void note_team(Job& j, const ArenaProgress& p, double t);

}  // namespace cosched::rm
