#include "history.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <fstream>

#include "table.hpp"

namespace cosched::ctl {

namespace {

bool passes(const nlohmann::json& r, const HistoryFilter& f) {
  if (!f.user.empty() && r.value("user", std::string()) != f.user &&
      std::to_string(r.value("uid", -1L)) != f.user) {
    return false;
  }
  if (f.job && r.value("id", -1L) != *f.job) return false;
  if (f.pid && r.value("pid", -1L) != *f.pid) return false;
  if (f.slurm_job) {
    const auto& s = r.value("slurm_job_id", nlohmann::json());
    if (!s.is_number_integer() || s.get<long>() != *f.slurm_job) return false;
  }
  return true;
}

std::string local_time(const nlohmann::json& epoch) {
  if (!epoch.is_number()) return "-";
  std::time_t t = static_cast<std::time_t>(epoch.get<double>());
  std::tm local{};
  ::localtime_r(&t, &local);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &local);
  return buf;
}

// "2, 1@3.2s, 2@10.0s": the CPUs granted from the start, then each change and when (since the start).
std::string cpus_over_time(const nlohmann::json& steps) {
  if (!steps.is_array() || steps.empty()) return "-";
  std::string out;
  for (const auto& s : steps) {
    if (!s.is_array() || s.size() != 2 || !s[0].is_number() || !s[1].is_number()) continue;
    if (!out.empty()) out += ", ";
    const double at = s[0].get<double>();
    out += std::to_string(s[1].get<long>()) + (out.empty() && at < 0.05 ? "" : fmt::format("@{:.1f}s", at));
  }
  return out;
}

std::string slurm_job(const nlohmann::json& v) { return v.is_number_integer() ? std::to_string(v.get<long>()) : "-"; }

}  // namespace

Result<std::vector<nlohmann::json>> read_history(const std::string& path, const HistoryFilter& filter,
                                                 std::size_t& skipped) {
  std::ifstream in(path);
  if (!in) {
    return make_error(errno == ENOENT ? Errc::not_found : Errc::io_error,
                      "cannot read the accounting records " + path + ": " + std::strerror(errno) +
                          " (no job has left an RM with this socket yet, or it runs with another --accounting)");
  }
  std::vector<nlohmann::json> out;
  skipped = 0;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    auto r = nlohmann::json::parse(line, nullptr, false);
    if (!r.is_object()) {
      ++skipped;
      continue;
    }
    if (passes(r, filter)) out.push_back(std::move(r));
  }
  if (filter.last > 0 && out.size() > filter.last) out.erase(out.begin(), out.end() - static_cast<long>(filter.last));
  return out;
}

std::string format_history(const std::vector<nlohmann::json>& records) {
  std::vector<Column> columns = {{"JOB", true},     {"PID", true},       {"USER"},  {"SLURM_JOB", true}, {"START"},
                                 {"ELAPSED", true}, {"REQ", true},       {"MEAN_CPUS", true}, {"SPEEDUP", true},
                                 {"EFF", true},     {"CPUS_OVER_TIME"},  {"END"},           {"COMMAND"}};
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : records) {
    rows.push_back({std::to_string(r.value("id", -1L)), std::to_string(r.value("pid", -1L)),
                    r.value("user", std::string("?")), slurm_job(r.value("slurm_job_id", nlohmann::json())),
                    local_time(r.value("start", nlohmann::json())),
                    format_elapsed(r.value("elapsed_s", -1.0)), std::to_string(r.value("requested", 0)),
                    number_cell(r.value("mean_cpus", nlohmann::json()), "{:.2f}"), number_cell(r.value("speedup", nlohmann::json()), "{:.2f}"),
                    number_cell(r.value("efficiency", nlohmann::json()), "{:.2f}"),
                    cpus_over_time(r.value("cpus_over_time", nlohmann::json())), r.value("end_reason", std::string()),
                    r.value("command", std::string())});
  }
  if (rows.empty()) return "(no finished jobs)\n";
  return render_table(columns, rows);
}

}  // namespace cosched::ctl
