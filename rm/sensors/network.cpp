#include "network.hpp"

namespace cosched::sensors {

void PmpiNetwork::sample(const std::vector<Interval>& jobs, std::vector<Reading>& out) {
  for (const auto& j : jobs) {
    if (!j.counts_network || !(j.length() > 0) || !(j.net_bytes >= 0)) continue;
    Reading r;
    r.id = j.id;
    r.has_rate = true;
    r.bytes_per_s = j.net_bytes / j.length();
    out.push_back(r);
  }
}

}  // namespace cosched::sensors
