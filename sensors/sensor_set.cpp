#include "sensor_set.hpp"

#include <algorithm>
#include <set>

#include "cosched/log.hpp"
#include "network.hpp"

namespace cosched::sensors {

SensorSet::SensorSet() : network_(std::make_unique<PmpiNetwork>()) {}

SensorSet::SensorSet(std::vector<std::unique_ptr<Backend>> chain, std::vector<Unavailable> unavailable,
                     Calibration cal, std::vector<std::unique_ptr<Backend>> observers)
    : chain_(std::move(chain)),
      observers_(std::move(observers)),
      network_(std::make_unique<PmpiNetwork>()),
      unavailable_(std::move(unavailable)),
      cal_(cal) {}

std::string SensorSet::backend() const {
  for (const auto& b : chain_) {
    if (b->serves_every_job()) return std::string(b->name());
  }
  return chain_.empty() ? "none" : std::string(chain_.front()->name());
}

std::vector<std::string> SensorSet::chain() const {
  std::vector<std::string> out;
  for (const auto& b : chain_) out.emplace_back(b->name());
  return out;
}

std::vector<std::string> SensorSet::observers() const {
  std::vector<std::string> out;
  for (const auto& b : observers_) out.emplace_back(b->name());
  return out;
}

void SensorSet::attach(policy::JobId id, pid_t pid) {
  for (const auto& b : observers_) {
    if (auto st = b->attach(id, pid); !st) {
      COSCHED_WARN(sensor, "job {}: {} (observed only) cannot measure it ({})", id, b->name(), st.error().message);
    }
  }
  for (const auto& b : chain_) {
    if (auto st = b->attach(id, pid); !st) {
      COSCHED_WARN(sensor, "job {}: {} cannot measure it ({}); the next sensor of the chain does", id, b->name(),
                   st.error().message);
    }
  }
}

void SensorSet::forget(policy::JobId id) {
  for (const auto& b : chain_) b->forget(id);
  for (const auto& b : observers_) b->forget(id);
  jobs_.erase(id);
}

void SensorSet::open(policy::JobId id, double now) {
  for (const auto& b : chain_) b->open(id, now);
  for (const auto& b : observers_) b->open(id, now);
}

void SensorSet::sample_network(const std::vector<Interval>& jobs) {
  scratch_.clear();
  network_->sample(jobs, scratch_);
  for (const Reading& r : scratch_) {
    if (!r.has_rate || !(r.bytes_per_s >= 0)) continue;
    const Interval* iv = nullptr;
    for (const Interval& j : jobs) {
      if (j.id == r.id) iv = &j;
    }
    if (iv == nullptr) continue;
    policy::Bandwidth& w = jobs_[r.id].network;
    w.source = std::string(network_->name());
    w.push({iv->end, r.bytes_per_s, iv->threads});
  }
}

void SensorSet::sample(const std::vector<Interval>& jobs) {
  if (jobs.empty()) return;
  sample_network(jobs);
  for (const auto& b : observers_) {  // for comparison only: their rates go to `latest`, never to a window
    scratch_.clear();
    b->sample(jobs, scratch_);
    for (const Reading& r : scratch_) {
      if (r.has_rate && r.bytes_per_s >= 0) jobs_[r.id].latest[std::string(b->name())] = r.bytes_per_s;
    }
  }
  // Per job: the first rate in chain order wins; every backend's rate is remembered.
  std::map<policy::JobId, std::pair<std::size_t, Reading>> first;
  std::map<policy::JobId, double> slowdown;
  for (std::size_t b = 0; b < chain_.size(); ++b) {
    scratch_.clear();
    chain_[b]->sample(jobs, scratch_);
    for (const Reading& r : scratch_) {
      if (r.slowdown > 0) slowdown[r.id] = r.slowdown;
      if (!r.has_rate || !(r.bytes_per_s >= 0)) continue;
      jobs_[r.id].latest[std::string(chain_[b]->name())] = r.bytes_per_s;
      first.try_emplace(r.id, b, r);
    }
  }
  for (const Interval& j : jobs) {
    auto it = first.find(j.id);
    auto sd = slowdown.find(j.id);
    if (it == first.end() && sd == slowdown.end()) continue;
    JobSamples& js = jobs_[j.id];
    if (sd != slowdown.end()) js.window.slowdown = sd->second;
    if (it == first.end()) continue;
    const std::string source(chain_[it->second.first]->name());
    if (js.window.source != source) {
      // Another backend measures the job now: its samples are not comparable with the old ones.
      const double keep = js.window.slowdown;
      js.window = policy::Bandwidth{};
      js.window.source = source;
      js.window.slowdown = keep;
    }
    js.window.push({j.end, it->second.second.bytes_per_s, j.threads});
    COSCHED_DEBUG(sensor, "job {}: {:.3g} B/s over {:.3f} s on {} CPU(s) ({})", j.id, it->second.second.bytes_per_s,
                  j.length(), j.threads, source);
  }
}

policy::Bandwidth SensorSet::bandwidth(policy::JobId id) const {
  auto it = jobs_.find(id);
  return it == jobs_.end() ? policy::Bandwidth{} : it->second.window;
}

policy::Bandwidth SensorSet::network(policy::JobId id) const {
  auto it = jobs_.find(id);
  return it == jobs_.end() ? policy::Bandwidth{} : it->second.network;
}

policy::Bandwidth SensorSet::bandwidth(const std::vector<policy::JobId>& processes) const {
  if (processes.size() == 1) return bandwidth(processes.front());
  std::vector<policy::Bandwidth> parts;
  for (policy::JobId id : processes) parts.push_back(bandwidth(id));
  return sum_windows(parts);
}

policy::Bandwidth SensorSet::network(const std::vector<policy::JobId>& processes) const {
  if (processes.size() == 1) return network(processes.front());
  std::vector<policy::Bandwidth> parts;
  for (policy::JobId id : processes) parts.push_back(network(id));
  return sum_windows(parts);
}

policy::Bandwidth sum_windows(const std::vector<policy::Bandwidth>& parts) {
  std::vector<const policy::Bandwidth*> taking;
  for (const auto& p : parts) {
    if (p.valid()) taking.push_back(&p);
  }
  policy::Bandwidth out;
  if (taking.empty()) return out;
  // Instants every taking part was sampled at, oldest first (each window is oldest first).
  std::vector<double> instants;
  for (int i = 0; i < taking.front()->count; ++i) {
    const double at = taking.front()->samples[static_cast<std::size_t>(i)].at;
    const bool everywhere = std::all_of(taking.begin(), taking.end(), [at](const policy::Bandwidth* b) {
      return std::any_of(b->samples.begin(), b->samples.begin() + b->count,
                         [at](const policy::BandwidthSample& x) { return x.at == at; });
    });
    if (everywhere) instants.push_back(at);
  }
  for (double at : instants) {
    policy::BandwidthSample sum{at, 0, 0};
    for (const policy::Bandwidth* b : taking) {
      for (int i = 0; i < b->count; ++i) {
        const auto& x = b->samples[static_cast<std::size_t>(i)];
        if (x.at != at) continue;
        sum.bytes_per_s += x.bytes_per_s;
        sum.threads += x.threads;
      }
    }
    out.push(sum);  // keeps the latest kWindow
  }
  std::set<std::string> sources;
  for (const policy::Bandwidth* b : taking) {
    sources.insert(b->source);
    out.slowdown = std::max(out.slowdown, b->slowdown);
  }
  for (const auto& s : sources) out.source += (out.source.empty() ? "" : "+") + s;
  return out;
}

std::map<std::string, double> SensorSet::estimates(policy::JobId id) const {
  auto it = jobs_.find(id);
  return it == jobs_.end() ? std::map<std::string, double>{} : it->second.latest;
}

nlohmann::json SensorSet::status_json() const {
  nlohmann::json unavailable = nlohmann::json::array();
  for (const auto& u : unavailable_) unavailable.push_back({{"name", u.name}, {"why", u.why}});
  nlohmann::json calibration = nullptr;
  if (cal_.calibrated()) {
    calibration = {{"mem_bandwidth", cal_.machine_bytes_per_s},
                   {"thread_bandwidth", cal_.thread_bytes_per_s},
                   {"contention", cal_.contention},
                   {"min_slowdown", cal_.min_slowdown}};
  }
  return {{"backend", backend()},
          {"chain", chain()},
          {"observed", observers()},
          {"network", network_->name()},
          {"unavailable", unavailable},
          {"unit", "bytes/s"},
          {"window", policy::Bandwidth::kWindow},
          {"calibration", calibration}};
}

nlohmann::json SensorSet::job_json(policy::JobId id) const {
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return nullptr;
  const policy::Bandwidth& w = it->second.window;
  const policy::Bandwidth& n = it->second.network;
  nlohmann::json estimates = nlohmann::json::object();
  for (const auto& [name, v] : it->second.latest) estimates[name] = v;
  double mean = 0;
  for (int i = 0; i < w.count; ++i) mean += w.samples[static_cast<std::size_t>(i)].bytes_per_s;
  return {{"source", w.valid() ? nlohmann::json(w.source) : nlohmann::json(nullptr)},
          {"bytes_per_s", w.valid() ? nlohmann::json(w.latest().bytes_per_s) : nlohmann::json(nullptr)},
          {"window_bytes_per_s", w.valid() ? nlohmann::json(mean / w.count) : nlohmann::json(nullptr)},
          {"samples", w.count},
          {"slowdown", w.slowdown > 0 ? nlohmann::json(w.slowdown) : nlohmann::json(nullptr)},
          {"estimates", estimates},
          {"network", n.valid() ? nlohmann::json{{"source", n.source}, {"bytes_per_s", n.latest().bytes_per_s},
                                                 {"samples", n.count}}
                                : nlohmann::json(nullptr)}};
}

}  // namespace cosched::sensors
