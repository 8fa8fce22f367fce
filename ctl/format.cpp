#include "format.hpp"

#include <fmt/format.h>

#include "status_table.hpp"

namespace cosched::ctl {

std::string format_status(const nlohmann::json& s, const StatusView& view) {
  std::string out = fmt::format("policy {}  cpus {}  enforcement {}  cpu-share {}  stopping {}  quantum {} ms  "
                                "may-start {} ({})\n",
                                s.value("policy", "?"), s.value("cpu_list", "?"), s.value("enforcement", "?"),
                                s.value("cpu_share", "?"), s.value("stopping", "?"), s.value("quantum_ms", 0), s.value("may_start", false) ? "yes" : "no",
                                s.value("may_start_reason", ""));
  if (s.contains("sensor") && s["sensor"].is_object()) {
    // The bandwidth sensor in use, and why the ones before it in the chain are not.
    const auto& sen = s["sensor"];
    out += fmt::format("sensor {}", sen.value("backend", "?"));
    // How often, over what window and in which unit a job's samples come (Antonopoulos et al. §4: twice per
    // quantum, a window of 5).
    if (sen.contains("sampling") && sen["sampling"].is_object()) {
      const auto& sm = sen["sampling"];
      out += fmt::format(", {} sample(s) per {} ms quantum, window {}, {}", sm.value("samples_per_quantum", 0),
                         sm.value("quantum_ms", 0), sen.value("window", 0), sen.value("unit", "?"));
    }
    if (sen.contains("observed") && sen["observed"].is_array() && !sen["observed"].empty()) {
      out += "  (also observed:";
      for (const auto& o : sen["observed"]) out += " " + o.get<std::string>();
      out += ")";
    }
    if (sen.contains("unavailable") && sen["unavailable"].is_array()) {
      for (const auto& u : sen["unavailable"]) {
        out += fmt::format("  ({} unavailable: {})", u.value("name", "?"), u.value("why", ""));
      }
    }
    out += "\n";
  }
  if (s.contains("params") && !s["params"].empty()) {
    out += "params";
    for (const auto& [k, v] : s["params"].items()) out += fmt::format(" {}={}", k, v.get<std::string>());
    out += "\n";
  }
  out += format_jobs(s, view);
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
