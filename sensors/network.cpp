#include "network.hpp"

namespace cosched::sensors {

void PmpiNetwork::sample(const std::vector<Interval>& jobs, std::vector<Reading>& out) {
  for (const auto& j : jobs) {
    if (!j.counts_network || !(j.length() > 0) || !(j.net_bytes >= 0)) continue;
    out.push_back(Reading::rate(j.id, j.net_bytes / j.length()));
  }
}

}  // namespace cosched::sensors
