#include "status_table.hpp"

#include <pwd.h>

#include <algorithm>
#include <cctype>
#include <fmt/format.h>
#include <functional>

#include "table.hpp"

namespace cosched::ctl {

namespace {

using nlohmann::json;
using Getter = std::function<std::string(const json& job, const json& status)>;

// A default column is always shown, or (when_set) only once some listed job has a non-null `when_set` field:
// the Slurm job id shows by default on a Slurm node, and takes no room elsewhere.
struct StatusColumn {
  const char* name;
  Column column;
  bool by_default;
  Getter get;
  const char* when_set = nullptr;
};

std::string text(const json& j, const char* key) {
  if (!j.contains(key)) return "-";
  const json& v = j[key];
  if (v.is_string()) return v.get<std::string>().empty() ? "-" : v.get<std::string>();
  if (v.is_null()) return "-";
  return v.dump();
}

std::string shown_state(const json& j) {
  std::string state = j.value("policy_state", "");
  return state.empty() ? j.value("state", "") : state;
}

const std::vector<StatusColumn>& registry() {
  static const std::vector<StatusColumn> columns = {
      {"job", {"JOB", true}, true, [](const json& j, const json&) { return text(j, "id"); }},
      {"pid", {"PID", true}, true, [](const json& j, const json&) { return text(j, "pid"); }},
      {"user", {"USER"}, true, [](const json& j, const json&) { return user_name(j.value("uid", -1L)); }},
      {"elapsed", {"ELAPSED", true}, true,
       [](const json& j, const json& s) {
         return format_elapsed(s.value("uptime_s", 0.0) - j.value("arrival_s", 0.0));
       }},
      {"req", {"REQ", true}, true, [](const json& j, const json&) { return text(j, "requested"); }},
      {"alloc", {"ALLOC", true}, true, [](const json& j, const json&) { return text(j, "allocated"); }},
      {"cpus", {"CPUS"}, true, [](const json& j, const json&) { return text(j, "cpu_list"); }},
      {"run", {"RUN"}, true, [](const json& j, const json&) { return text(j, "state"); }},
      {"state", {"STATE"}, true, [](const json& j, const json&) { return text(j, "policy_state"); }},
      {"cpu_s", {"CPU_S", true}, false, [](const json& j, const json&) { return number_cell(j.value("cpu_s", json()), "{:.2f}"); }},
      {"speedup", {"SPEEDUP", true}, true, [](const json& j, const json&) { return number_cell(j.value("speedup", json()), "{:.2f}"); }},
      {"eff", {"EFF", true}, true, [](const json& j, const json&) { return number_cell(j.value("efficiency", json()), "{:.2f}"); }},
      {"iter_s", {"ITER_S", true}, true,
       [](const json& j, const json&) { return number_cell(j.value("iteration_s", json()), "{:.4f}"); }},
      {"phase", {"PHASE"}, true, [](const json& j, const json&) { return text(j, "phase"); }},
      {"team", {"TEAM", true}, true, [](const json& j, const json&) { return text(j, "team"); }},
      {"team_mode", {"TEAM_MODE"}, true, [](const json& j, const json&) { return text(j, "team_mode"); }},
      {"cpu_wait", {"CPU_WAIT", true}, false, [](const json& j, const json&) { return number_cell(j.value("cpu_wait", json()), "{:.2f}"); }},
      {"no_speedup", {"NO_SPEEDUP"}, false, [](const json& j, const json&) { return text(j, "no_speedup"); }},
      {"restarts", {"RESTARTS", true}, false, [](const json& j, const json&) { return text(j, "measurement_restarts"); }},
      {"bw", {"BW_MB/S", true}, false,
       [](const json& j, const json&) {
         const json bw = j.value("bandwidth", json());
         const json v = bw.is_object() ? bw.value("window_bytes_per_s", json()) : json();
         return v.is_number() ? fmt::format("{:.1f}", v.get<double>() / 1e6) : "-";
       }},
      {"bw_source", {"BW_SOURCE"}, false,
       [](const json& j, const json&) {
         const json bw = j.value("bandwidth", json());
         return bw.is_object() ? text(bw, "source") : "-";
       }},
      {"slowdown", {"SLOWDOWN", true}, false,
       [](const json& j, const json&) {
         const json bw = j.value("bandwidth", json());
         return bw.is_object() ? number_cell(bw.value("slowdown", json()), "{:.2f}") : "-";
       }},
      {"slurm_job", {"SLURM_JOB", true}, true, [](const json& j, const json&) { return text(j, "slurm_job_id"); },
       "slurm_job_id"},
      {"command", {"COMMAND"}, true, [](const json& j, const json&) { return text(j, "command"); }},
  };
  return columns;
}

const StatusColumn* find_column(const std::string& name) {
  for (const auto& c : registry()) {
    if (name == c.name) return &c;
  }
  return nullptr;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

}  // namespace

std::string user_name(long uid) {
  if (uid < 0) return "-";
  passwd pw{};
  passwd* found = nullptr;
  char buf[1024];
  if (::getpwuid_r(static_cast<uid_t>(uid), &pw, buf, sizeof buf, &found) == 0 && found != nullptr) return found->pw_name;
  return std::to_string(uid);
}

std::string known_columns() {
  std::string out;
  for (const auto& c : registry()) out += (out.empty() ? "" : ",") + std::string(c.name);
  return out;
}

Result<std::vector<std::string>> parse_columns(const std::string& spec) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (pos <= spec.size()) {
    std::size_t end = spec.find(',', pos);
    if (end == std::string::npos) end = spec.size();
    std::string name = lower(spec.substr(pos, end - pos));
    if (!name.empty()) {
      if (find_column(name) == nullptr) {
        return make_error(Errc::invalid_argument, "--format: unknown column '" + name + "' (known: " + known_columns() + ")");
      }
      out.push_back(name);
    }
    pos = end + 1;
  }
  if (out.empty()) return make_error(Errc::invalid_argument, "--format: no column named (known: " + known_columns() + ")");
  return out;
}

void filter_jobs(json& status, const StatusView& view) {
  if (!status.contains("jobs") || !status["jobs"].is_array()) return;
  json kept = json::array();
  for (auto& j : status["jobs"]) {
    if (!view.user.empty() && user_name(j.value("uid", -1L)) != view.user &&
        std::to_string(j.value("uid", -1L)) != view.user) {
      continue;
    }
    if (!view.state.empty() && lower(view.state) != lower(shown_state(j)) &&
        lower(view.state) != lower(j.value("state", ""))) {
      continue;
    }
    kept.push_back(std::move(j));
  }
  status["jobs"] = std::move(kept);
}

std::string format_jobs(const json& status, const StatusView& view) {
  std::vector<const StatusColumn*> chosen;
  const json jobs = status.value("jobs", json::array());
  auto any_set = [&jobs](const char* key) {
    return std::any_of(jobs.begin(), jobs.end(), [key](const json& j) { return j.contains(key) && !j[key].is_null(); });
  };
  if (view.columns.empty()) {
    for (const auto& c : registry()) {
      if (c.by_default && (c.when_set == nullptr || any_set(c.when_set))) chosen.push_back(&c);
    }
  } else {
    for (const auto& name : view.columns) chosen.push_back(find_column(name));  // parse_columns checked them
  }
  std::vector<Column> columns;
  for (const auto* c : chosen) columns.push_back(c->column);
  std::vector<std::vector<std::string>> rows;
  for (const auto& j : jobs) {
    std::vector<std::string> row;
    for (const auto* c : chosen) row.push_back(c->get(j, status));
    rows.push_back(std::move(row));
  }
  if (rows.empty()) return "(no jobs)\n";
  return render_table(columns, rows);
}

}  // namespace cosched::ctl
