// read_run: a run directory back into a Run. summary.json (metadata) and jobs.csv are required;
// allocation.csv and ml.csv are read when present. Columns are found by header name, so extra columns or a
// different order still read. Every error names the file and line.
#include <filesystem>
#include <limits>
#include <map>
#include <unordered_map>

#include "qs/results.hpp"
#include "qs/results_text.hpp"

namespace cosched::results {

namespace {

// One CSV table: the header's column positions and the data rows, each with its line number.
struct Table {
  std::string path;
  std::unordered_map<std::string, std::size_t> column;
  std::vector<std::pair<int, std::vector<std::string>>> rows;
};

Result<Table> read_table(const std::string& path, std::initializer_list<const char*> required) {
  auto content = text::read_file(path);
  if (!content) return content.error();
  Table table;
  table.path = path;
  std::size_t pos = 0;
  int line_no = 0;
  const std::string& all = *content;
  while (pos < all.size()) {
    std::size_t nl = all.find('\n', pos);
    std::string_view line(all.data() + pos, (nl == std::string::npos ? all.size() : nl) - pos);
    pos = nl == std::string::npos ? all.size() : nl + 1;
    ++line_no;
    if (line.empty() || line == "\r") continue;
    auto fields = text::split_csv(line);
    if (!fields) return make_error(Errc::parse_error, path + ":" + std::to_string(line_no) + ": unclosed quote");
    if (table.column.empty()) {
      for (std::size_t i = 0; i < fields->size(); ++i) table.column[(*fields)[i]] = i;
      continue;
    }
    table.rows.emplace_back(line_no, std::move(*fields));
  }
  for (const char* name : required) {
    if (!table.column.count(name)) {
      return make_error(Errc::parse_error, path + ": header lacks the column '" + std::string(name) + "'");
    }
  }
  return table;
}

// Field access for one row, with messages naming file:line and column.
class RowReader {
 public:
  RowReader(const Table& t, int line, const std::vector<std::string>& fields) : t_(t), line_(line), f_(fields) {}

  [[nodiscard]] std::string text(const std::string& column) const {
    auto it = t_.column.find(column);
    return it != t_.column.end() && it->second < f_.size() ? f_[it->second] : std::string();
  }
  // A number; `fallback` when the column is absent or empty.
  Result<double> number(const std::string& column, double fallback) const {
    std::string s = text(column);
    if (s.empty()) return fallback;
    if (auto v = text::parse_number(s)) return *v;
    return make_error(Errc::parse_error,
                      t_.path + ":" + std::to_string(line_) + ": column '" + column + "': '" + s + "' is not a number");
  }

