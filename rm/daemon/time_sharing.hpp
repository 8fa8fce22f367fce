// Time sharing, a room of the daemon: the policy's `runnable` applied by stopping and resuming whole jobs
// through the Stopper chosen at start (time_sharing.cpp), and the jobs stopped by someone else, a user's
// SIGSTOP or a debugger (suspended.cpp). Each takes the RM time `t` its `why` lines carry.
#pragma once

#include <map>
#include <string>

#include "policies/policy.hpp"
#include "rm/enforce/stopper.hpp"
#include "rm/job/job.hpp"

namespace cosched::rm {

// Stops the job, unless it is writing its report (deferred to the next decision) or the stopper fails;
// returns whether it was stopped. `writing_checked`: the caller checked the report's seqlock already (for
// every process of a job at once), so a write begun since does not defer this stop.
bool stop_job(Stopper& stopper, Job& j, const std::string& reason, double t, bool writing_checked = false);
void resume_job(Stopper& stopper, Job& j, const std::string& reason, double t);
// Back to native, whatever the job's state: thawed or continued, out of the RM's freezer cgroup.
void release_stop(Stopper& stopper, Job& j);
// Marks the jobs that someone else stopped, or that continued, since the last call (from /proc); true when
// any changed.
bool track_suspended(std::map<policy::JobId, Job>& jobs, double t);

}  // namespace cosched::rm
