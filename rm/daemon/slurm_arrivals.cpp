// Slurm jobs between their start and their registration. slurmctld starts a job on the node's latest
// answer; the job registers with the RM only when its OpenMP runtime starts, a second or so later. Until then
// the policy cannot count it, and a "yes" it gives meanwhile would let slurmctld start another job on a view
// that misses this one. The prolog (cosched-slurm-prolog) announces each --cosched job as it starts
// (`cosched-ctl expect`); the RM holds its may_start answer at no, and so keeps the node drained, until the
// job registers or kExpectS has passed (a job that never enters OpenMP never registers). qsubmit waits for its
// own jobs the same way (docs/qsubmit.md).
#include "cosched/log.hpp"
#include "daemon.hpp"

namespace cosched::rm {

namespace {
// Our choice, qsubmit's 3 s plus Slurm's own start-up of a batch step (its prolog runs before the script).
constexpr double kExpectS = 5.0;
}  // namespace

void Daemon::expect_slurm_job(std::int64_t slurm_job_id) {
  // A job whose processes already registered (a second step, say) is no news.
  for (const auto& [id, j] : jobs_) {
    if (j.slurm_job_id == slurm_job_id) return;
  }
  expected_[slurm_job_id] = now();
  COSCHED_INFO(rm, "Slurm job {} is starting: no further admission until it registers (at most {:.0f} s)",
               slurm_job_id, kExpectS);
  // The answer changes now (the node is drained at once); each quantum's decision ends the hold in time.
  hold_for_expected(may_start_, may_start_reason_);
  if (gate_) gate_->apply(may_start_, now());
}

void Daemon::registered_slurm_job(std::int64_t slurm_job_id) { expected_.erase(slurm_job_id); }

void Daemon::hold_for_expected(bool& may_start, std::string& reason) {
  const double t = now();
  for (auto it = expected_.begin(); it != expected_.end();) {
    it = t - it->second > kExpectS ? expected_.erase(it) : std::next(it);
  }
  if (!may_start || expected_.empty()) return;
  may_start = false;
  reason = "Slurm job " + std::to_string(expected_.begin()->first) +
           " started and has not registered yet (the policy would say: " + reason + ")";
}

}  // namespace cosched::rm
