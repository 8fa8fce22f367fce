// Gang scheduling (Ousterhout, "Scheduling Techniques for Concurrent Systems", 1982), the flat gang
// comparator of Polychronopoulos et al. §4: jobs are packed into rows of P columns (first fit, admission
// order, a job taking min(ρ, P) columns); one row runs per quantum, all its jobs at once, the others
// stopped. Rows run in round robin: each quantum the row holding the job that has waited longest since it
// last ran (ties: the oldest job) — a plain round robin over rows that stays fair when rows are re-packed
// after arrivals and departures, so no job starves.
//
// alternate=1 (default, our choice for work conservation): CPUs the chosen row leaves idle go to jobs of
// other rows that fit in them whole, longest-waiting first (Ousterhout's alternate selection). alternate=0
// is the strict flat gang: idle columns stay idle, by design.
//
// narrow=1 (default, our choice, not Ousterhout's): with more jobs than CPUs, every job takes one column, so
// a row holds P jobs and each job runs a 1-CPU team (libcosched resizes it, or narrows a fixed team's CPUs).
// Each job then gets the CPU time the static partition gives it (one CPU, 1/rows of the time) at its
// one-CPU efficiency, not P CPUs for 1/n of the time at its P-CPU efficiency: with 6 jobs on 2 CPUs the flat
// gang took 1.11-1.12× the static partition's mean response (bench/real-apps, docs/performance.md).
// narrow=0 keeps min(ρ, P) columns whatever the load (the comparator of Polychronopoulos et al. §4).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "policies/param_spec.hpp"
#include "policies/policy.hpp"

namespace cosched::policy {

class Gang final : public TabledPolicy<Gang> {
 public:
  [[nodiscard]] std::string_view name() const override { return "gang"; }
  [[nodiscard]] std::unique_ptr<Policy> clone() const override { return std::make_unique<Gang>(*this); }
  Decision decide(const Snapshot& s) override;
  [[nodiscard]] bool reacts_to_reports() const override { return false; }  // reads no estimate
  static const ParamTable<Gang>& param_table();
  void forget(JobId id) override { last_run_.erase(id); }
  // The row running and each job's age (steps since its row last ran); skipping a rotation moves the step
  // counter and every last run on by one a quantum tick, as decide(quantum) does.
  bool rotation_key(std::string& key) const override;
  void skip_rotation(std::uint64_t quanta) override;

 private:
  // The step in which the job's row last ran (0: never): smaller has waited longer.
  [[nodiscard]] std::uint64_t waited(JobId id) const;
  // The row keeps running until the quantum ends; a new row, the one of the job that waited longest, when
  // the quantum ends or none of it is left.
  void choose_row(const Snapshot& s, const std::vector<int>& rows);
  // alternate=1: jobs of other rows that fit the CPUs the row leaves idle, longest waiting first; marks them
  // in `runs` and returns which they are.
  std::vector<char> fill_idle(const Snapshot& s, const std::vector<int>& width, std::vector<char>& runs) const;

  bool alternate_ = true;
  bool narrow_ = true;
  std::uint64_t step_ = 0;             // rows started so far
  std::vector<JobId> row_;             // the jobs of the row now running
  std::map<JobId, std::uint64_t> last_run_;  // the step in which each job's row last ran
  std::vector<std::string> row_labels_;      // "row k/n" for k = 1..n, kept while n stays (a decision a quantum)
};

// Ousterhout's matrix for these widths (min(ρ, P) each): the row index of every job, first fit.
std::vector<int> gang_rows(const std::vector<int>& widths, int cpus);

}  // namespace cosched::policy
