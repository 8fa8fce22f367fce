#include "app_reported.hpp"

namespace cosched::sensors {

void AppReported::sample(const std::vector<Interval>& jobs, std::vector<Reading>& out) {
  for (const auto& j : jobs) {
    if (!j.reports_bytes || !(j.length() > 0) || j.bytes < 0) continue;
    Reading r;
    r.id = j.id;
    r.has_rate = true;
    r.bytes_per_s = j.bytes / j.length();
    out.push_back(r);
  }
}

}  // namespace cosched::sensors
