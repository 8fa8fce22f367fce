// Variable Time Quantum DSS (Polychronopoulos et al. §3.2.3).
//
// The ready queue (admission order, a ring) is cut into gangs of consecutive jobs, Σρ ≤ 3P each
// (Inequality 5, window.hpp). The last gang of the queue is the *repository queue*: its jobs run only in
// CPUs the gangs leave idle. Each scheduling step runs one gang with DSS (eqs. 1–3) over its jobs; each job
// i of the gang runs for its own quantum q_i, and the step lasts the longest of them. A job whose quantum
// ends before the step's is stopped and its CPUs go to repository jobs "for the remaining time" (§3.2.3).
//
// Accounting, eq. 7: T_i ← T_i + q_i x_i, the CPU time job i was given (x_i its DSS CPUs); a job that fills
// a hole is charged the CPU time it held. Eq. 8: T_w = Σ_gang T_i.
//
// Eq. 9 is printed as q_i = T_w / (n × q_{i−1}). As printed it is not a time (CPU·s over s) and is the same
// for every job of a gang, so it cannot "equate the T_i's among the processes in each gang", which is what
// §3.2.3 says it is for ("to allocate to all processes the same CPU time"). Our reading keeps its
// ingredient, the gang's mean CPU time T_w/n, and gives each job the quantum after which every job of the
// gang has had the same CPU time, the mean plus one base quantum's worth on the gang's mean width x̄:
//     q_i = (T_w/n + q_0·x̄ − T_i) / x_i,   clamped to [q_0/4, 4 q_0]
// (equal T_i and x_i give q_0). q_0 is the base quantum (100 ms in the paper, §3.2.3 and §4; here the RM's
// quantum). The clamp is our choice: it bounds how long a gang can hold the machine and keeps a quantum
// long enough to be worth a stop. A job never scheduled before gets q_0 (§3.2.3: "a basic, uniform, time
// quantum").
//
// Our choices beyond the paper, so that no job starves and no CPU idles while a job waits:
//  - the queue's cut starts each scheduling phase at the previous phase's repository, so the repository is
//    a different set of jobs every phase (the paper's fixed tail could wait for holes for ever);
//  - holes go to repository jobs first, then to any other job that is not in the running gang.
#pragma once

#include <map>

#include "policies/param_spec.hpp"
#include "policies/policy.hpp"
#include "window.hpp"

namespace cosched::policy {

class VtqDss final : public TabledPolicy<VtqDss> {
 public:
  [[nodiscard]] std::string_view name() const override { return "vtq-dss"; }
  [[nodiscard]] std::unique_ptr<Policy> clone() const override { return std::make_unique<VtqDss>(*this); }
  Decision decide(const Snapshot& s) override;
  [[nodiscard]] bool reacts_to_reports() const override { return false; }  // reads no estimate
  static const ParamTable<VtqDss>& param_table();
  void forget(JobId id) override;

  // For tests and traces: the accumulated CPU time T_i of eq. 7 (CPU·s) and the last quantum q_i (s).
  [[nodiscard]] double cpu_time(JobId id) const;
  [[nodiscard]] double quantum(JobId id) const;

 private:
  struct Member {
    JobId id = 0;
    int cpus = 1;
    double until = 0;  // the end of its quantum
  };
  void start_phase(const Snapshot& s);
  void start_step(const Snapshot& s);
  void charge_fillers(double now);
  // The holes (§3.2.3), refilled when they changed: `free` CPUs the `running` gang members leave.
  void refill_holes(const Snapshot& s, const std::vector<JobId>& running, int free, bool new_step);
  // One job's allocation: its gang's DSS share, a hole, or waiting (with a reason if `explain`).
  [[nodiscard]] Allocation allocation_for(const JobView& j, const std::vector<JobId>& running, int P, bool explain) const;

  WindowLimits limits_;
  double min_factor_ = 0.25;  // q_i ≥ q_0/4 (our choice)
  double max_factor_ = 4;     // q_i ≤ 4 q_0 (our choice)

  std::map<JobId, double> cpu_time_;  // T_i, eq. 7
  std::map<JobId, double> quantum_;   // q_i of the job's last step
  std::vector<std::vector<JobId>> gangs_;  // this phase's gangs, in order (the repository excluded)
  std::vector<JobId> repository_;
  std::size_t next_gang_ = 0;
  JobId head_ = -1;                   // where this phase's cut of the queue began
  std::vector<Member> gang_;          // the step running now
  double step_end_ = -1;
  std::map<JobId, std::pair<int, double>> fillers_;  // jobs in the holes: CPUs, charged up to this time
};

}  // namespace cosched::policy
