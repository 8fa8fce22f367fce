// Time sharing: the daemon applies the policy's `runnable` by stopping and resuming whole jobs through the
// Stopper chosen at start (rm/enforce/stopper.hpp). Stops happen only inside a decision, i.e. between
// quanta. A job is never stopped while it writes its report (its seqlock odd): that stop waits for the next
// decision. The RM never reads the report of a stopped job (Daemon::poll_reports), so a job frozen just after it
// began a write (the check and the freeze are not atomic) costs nothing but that report's delay.
#include "cosched/log.hpp"
#include "time_sharing.hpp"

namespace cosched::rm {

bool stop_job(Stopper& stopper, Job& j, const std::string& reason, double t, bool writing_checked) {
  if (!writing_checked && j.arena->job_writing()) {
    remember_why(j, t, "stop deferred", j.allocation, j.allocation, "the job is writing its report; " + reason);
    return false;
  }
  if (auto st = stopper.stop(j); !st) {
    COSCHED_WARN(rm, "job {}: cannot stop it ({}): it keeps running", j.id, st.error().message);
    remember_why(j, t, "stop failed", j.allocation, j.allocation, st.error().message);
    return false;
  }
  j.arena->set_runnable(false);
  j.runnable = false;
  j.sensor_mark.open = false;  // it ran only part of the interval
  j.stopped_at = t;
  COSCHED_DEBUG(rm, "job {} stopped ({}): {}", j.id, stopper.name(), reason);
  remember_why(j, t, "stop", j.allocation, j.allocation, reason);
  return true;
}

void resume_job(Stopper& stopper, Job& j, const std::string& reason, double t) {
  j.arena->count_stop();  // while still stopped: see ArenaHost::count_stop
  j.arena->set_runnable(true);
  if (auto st = stopper.resume(j); !st) {
    COSCHED_ERROR(rm, "job {}: cannot resume it: {}", j.id, st.error().message);
  }
  j.runnable = true;
  ++j.stops;
  j.stopped_s += t - j.stopped_at;
  COSCHED_DEBUG(rm, "job {} resumed: {}", j.id, reason);
  remember_why(j, t, "resume", j.allocation, j.allocation, reason);
}

void release_stop(Stopper& stopper, Job& j) {
  stopper.release(j);  // reads j.runnable (the signal backend continues only a job it stopped)
  if (!j.runnable) {
    j.arena->count_stop();
    j.arena->set_runnable(true);
    j.runnable = true;
  }
}

}  // namespace cosched::rm
