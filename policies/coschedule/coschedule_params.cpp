// Co-scheduling: parameters and what the policy has learned (coschedule.hpp).
#include <fmt/format.h>

#include "coschedule.hpp"
#include "policies/param_util.hpp"

namespace cosched::policy {

namespace {

const char* pairing_name(int p) {
  switch (p) {
    case 0: return "blossom";
    case 1: return "extremes";
    case 2: return "list";
    default: return "random";
  }
}

}  // namespace

std::vector<Param> Coschedule::params() const {
  const ProgressSettings& ps = tracker_.settings();
  std::vector<Param> p = {
      {"quantum_ms", format_param(quantum_s_ * 1e3),
       mode_ == Mode::symbiotic ? "the quantum (§7.3: 100 ms)" : "the quantum (§5.3, §6.5: 200 ms)"},
      {"pairing", pairing_name(static_cast<int>(pairing_)),
       "how selected jobs are grouped on cores: blossom (minimum-weight perfect matching on predicted slowdowns, "
       "Ch. 7), extremes (highest with lowest, Algorithm 6), list (selection order), random (seeded)"},
      {"explore", std::to_string(explorer_.every()),
       "at most one quantum in this many forces an unseen pair together (0: no exploration)"},
      {"seed", std::to_string(seed_), "pairing=random: the seed of the draws"},
  };
  if (mode_ != Mode::bas) {
    p.push_back({"estimation_quantum_ms", format_param(estimation_quantum_s_ * 1e3),
                 "the length of an estimation quantum (§6.3.1: 100 ms in Perf&Fair)"});
    p.push_back({"expire_quanta", std::to_string(ps.expire_quanta),
                 "a rate alone is valid for this many scheduled quanta (§6.2.4: 40)"});
    p.push_back({"close_quanta", std::to_string(ps.close_quanta),
                 "a rate alone is close to expire after this many (§6.2.4: 20)"});
  }
  if (mode_ == Mode::fair) {
    p.push_back({"fair_gap", format_param(fair_gap_),
                 "jobs this far below the average progress get whole cores (§6.2.4: 0.05)"});
  }
  return p;
}

Status Coschedule::set_param(std::string_view name, std::string_view value) {
  long v = 0;
  ProgressSettings ps = tracker_.settings();
  if (name == "quantum_ms" || (name == "estimation_quantum_ms" && mode_ != Mode::bas)) {
    double ms = 0;
    if (auto st = parse_double_param(name, value, 1, 600000, ms); !st) return st;
    (name == "quantum_ms" ? quantum_s_ : estimation_quantum_s_) = ms / 1e3;
    return {};
  }
  if (name == "pairing") {
    if (value == "blossom") pairing_ = Pairing::blossom;
    else if (value == "extremes") pairing_ = Pairing::extremes;
    else if (value == "list") pairing_ = Pairing::list;
    else if (value == "random") pairing_ = Pairing::random;
    else return make_error(Errc::invalid_argument, "bad pairing '" + std::string(value) +
                                                       "': blossom, extremes, list or random");
    return {};
  }
  if (name == "explore") {
    if (auto st = parse_int_param(name, value, 0, 1000000, v); !st) return st;
    explorer_.set_every(static_cast<int>(v));
    return {};
  }
  if (name == "seed") {
    if (auto st = parse_int_param(name, value, 0, std::numeric_limits<long>::max(), v); !st) return st;
    seed_ = static_cast<std::uint64_t>(v);
    rng_ = seed_;
    return {};
  }
  if ((name == "expire_quanta" || name == "close_quanta") && mode_ != Mode::bas) {
    if (auto st = parse_int_param(name, value, 1, 1000000, v); !st) return st;
    (name == "expire_quanta" ? ps.expire_quanta : ps.close_quanta) = static_cast<int>(v);
    if (ps.close_quanta > ps.expire_quanta) {
      return make_error(Errc::invalid_argument, fmt::format("close_quanta ({}) must not exceed expire_quanta ({})",
                                                            ps.close_quanta, ps.expire_quanta));
    }
    tracker_.set_settings(ps);
    return {};
  }
  if (name == "fair_gap" && mode_ == Mode::fair) return parse_double_param(name, value, 0, 1, fair_gap_);
  return Policy::set_param(name, value);
}

std::optional<PairsReport> Coschedule::pairs() const {
  PairsReport r;
  r.model = "learned pairs";
  for (const auto& [key, e] : matrix_.entries()) r.entries.push_back({key.first, key.second, e.slowdown, e.samples, e.at});
  for (const auto& [id, p] : tracker_.jobs()) {
    r.jobs.push_back({id, p.progress, p.alone, p.source, p.since_estimate, tracker_.expired(id), p.last_ratio});
  }
  const ExplorationStats& x = explorer_.stats();
  r.quanta = x.quanta;
  r.explored = x.explored;
  r.exploration_cost = x.predicted_cost;
  r.explore_every = explorer_.every();
  return r;
}

}  // namespace cosched::policy
