#include "rates.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

namespace cosched::sensors {

namespace {

// A job id >= 1 or `*`.
bool parse_job(const std::string& text, policy::JobId any, policy::JobId& out) {
  if (text == "*") {
    out = any;
    return true;
  }
  std::size_t used = 0;
  long long v = -1;
  try {
    v = std::stoll(text, &used);
  } catch (const std::exception&) {
    return false;
  }
  out = v;
  return used == text.size() && v >= 1;
}

}  // namespace

Result<RateReplay> RateReplay::load(const std::string& path) {
  std::ifstream in(path);
  if (!in) return make_error(Errc::io_error, "cannot read the rate replay file " + path);
  std::stringstream text;
  text << in.rdbuf();
  return parse(text.str(), path);
}

Result<RateReplay> RateReplay::parse(std::string_view text, std::string_view name) {
  RateReplay r;
  std::istringstream in{std::string(text)};
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream f(line);
    std::string kind;
    if (!(f >> kind)) continue;
    auto bad = [&](const std::string& why) {
      return make_error(Errc::parse_error, std::string(name) + ":" + std::to_string(n) + ": " + why);
    };
    std::string job;
    std::string extra;
    policy::JobId id = 0;
    if (kind == "alone") {
      double rate = 0;
      if (!(f >> job >> rate) || (f >> extra)) return bad("expected: alone JOB RATE");
      if (!parse_job(job, kAny, id)) return bad("JOB must be a job id >= 1 or *, not '" + job + "'");
      if (!std::isfinite(rate) || rate <= 0) return bad("RATE must be a finite number > 0");
      r.alone_[id] = rate;
    } else if (kind == "with") {
      std::string partner;
      double factor = 0;
      policy::JobId other = 0;
      if (!(f >> job >> partner >> factor) || (f >> extra)) return bad("expected: with JOB PARTNER FACTOR");
      if (!parse_job(job, kAny, id)) return bad("JOB must be a job id >= 1 or *, not '" + job + "'");
      if (!parse_job(partner, kAny, other)) return bad("PARTNER must be a job id >= 1 or *, not '" + partner + "'");
      if (!std::isfinite(factor) || factor <= 0) return bad("FACTOR must be a finite number > 0");
      r.factor_[{id, other}] = factor;
    } else {
      return bad("expected a line 'alone JOB RATE' or 'with JOB PARTNER FACTOR', not '" + kind + "'");
    }
  }
  return r;
}

std::optional<double> RateReplay::rate(policy::JobId id, const std::vector<policy::JobId>& with) const {
  auto a = alone_.find(id);
  if (a == alone_.end()) a = alone_.find(kAny);
  if (a == alone_.end()) return std::nullopt;
  double rate = a->second;
  for (policy::JobId p : with) {
    // Most specific first: (job, partner), (job, *), (*, partner), (*, *).
    for (const auto& key : {std::pair{id, p}, std::pair{id, kAny}, std::pair{kAny, p}, std::pair{kAny, kAny}}) {
      if (auto f = factor_.find(key); f != factor_.end()) {
        rate /= f->second;
        break;
      }
    }
  }
  return rate;
}

Result<RateSensor> RateSensor::make(const std::string& spec) {
  RateSensor s;
  s.spec_ = spec;
  if (spec == "auto" || spec == "app-work" || spec == "iterations" || spec == "regions") return s;
  if (spec.rfind("replay:", 0) == 0) {
    auto r = RateReplay::load(spec.substr(7));
    if (!r) return r.error();
    s.replay_ = std::make_shared<const RateReplay>(std::move(*r));
    return s;
  }
  return make_error(Errc::invalid_argument,
                    "bad rate sensor '" + spec + "': auto, app-work, iterations, regions or replay:FILE");
}

std::optional<policy::RateSample> RateSensor::sample(const RateInterval& iv, double at) const {
  if (!(iv.seconds > 0)) return std::nullopt;
  policy::RateSample s;
  s.at = at;
  s.seconds = iv.seconds;
  s.threads = iv.threads;
  s.with = iv.with;
  const bool any = spec_ == "auto";
  if (replay_) {
    auto r = replay_->rate(iv.id, iv.with);
    if (!r) return std::nullopt;
    s.per_s = *r;
    s.source = "replay";
  } else if ((any || spec_ == "app-work") && iv.reports_work) {
    s.per_s = iv.work / (iv.seconds * std::clamp(iv.cpu_share, 0.1, 1.0));
    s.source = "app-work";
  } else if ((any && !iv.reports_work && iv.has_loop) || spec_ == "iterations") {
    if (!(iv.iteration_s > 0)) return std::nullopt;
    s.per_s = 1.0 / iv.iteration_s;
    s.source = "iterations";
  } else if ((any && !iv.reports_work && !iv.has_loop) || spec_ == "regions") {
    s.per_s = iv.regions / (iv.seconds * std::clamp(iv.cpu_share, 0.1, 1.0));
    s.source = "regions";
  } else {
    return std::nullopt;
  }
  if (!(s.per_s > 0) || !std::isfinite(s.per_s)) return std::nullopt;
  return s;
}

}  // namespace cosched::sensors
