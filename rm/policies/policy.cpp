#include "policy.hpp"

#include <string>

namespace cosched::policy {

const char* to_string(Event e) noexcept {
  switch (e) {
    case Event::arrival: return "arrival";
    case Event::departure: return "departure";
    case Event::report: return "report";
    case Event::quantum: return "quantum";
    case Event::timer: return "timer";
    case Event::param_change: return "param_change";
    case Event::query: return "query";
  }
  return "unknown";
}

const JobView* Snapshot::find(JobId id) const {
  for (const auto& j : jobs) {
    if (j.id == id) return &j;
  }
  return nullptr;
}

const Allocation* Decision::find(JobId id) const {
  for (const auto& a : jobs) {
    if (a.id == id) return &a;
  }
  return nullptr;
}

Status Policy::set_param(std::string_view name, std::string_view /*value*/) {
  return make_error(Errc::invalid_argument,
                    "policy '" + std::string(this->name()) + "' has no parameter '" + std::string(name) + "'");
}

}  // namespace cosched::policy
