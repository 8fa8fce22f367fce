#include "registry.hpp"

#include <functional>

#include "policies/bandwidth/bus_bandwidth.hpp"
#include "policies/coschedule/coschedule.hpp"
#include "policies/space/dss.hpp"
#include "policies/space/equal_efficiency.hpp"
#include "policies/space/equipartition.hpp"
#include "policies/time_sharing/gang.hpp"
#include "policies/bandwidth/membus.hpp"
#include "policies/space/pdpa.hpp"
#include "policies/time_sharing/sw_dss.hpp"
#include "policies/time_sharing/vtq_dss.hpp"

namespace cosched::policy {

namespace {

struct Entry {
  const char* name;
  const char* summary;
  std::function<std::unique_ptr<Policy>(const Machine&)> make;
  ParamList preset;  // a named preset = a factory + parameter values
};

const std::vector<Entry>& table() {
  static const std::vector<Entry> t = {
      {"equip", "Equipartition: equal share per job, capped at its request (McCann et al. 1993)",
       [](const Machine&) { return std::make_unique<Equipartition>(); }, {}},
      {"pdpa", "PDPA: largest allocation above target_eff, own multiprogramming level (Corbalan et al. 2005)",
       [](const Machine& m) { return std::make_unique<Pdpa>(m); }, {}},
      {"equal_eff", "Equal_efficiency: CPUs to the best extrapolated (Amdahl) efficiency (Nguyen et al. 1996)",
       [](const Machine&) { return std::make_unique<EqualEfficiency>(); }, {}},
      {"dss", "DSS: shares proportional to requests, at least one CPU each (Polychronopoulos et al., eqs. 1-3)",
       [](const Machine&) { return std::make_unique<Dss>(); }, {}},
      {"gang", "Gang scheduling: rows of jobs that fit the machine, one row per quantum (Ousterhout 1982)",
       [](const Machine&) { return std::make_unique<Gang>(); }, {}},
      {"sw-dss", "Sliding Window DSS: a window of jobs with requests <= 3P runs with DSS, the next window each "
                 "quantum (Polychronopoulos et al. 3.2.1)",
       [](const Machine&) { return std::make_unique<SlidingWindowDss>(SlidingWindowDss::Step::window); }, {}},
      {"ssw-dss", "Step Sliding Window DSS: as sw-dss, the window slides by one job each quantum (3.2.2)",
       [](const Machine&) { return std::make_unique<SlidingWindowDss>(SlidingWindowDss::Step::one); }, {}},
      {"vtq-dss", "Variable Time Quantum DSS: gangs with per-job quanta that equalise CPU time, a repository "
                  "queue fills the holes (3.2.3)",
       [](const Machine&) { return std::make_unique<VtqDss>(); }, {}},
      {"latest-quantum", "Latest Quantum: gang-like, co-runners chosen by eq. 1 fitness of their memory bandwidth "
                         "in the latest quantum against the bus left per CPU (Antonopoulos et al. 4)",
       [](const Machine&) { return std::make_unique<BusBandwidth>(BusBandwidth::Mode::latest_quantum); }, {}},
      {"quanta-window", "Quanta Window: as latest-quantum with the mean of a window of 5 samples (eq. 2)",
       [](const Machine&) { return std::make_unique<BusBandwidth>(BusBandwidth::Mode::quanta_window); }, {}},
      {"membus", "MemBUS: gangs chosen by memory and network bandwidth fit, q = 0.5 s, window w = 2; "
                 "cluster-wide with cosched-cluster (Koukis & Koziris 2006)",
       [](const Machine&) { return std::make_unique<Membus>(); }, {}},
      {"bas", "BaS: self-reliant selection by memory-bandwidth fitness against the OATR, queue head first (Alg. 5), "
              "groups on cores highest with lowest (Alg. 6), 200 ms quanta (Feliu 2017, Ch. 5)",
       [](const Machine&) { return std::make_unique<Coschedule>(Coschedule::Mode::bas); }, {}},
      {"fair", "Progress-aware Fair: estimation quanta for expired rates alone, jobs 5 % behind the average "
               "progress get whole cores, lowest progress first (Alg. 7; Feliu 2017, Ch. 6)",
       // Algorithm 7 estimates in ordinary quanta; only Perf&Fair's are 100 ms (§6.3.1).
       [](const Machine&) { return std::make_unique<Coschedule>(Coschedule::Mode::fair); },
       {{"estimation_quantum_ms", "200"}}},
      {"perf-fair", "Perf&Fair: 100 ms estimation quanta; the fittest (OATR) of the jobs with Progress + 1 < MaxP "
                    "first (Alg. 8; Feliu 2017, Ch. 6)",
       [](const Machine&) { return std::make_unique<Coschedule>(Coschedule::Mode::perf_fair); }, {}},
      {"symbiotic", "Symbiotic: co-runner groups by minimum-weight perfect matching (Blossom) on slowdowns learned "
                    "online, bounded exploration of unseen pairs, 100 ms quanta (Feliu 2017, Ch. 7)",
       // §7.3: 100 ms quanta; Ch. 7's matching on predicted slowdowns, which exploring unseen pairs feeds (ours: 4).
       [](const Machine&) { return std::make_unique<Coschedule>(Coschedule::Mode::symbiotic); },
       {{"quantum_ms", "100"}, {"pairing", "blossom"}, {"explore", "4"}}},
  };
  return t;
}

}  // namespace

Result<std::unique_ptr<Policy>> make_policy(std::string_view name, const Machine& machine,
                                            const ParamList& params) {
  for (const auto& e : table()) {
    if (name != e.name) continue;
    auto p = e.make(machine);
    for (const auto& [k, v] : e.preset) {
      if (auto st = p->set_param(k, v); !st) return st.error();
    }
    if (auto st = apply_params(*p, params); !st) return st.error();
    return p;
  }
  std::string names;
  for (const auto& e : table()) names += (names.empty() ? "" : ", ") + std::string(e.name);
  return make_error(Errc::not_found, "unknown policy '" + std::string(name) + "' (known: " + names + ")");
}

std::vector<PolicyInfo> list_policies() {
  std::vector<PolicyInfo> out;
  for (const auto& e : table()) {
    auto p = make_policy(e.name, Machine{});
    out.push_back({e.name, e.summary, e.preset, (*p)->params(), (*p)->uses_speedup(), (*p)->pairs().has_value()});
  }
  return out;
}

std::string policy_names(bool (*pred)(const PolicyInfo&)) {
  std::string names;
  for (const auto& p : list_policies()) {
    if (pred(p)) names += (names.empty() ? "" : ", ") + p.name;
  }
  return names;
}

std::string describe_policies(std::string_view indent) {
  const std::string in(indent);
  std::string out;
  for (const auto& p : list_policies()) {
    out += in + p.name + ": " + p.summary + "\n";
    if (!p.preset.empty()) {
      out += in + "    preset:";
      for (const auto& [k, v] : p.preset) out += " " + k + "=" + v;
      out += "\n";
    }
    for (const auto& q : p.params) out += in + "    " + q.name + "=" + q.value + " (" + q.accepts + "): " + q.help + "\n";
  }
  return out;
}

std::string policies_markdown() {
  auto cell = [](std::string t) {  // a '|' inside a cell would end it
    for (std::size_t at = t.find('|'); at != std::string::npos; at = t.find('|', at + 2)) t.insert(at, "\\");
    return t;
  };
  std::string out = "| policy | parameter | default | accepts | meaning |\n|---|---|---|---|---|\n";
  for (const auto& p : list_policies()) {
    std::string preset;
    for (const auto& [k, v] : p.preset) preset += (preset.empty() ? "; preset: " : ", ") + k + "=" + v;
    out += "| `" + p.name + "` | | | | " + cell(p.summary + preset) + " |\n";
    for (const auto& q : p.params) {
      out += "| | `" + q.name + "` | `" + q.value + "` | " + cell(q.accepts) + " | " + cell(q.help) + " |\n";
    }
  }
  return out;
}

Status apply_params(Policy& p, const ParamList& params) {
  // Parameters may constrain each other (PDPA: target_eff < high_eff), and a JSON object arrives with its
  // keys sorted, not in the order the user wrote them. So each pass applies what it can and retries the
  // rest; a pass that applies nothing ends it, with the first refusal as the error.
  std::vector<const std::pair<std::string, std::string>*> left;
  for (const auto& kv : params) left.push_back(&kv);
  while (!left.empty()) {
    std::vector<const std::pair<std::string, std::string>*> refused;
    Status first;
    for (const auto* kv : left) {
      if (auto st = p.set_param(kv->first, kv->second); !st) {
        if (first) first = st;
        refused.push_back(kv);
      }
    }
    if (refused.size() == left.size()) return first;
    left = std::move(refused);
  }
  return {};
}

Result<std::unique_ptr<Policy>> with_params(const Policy& p, const ParamList& params) {
  auto next = p.clone();
  if (auto st = apply_params(*next, params); !st) return st.error();
  return next;
}

Result<std::pair<std::string, std::string>> parse_param(std::string_view kv) {
  auto eq = kv.find('=');
  if (eq == std::string_view::npos || eq == 0) {
    return make_error(Errc::invalid_argument, "bad parameter '" + std::string(kv) + "': expected NAME=VALUE");
  }
  return std::pair{std::string(kv.substr(0, eq)), std::string(kv.substr(eq + 1))};
}

}  // namespace cosched::policy
