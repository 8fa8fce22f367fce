#include "format.hpp"

#include <fmt/format.h>

namespace cosched::ctl {

namespace {
std::string num(const nlohmann::json& v, const char* spec) {
  if (!v.is_number()) return "-";
  return fmt::format(fmt::runtime(spec), v.get<double>());
}
}  // namespace

std::string format_status(const nlohmann::json& s) {
  std::string out = fmt::format("policy {}  cpus {}  enforcement {}  stopping {}  quantum {} ms  may-start {} ({})\n",
                                s.value("policy", "?"), s.value("cpu_list", "?"), s.value("enforcement", "?"),
                                s.value("stopping", "?"), s.value("quantum_ms", 0), s.value("may_start", false) ? "yes" : "no",
                                s.value("may_start_reason", ""));
  if (s.contains("params") && !s["params"].empty()) {
    out += "params";
    for (const auto& [k, v] : s["params"].items()) out += fmt::format(" {}={}", k, v.get<std::string>());
    out += "\n";
  }
  out += fmt::format("{:>4} {:>8} {:>4} {:>5} {:<8} {:<8} {:<8} {:>8} {:>8} {:>6} {:>9} {:<10} {:>4} {:<26} {}\n", "JOB",
                     "PID", "REQ", "ALLOC", "CPUS", "RUN", "STATE", "CPU_S", "SPEEDUP", "EFF", "ITER_S", "PHASE", "TEAM", "TEAM_MODE", "COMMAND");
  for (const auto& j : s["jobs"]) {
    std::string state = j.value("policy_state", "");
    if (state.empty()) state = j.value("state", "");
    out += fmt::format("{:>4} {:>8} {:>4} {:>5} {:<8} {:<8} {:<8} {:>8} {:>8} {:>6} {:>9} {:<10} {:>4} {:<26} {}\n",
                       j.value("id", 0), j.value("pid", 0), j.value("requested", 0), j.value("allocated", 0),
                       j.value("cpu_list", ""), j.value("state", ""), state, num(j["cpu_s"], "{:.2f}"), num(j["speedup"], "{:.2f}"), num(j["efficiency"], "{:.2f}"),
                       num(j["iteration_s"], "{:.4f}"), j.value("phase", ""), j.value("team", 0),
                       j.value("team_mode", ""), j.value("command", ""));
  }
  if (s["jobs"].empty()) out += "(no jobs)\n";
  return out;
}

std::string format_why(const nlohmann::json& w) {
  std::string out = fmt::format("job {}{}\n", w.value("job", 0), w.value("running", false) ? "" : " (departed)");
  for (const auto& d : w["decisions"]) {
    out += fmt::format("  t={:9.3f}s {:<12} {:>3} → {:<3} {}\n", d.value("t", 0.0), d.value("event", ""),
                       d.value("from", 0), d.value("to", 0), d.value("reason", ""));
  }
  return out;
}

}  // namespace cosched::ctl
