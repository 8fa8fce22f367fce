#include "gang.hpp"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>

#include "policies/rotation_key.hpp"


namespace cosched::policy {

std::vector<int> gang_rows(const std::vector<int>& widths, int cpus) {
  std::vector<int> free;  // free columns per row
  std::vector<int> row(widths.size());
  for (std::size_t i = 0; i < widths.size(); ++i) {
    const int w = std::clamp(widths[i], 1, std::max(cpus, 1));
    auto fit = std::find_if(free.begin(), free.end(), [w](int f) { return f >= w; });
    if (fit == free.end()) {
      free.push_back(std::max(cpus, 1));
      fit = free.end() - 1;
    }
    *fit -= w;
    row[i] = static_cast<int>(fit - free.begin());
  }
  return row;
}

std::uint64_t Gang::waited(JobId id) const {
  auto it = last_run_.find(id);
  return it == last_run_.end() ? std::uint64_t{0} : it->second;
}

void Gang::choose_row(const Snapshot& s, const std::vector<int>& rows) {
  const std::size_t n = s.jobs.size();
  bool row_present = false;
  for (JobId id : row_) row_present |= s.find(id) != nullptr;
  if (n == 0 || (s.event != Event::quantum && row_present)) return;
  std::size_t longest = 0;
  std::uint64_t oldest = waited(s.jobs[0].id);
  for (std::size_t i = 1; i < n; ++i) {
    const std::uint64_t w = waited(s.jobs[i].id);
    if (w < oldest) {
      longest = i;
      oldest = w;
    }
  }
  const int chosen = rows[longest];
  ++step_;
  row_.clear();
  for (std::size_t i = 0; i < n; ++i) {
    if (rows[i] == chosen) {
      row_.push_back(s.jobs[i].id);
      last_run_[s.jobs[i].id] = step_;
    }
  }
}

std::vector<char> Gang::fill_idle(const Snapshot& s, const std::vector<int>& width, std::vector<char>& runs) const {
  const std::size_t n = s.jobs.size();
  const int P = std::max(s.machine.cpus, 1);
  int used = 0;
  for (std::size_t i = 0; i < n; ++i) used += runs[i] ? width[i] : 0;
  std::vector<char> alternate(n, 0);
  if (!alternate_ || used >= P) return alternate;
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::vector<std::uint64_t> last_ran(n);  // each job's waited(), looked up once (a sort compares n log n times)
  for (std::size_t i = 0; i < n; ++i) last_ran[i] = waited(s.jobs[i].id);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return last_ran[a] < last_ran[b]; });
  for (std::size_t i : order) {
    if (runs[i] || used + width[i] > P) continue;
    runs[i] = 1;
    alternate[i] = 1;
    used += width[i];
  }
  return alternate;
}

Decision Gang::decide(const Snapshot& s) {
  const int P = std::max(s.machine.cpus, 1);
  const std::size_t n = s.jobs.size();
  std::vector<int> width(n);
  // narrow=1: with more jobs than CPUs a row holds P one-column jobs (gang.hpp says why).
  const bool one_column = narrow_ && n > static_cast<std::size_t>(P);
  for (std::size_t i = 0; i < n; ++i) width[i] = one_column ? 1 : std::clamp(s.jobs[i].request, 1, P);
  const std::vector<int> rows = gang_rows(width, P);
  const int nrows = n == 0 ? 0 : *std::max_element(rows.begin(), rows.end()) + 1;
  choose_row(s, rows);

  std::vector<char> runs(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    runs[i] = std::find(row_.begin(), row_.end(), s.jobs[i].id) != row_.end() ? 1 : 0;
  }
  const std::vector<char> alternate = fill_idle(s, width, runs);

  if (row_labels_.size() != static_cast<std::size_t>(nrows)) {
    row_labels_.clear();
    for (int r = 1; r <= nrows; ++r) row_labels_.push_back(fmt::format("row {}/{}", r, nrows));
  }
  Decision d;
  d.jobs.reserve(n);
  int my_row = -1;
  for (JobId id : row_) {
    for (std::size_t i = 0; i < n; ++i) {
      if (s.jobs[i].id == id) my_row = rows[i];
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    const auto& j = s.jobs[i];
    Allocation a{j.id, width[i], runs[i] != 0, row_labels_[static_cast<std::size_t>(rows[i])], ""};
    if (s.explain && (a.runnable != j.runnable || a.cpus != j.allocation)) {
      if (alternate[i]) {
        a.reason = fmt::format("gang: row {} of {} runs; this job (row {}) fills {} idle CPU(s) of it",
                               my_row + 1, nrows, rows[i] + 1, width[i]);
      } else if (a.runnable) {
        a.reason = one_column
                       ? fmt::format("gang: its row {} of {} runs this quantum on 1 CPU ({} jobs for {} CPUs: one "
                                     "column each, narrow=1)", rows[i] + 1, nrows, n, P)
                       : fmt::format("gang: its row {} of {} runs this quantum on min(ρ={}, P={}) = {} CPU(s)",
                                     rows[i] + 1, nrows, j.request, P, width[i]);
      } else {
        a.reason = fmt::format("gang: row {} of {} runs this quantum; this job's row {} waits", my_row + 1, nrows,
                               rows[i] + 1);
      }
    }
    d.jobs.push_back(std::move(a));
  }
  // Time sharing admits every job: each gets quanta (multiprogramming is bounded by the workload).
  d.may_start = true;
  d.may_start_reason = "gang scheduling gives every job a row";
  return d;
}

bool Gang::rotation_key(std::string& key) const {
  KeyWriter w(key);
  w << alternate_ << narrow_ << row_.size();
  for (JobId id : row_) w << id;
  for (const auto& [id, step] : last_run_) w << id << step_ - step;
  return true;
}

void Gang::skip_rotation(std::uint64_t quanta) {
  // Every decide(quantum) starts one row (choose_row), and a rotation has no other event.
  step_ += quanta;
  for (auto& [id, step] : last_run_) step += quanta;
}

const ParamTable<Gang>& Gang::param_table() {
  static const ParamTable<Gang> t = {
      flag_param<Gang>("alternate",
                       "1: CPUs the running row leaves idle go to other rows' jobs that fit (work conserving, "
                       "default); 0: strict flat gang",
                       member<Gang, long>([](auto& p) -> auto& { return p.alternate_; })),
      flag_param<Gang>("narrow",
                       "1: with more jobs than CPUs every job takes one column, P jobs to a row (default, our "
                       "choice); 0: min(request, P) columns always (Ousterhout's flat gang)",
                       member<Gang, long>([](auto& p) -> auto& { return p.narrow_; })),
  };
  return t;
}

}  // namespace cosched::policy
