// Co-scheduling: parameters and what the policy has learned (coschedule.hpp).
#include <fmt/format.h>

#include "coschedule.hpp"

namespace cosched::policy {

const ParamTable<Coschedule>& Coschedule::param_table() {
  using C = Coschedule;
  auto ms = [](double C::*m) {
    return Field<C, double>{[m](const C& p) { return p.*m * 1e3; }, [m](C& p, double v) { p.*m = v / 1e3; }};
  };
  // A rate alone's validity, in the progress tracker's settings; close_quanta ≤ expire_quanta.
  auto validity = [](int ProgressSettings::*m) {
    return Field<C, long>{[m](const C& p) { return static_cast<long>(p.tracker_.settings().*m); },
                          [m](C& p, long v) {
                            ProgressSettings ps = p.tracker_.settings();
                            ps.*m = static_cast<int>(v);
                            p.tracker_.set_settings(ps);
                          }};
  };
  auto ordered = [](int ProgressSettings::*m) {
    return ParamCheck<C, long>{[m](const C& p, long v, std::string_view) -> Status {
      ProgressSettings ps = p.tracker_.settings();
      ps.*m = static_cast<int>(v);
      if (ps.close_quanta <= ps.expire_quanta) return {};
      return make_error(Errc::invalid_argument, fmt::format("close_quanta ({}) must not exceed expire_quanta ({})",
                                                            ps.close_quanta, ps.expire_quanta));
    }};
  };
  auto estimates = [](const C& p) { return p.mode_ != Mode::bas; };
  static const ParamTable<C> t = {
      real_param<C>("quantum_ms", 1, 600000, "the quantum (§5.3, §6.5: 200 ms; symbiotic §7.3: 100 ms)",
                    ms(&C::quantum_s_)),
      choice_param<C, Pairing>(
          "pairing",
          {{"blossom", Pairing::blossom}, {"extremes", Pairing::extremes}, {"list", Pairing::list},
           {"random", Pairing::random}},
          "how selected jobs are grouped on cores: blossom (minimum-weight perfect matching on predicted slowdowns, "
          "Ch. 7), extremes (highest with lowest, Algorithm 6), list (selection order), random (seeded)",
          member<C, Pairing>([](auto& p) -> auto& { return p.pairing_; })),
      int_param<C>("explore", 0, 1000000,
                   "at most one quantum in this many forces an unseen pair together (0: no exploration)",
                   {[](const C& p) { return static_cast<long>(p.explorer_.every()); },
                    [](C& p, long v) { p.explorer_.set_every(static_cast<int>(v)); }}),
      int_param<C>("seed", 0, std::numeric_limits<long>::max(), "pairing=random: the seed of the draws",
                   {[](const C& p) { return static_cast<long>(p.seed_); },
                    [](C& p, long v) { p.rng_ = p.seed_ = static_cast<std::uint64_t>(v); }}),
      only_if<C>(real_param<C>("estimation_quantum_ms", 1, 600000,
                               "the length of an estimation quantum (§6.3.1: 100 ms in Perf&Fair)",
                               ms(&C::estimation_quantum_s_)),
                 estimates),
      only_if<C>(int_param<C>("expire_quanta", 1, 1000000,
                              "a rate alone is valid for this many scheduled quanta (§6.2.4: 40)",
                              validity(&ProgressSettings::expire_quanta), ordered(&ProgressSettings::expire_quanta)),
                 estimates),
      only_if<C>(int_param<C>("close_quanta", 1, 1000000, "a rate alone is close to expire after this many (§6.2.4: 20)",
                              validity(&ProgressSettings::close_quanta), ordered(&ProgressSettings::close_quanta)),
                 estimates),
      only_if<C>(real_param<C>("fair_gap", 0, 1,
                               "jobs this far below the average progress get whole cores (§6.2.4: 0.05)",
                               member<C, double>([](auto& p) -> auto& { return p.fair_gap_; })),
                 [](const C& p) { return p.mode_ == Mode::fair; }),
  };
  return t;
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
