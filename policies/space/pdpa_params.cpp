// PDPA's parameters (param_spec.hpp). Their defaults and sources: PdpaParams (pdpa_state.hpp).
#include <fmt/format.h>

#include "pdpa.hpp"

namespace cosched::policy {

const ParamTable<Pdpa>& Pdpa::param_table() {
  // target_eff and high_eff: a change re-evaluates STABLE jobs at the next active event (§4.2.4).
  auto threshold = [](double PdpaParams::*m) {
    return Field<Pdpa, double>{[m](const Pdpa& p) { return p.p_.*m; },
                               [m](Pdpa& p, double v) {
                                 if (v != p.p_.*m) p.thresholds_changed_ = true;
                                 p.p_.*m = v;
                               }};
  };
  auto ml_check = [](bool is_min) {
    return ParamCheck<Pdpa, long>{[is_min](const Pdpa& p, long v, std::string_view text) -> Status {
      const long min_ml = is_min ? v : p.p_.min_ml;
      const long max_ml = is_min ? p.p_.max_ml : v;
      if (min_ml > 0 && max_ml > 0 && min_ml > max_ml) {
        return make_error(Errc::invalid_argument,
                          fmt::format("parameter {}='{}': min_ml ({}) must not exceed max_ml ({})",
                                      is_min ? "min_ml" : "max_ml", text, min_ml, max_ml));
      }
      return {};
    }};
  };
  static const ParamTable<Pdpa> t = {
      real_param<Pdpa>("target_eff", 0.0, 10.0, "shrink below this efficiency (§4.2); < high_eff",
                       threshold(&PdpaParams::target_eff),
                       [](const Pdpa& p, double v, std::string_view text) -> Status {
                         if (v < p.p_.high_eff) return {};
                         return make_error(Errc::invalid_argument,
                                           fmt::format("parameter target_eff='{}': must be < high_eff ({}); raise "
                                                       "high_eff first",
                                                       text, format_param(p.p_.high_eff)));
                       }),
      real_param<Pdpa>("high_eff", 0.0, 10.0, "grow above this efficiency (§4.2); > target_eff",
                       threshold(&PdpaParams::high_eff),
                       [](const Pdpa& p, double v, std::string_view text) -> Status {
                         if (v > p.p_.target_eff) return {};
                         return make_error(Errc::invalid_argument,
                                           fmt::format("parameter high_eff='{}': must be > target_eff ({}); lower "
                                                       "target_eff first",
                                                       text, format_param(p.p_.target_eff)));
                       }),
      int_param<Pdpa>("step", 1, 1 << 20, "CPUs added/removed per transition (default max(1, round(cpus/15)))",
                      member<Pdpa, long>([](auto& p) -> auto& { return p.p_.step; })),
      real_param<Pdpa>("stable_band", 0.0, 10.0,
                       "STABLE is left on a new report only if efficiency moved more than this (§4.2.4 ping-pong "
                       "limit)",
                       member<Pdpa, double>([](auto& p) -> auto& { return p.p_.stable_band; })),
      int_param<Pdpa>("max_stable_exits", 0, 1 << 20,
                      "at most this many STABLE→INC/DEC moves per job from its own reports (§4.2.4)",
                      member<Pdpa, long>([](auto& p) -> auto& { return p.p_.max_stable_exits; })),
      int_param<Pdpa>("min_ml", 0, 1 << 20, "below this many jobs a new job may always start (§5 default ML); 0 = none",
                      member<Pdpa, long>([](auto& p) -> auto& { return p.p_.min_ml; }), ml_check(true)),
      int_param<Pdpa>("max_ml", 0, 1 << 20, "never more running jobs than this; 0 = unlimited",
                      member<Pdpa, long>([](auto& p) -> auto& { return p.p_.max_ml; }), ml_check(false)),
      real_param<Pdpa>("max_spread", 0.0, 100.0,
                       "reports whose iteration times spread more than this are not acted upon (noise guard)",
                       member<Pdpa, double>([](auto& p) -> auto& { return p.p_.max_spread; })),
      real_param<Pdpa>("unmeasured_after_s", 0.0, 1e6,
                       "a job with no period found this long after arrival is UNMEASURED: settled at an equal share, "
                       "never blocks admission",
                       member<Pdpa, double>([](auto& p) -> auto& { return p.p_.unmeasured_after_s; })),
      int_param<Pdpa>("unmeasured_iterations", 1, 1 << 20,
                      "a job with a period but no report this many of its iterations later is UNMEASURED too",
                      member<Pdpa, long>([](auto& p) -> auto& { return p.p_.unmeasured_iterations; })),
      flag_param<Pdpa>("load_target",
                       "1: target_eff rises with the queue, at most halfway to high_eff (§4.2 says only \"depending "
                       "on the load\"; the rule is ours, docs/policies.md)",
                       member<Pdpa, long>([](auto& p) -> auto& { return p.p_.load_target; })),
      flag_param<Pdpa>("strict",
                       "1: the paper's PDPA (first job takes min(request, free), idle CPUs stay idle); 0: no job "
                       "above its equal share while jobs wait, idle CPUs lent to running jobs (taken back on "
                       "arrivals), jobs_per_cpu applies",
                       member<Pdpa, long>([](auto& p) -> auto& { return p.p_.strict; })),
      jobs_per_cpu_param(&Pdpa::sharing_),
  };
  return t;
}

}  // namespace cosched::policy