 private:
  const Table& t_;
  int line_;
  const std::vector<std::string>& f_;
};

// Numbers from a file may be anything; out-of-range values saturate instead of being undefined behaviour.
template <typename Int>
Int saturate(double v) {
  constexpr double lo = static_cast<double>(std::numeric_limits<Int>::min());
  constexpr double hi = static_cast<double>(std::numeric_limits<Int>::max());
  return v <= lo ? std::numeric_limits<Int>::min() : v >= hi ? std::numeric_limits<Int>::max() : static_cast<Int>(v);
}

#define COSCHED_TRY_ASSIGN(target, expr) \
  do {                                   \
    auto r_ = (expr);                    \
    if (!r_) return r_.error();          \
    (target) = *r_;                      \
  } while (0)

Status read_jobs(const std::string& dir, Run& run) {
  auto table = read_table(dir + "/jobs.csv", {"job", "submit", "start", "end"});
  if (!table) return table.error();
  for (const auto& [line, fields] : table->rows) {
    RowReader row(*table, line, fields);
    JobRecord j;
    double id = 0;
    double requested = 1;
    double status = 0;
    double rm_id = -1;
    double pid = -1;
    COSCHED_TRY_ASSIGN(id, row.number("job", 0));
    COSCHED_TRY_ASSIGN(j.submit, row.number("submit", 0));
    COSCHED_TRY_ASSIGN(j.start, row.number("start", -1));
    COSCHED_TRY_ASSIGN(j.end, row.number("end", -1));
    COSCHED_TRY_ASSIGN(requested, row.number("requested", 1));
    COSCHED_TRY_ASSIGN(status, row.number("exit_status", 0));
    COSCHED_TRY_ASSIGN(rm_id, row.number("rm_id", -1));  // absent in results written before they existed
    COSCHED_TRY_ASSIGN(pid, row.number("pid", -1));
    j.id = saturate<std::int64_t>(id);
    j.rm_id = saturate<std::int64_t>(rm_id);
    j.pid = saturate<std::int64_t>(pid);
    j.requested = saturate<int>(requested);
    j.exit_status = saturate<int>(status);
    j.app = row.text("app");
    j.app_class = row.text("class");
    run.jobs.push_back(std::move(j));
  }
  return {};
}

Status read_allocation(const std::string& dir, Run& run) {
  std::string path = dir + "/allocation.csv";
  if (!std::filesystem::exists(path)) return {};
  auto table = read_table(path, {"job", "t0", "t1", "cpus"});
  if (!table) return table.error();
  std::map<std::int64_t, JobRecord*> by_id;
  for (auto& j : run.jobs) by_id.emplace(j.id, &j);  // the first of duplicated ids gets the segments
  for (const auto& [line, fields] : table->rows) {
    RowReader row(*table, line, fields);
    double id = 0;
    double cpus = 0;
    CpuSegment s;
    COSCHED_TRY_ASSIGN(id, row.number("job", 0));
    COSCHED_TRY_ASSIGN(s.t0, row.number("t0", 0));
    COSCHED_TRY_ASSIGN(s.t1, row.number("t1", 0));
    COSCHED_TRY_ASSIGN(cpus, row.number("cpus", 0));
    s.cpus = saturate<int>(cpus);
    std::string list = row.text("cpu_list");
    for (std::size_t p = 0; p < list.size();) {
      std::size_t q = list.find(' ', p);
      std::string token = list.substr(p, q == std::string::npos ? std::string::npos : q - p);
      p = q == std::string::npos ? list.size() : q + 1;
      if (token.empty()) continue;
      auto cpu = text::parse_number(token);
      if (!cpu) {
        return make_error(Errc::parse_error, path + ":" + std::to_string(line) + ": column 'cpu_list': '" + token +
                                                 "' is not a CPU number");
      }
      s.cpu_list.push_back(saturate<int>(*cpu));
    }
    auto it = by_id.find(saturate<std::int64_t>(id));
    if (it == by_id.end()) {
      return make_error(Errc::parse_error, path + ":" + std::to_string(line) + ": job " +
                                               std::to_string(saturate<std::int64_t>(id)) + " is not in jobs.csv");
    }
    it->second->allocation.push_back(std::move(s));
  }
  return {};
}

Status read_ml(const std::string& dir, Run& run) {
  std::string path = dir + "/ml.csv";
  if (!std::filesystem::exists(path)) return {};
  auto table = read_table(path, {"t", "running"});
  if (!table) return table.error();
  for (const auto& [line, fields] : table->rows) {
    RowReader row(*table, line, fields);
    MlSample m;
    double running = 0;
    double queued = 0;
    COSCHED_TRY_ASSIGN(m.t, row.number("t", 0));
    COSCHED_TRY_ASSIGN(running, row.number("running", 0));
    COSCHED_TRY_ASSIGN(queued, row.number("queued", 0));
    m.running = saturate<int>(running);
    m.queued = saturate<int>(queued);
    run.ml.push_back(m);
  }
  return {};
}

Status read_metadata(const std::string& dir, Run& run) {
  std::string path = dir + "/summary.json";
  auto content = text::read_file(path);
  if (!content) return content.error();
  nlohmann::json s = nlohmann::json::parse(*content, nullptr, /*allow_exceptions=*/false);
  if (s.is_discarded()) return make_error(Errc::parse_error, path + ": not valid JSON");
  if (!s.is_object()) return make_error(Errc::parse_error, path + ": not a JSON object");
  // value() throws on a type mismatch; a hand-edited file must give an error, not an exception.
  auto field = [&](const char* key, auto fallback) {
    auto it = s.find(key);
    using T = decltype(fallback);
    if (it == s.end()) return fallback;
    if constexpr (std::is_same_v<T, std::string>) {
      return it->is_string() ? it->template get<std::string>() : fallback;
    } else {
      return it->is_number() ? it->template get<T>() : fallback;
    }
  };
  run.name = field("name", std::string());
  run.mode = field("mode", std::string());
  run.policy = field("policy", std::string());
  run.workload = field("workload", std::string());
  run.machine_cpus = saturate<int>(field("machine_cpus", 1.0));
  run.time_scale = field("time_scale", 1.0);
  run.unmanaged_jobs = saturate<int>(field("unmanaged_jobs", -1.0));
  run.skipped_lines = saturate<std::int64_t>(field("skipped_lines", 0.0));
  if (auto it = s.find("params"); it != s.end()) run.params = *it;
  return {};
}

}  // namespace

Result<Run> read_run(const std::string& dir) {
  Run run;
  for (auto step : {read_metadata, read_jobs, read_allocation, read_ml}) {
    if (Status st = step(dir, run); !st) return st.error();
  }
  return run;
}

}  // namespace cosched::results
