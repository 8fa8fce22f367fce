// Slurm jobs between their start and their registration. slurmctld starts a job on the node's latest
// answer; the job registers with the RM only when its OpenMP runtime starts, a second or so later. Until then
// the policy cannot count it, and a "yes" it gives meanwhile would let slurmctld start another job on a view
// that misses this one. The prolog (cosched-slurm-prolog) announces each --cosched job as it starts
// (`cosched-ctl expect`); the RM holds its may_start answer at no, and so keeps the node drained, until the
// job registers or Admission::kExpectS has passed (a job that never enters OpenMP never registers). qsubmit waits for its
// own jobs the same way (docs/qsubmit.md).
#include <algorithm>

#include "admission.hpp"
#include "cosched/log.hpp"
#include "daemon.hpp"

namespace cosched::rm {

void Admission::heard(int queued, int starting, int cpus, double t) {
  queued_ = std::max(queued, 0);
  starting_ = std::clamp(starting, 0, cpus);
  queued_at_ = t;
}

void Admission::registered() {
  if (starting_ > 0) {
    --starting_;
  } else if (queued_ > 0) {
    --queued_;
  }
}

void Admission::hold(bool& may_start, std::string& reason, double t) {
  for (auto it = expected_.begin(); it != expected_.end();) {
    it = t - it->second > kExpectS ? expected_.erase(it) : std::next(it);
  }
  if (!may_start || expected_.empty()) return;
  may_start = false;
  reason = "Slurm job " + std::to_string(expected_.begin()->first) +
           " started and has not registered yet (the policy would say: " + reason + ")";
}

void Daemon::expect_slurm_job(std::int64_t slurm_job_id) {
  // A job whose processes already registered (a second step, say) is no news.
  for (const auto& [id, j] : jobs_) {
    if (j.slurm_job_id == slurm_job_id) return;
  }
  admission_.expect(slurm_job_id, now());
  COSCHED_INFO(rm, "Slurm job {} is starting: no further admission until it registers (at most {:.0f} s)",
               slurm_job_id, Admission::kExpectS);
  // The answer changes now (the node is drained at once); each quantum's decision ends the hold in time.
  admission_.hold(may_start_, may_start_reason_, now());
  if (gate_) gate_->apply(may_start_, now());
}

}  // namespace cosched::rm
