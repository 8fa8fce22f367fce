#include "app_reported.hpp"

namespace cosched::sensors {

void AppReported::sample(const std::vector<Interval>& jobs, std::vector<Reading>& out) {
  for (const auto& j : jobs) {
    if (!j.reports_bytes || !(j.length() > 0) || j.bytes < 0) continue;
    out.push_back(Reading::rate(j.id, j.bytes / j.length()));
  }
}

}  // namespace cosched::sensors
