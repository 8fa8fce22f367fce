#include "replay.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

namespace cosched::sensors {

namespace {

const std::pair<double, double>* rate_at(const std::vector<std::pair<double, double>>& rows, double t) {
  auto it = std::upper_bound(rows.begin(), rows.end(), t, [](double x, const auto& row) { return x < row.first; });
  return it == rows.begin() ? nullptr : &*(it - 1);
}

}  // namespace

Result<std::unique_ptr<Replay>> Replay::load(const std::string& path) {
  std::ifstream in(path);
  if (!in) return make_error(Errc::io_error, "cannot read the replay file " + path);
  std::stringstream text;
  text << in.rdbuf();
  return parse(text.str(), path);
}

Result<std::unique_ptr<Replay>> Replay::parse(std::string_view text, std::string_view name) {
  auto r = std::unique_ptr<Replay>(new Replay());
  std::istringstream in{std::string(text)};
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream f(line);
    std::string job;
    if (!(f >> job)) continue;
    auto bad = [&](const std::string& why) {
      return make_error(Errc::parse_error, std::string(name) + ":" + std::to_string(n) + ": " + why);
    };
    double t = 0;
    double rate = 0;
    std::string extra;
    if (!(f >> t >> rate) || (f >> extra)) return bad("expected JOB SECONDS BYTES_PER_S");
    if (!std::isfinite(t) || t < 0) return bad("SECONDS must be a finite number >= 0");
    if (!std::isfinite(rate) || rate < 0) return bad("BYTES_PER_S must be a finite number >= 0");
    policy::JobId id = kEveryJob;
    if (job != "*") {
      std::size_t used = 0;
      long long v = -1;
      try {
        v = std::stoll(job, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != job.size() || v < 1) return bad("JOB must be a job id >= 1 or *, not '" + job + "'");
      id = v;
    }
    r->rates_[id].emplace_back(t, rate);
  }
  for (auto& [id, rows] : r->rates_) std::stable_sort(rows.begin(), rows.end(), [](auto& a, auto& b) { return a.first < b.first; });
  return r;
}

void Replay::sample(const std::vector<Interval>& jobs, std::vector<Reading>& out) {
  for (const auto& j : jobs) {
    const std::pair<double, double>* row = nullptr;
    if (auto it = rates_.find(j.id); it != rates_.end()) row = rate_at(it->second, j.since_arrival);
    if (row == nullptr) {
      if (auto it = rates_.find(kEveryJob); it != rates_.end()) row = rate_at(it->second, j.since_arrival);
    }
    if (row == nullptr) continue;
    out.push_back(Reading::rate(j.id, row->second));
  }
}

}  // namespace cosched::sensors
