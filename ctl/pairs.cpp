#include "pairs.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "policies/registry.hpp"
#include "table.hpp"

namespace cosched::ctl {

using nlohmann::json;

json ranked_pairs(const json& pairs) {
  std::map<std::pair<long long, long long>, const json*> entry;
  if (!pairs.contains("entries") || !pairs["entries"].is_array()) return json::array();
  for (const auto& e : pairs["entries"]) {  // a reference into `pairs`: kept below
    entry[{e.value("job", 0LL), e.value("with", 0LL)}] = &e;
  }
  json out = json::array();
  for (const auto& [key, e] : entry) {
    if (key.first >= key.second) continue;
    auto back = entry.find({key.second, key.first});
    if (back == entry.end()) continue;
    const double a = e->value("slowdown", 1.0);
    const double b = back->second->value("slowdown", 1.0);
    out.push_back({{"jobs", {key.first, key.second}},
                   {"cost", a + b},
                   {"slowdowns", {a, b}},
                   {"samples", e->value("samples", 0) + back->second->value("samples", 0)}});
  }
  std::stable_sort(out.begin(), out.end(), [](const json& x, const json& y) {
    return x["cost"].get<double>() > y["cost"].get<double>();
  });
  return out;
}

std::string format_pairs(const json& status) {
  const json& p = status.contains("pairs") ? status["pairs"] : json(nullptr);
  if (!p.is_object()) {
    return fmt::format("policy {} learns no pairs (the co-scheduling policies do: {})\n",
                       status.value("policy", std::string("?")),
                       policy::policy_names([](const policy::PolicyInfo& i) { return i.learns_pairs; }));
  }
  std::string out = fmt::format("policy {} | model: {} | rate sensor: {}\n", status.value("policy", std::string("?")),
                                p.value("model", std::string("?")), status.value("rate_sensor", std::string("?")));
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : ranked_pairs(p)) {
    rows.push_back({fmt::format("{}+{}", r["jobs"][0].get<long long>(), r["jobs"][1].get<long long>()),
                    fmt::format("{:.3f}", r["cost"].get<double>()),
                    fmt::format("{:.3f}", r["slowdowns"][0].get<double>()),
                    fmt::format("{:.3f}", r["slowdowns"][1].get<double>()), std::to_string(r["samples"].get<int>())});
  }
  out += rows.empty() ? std::string("no pair measured both ways yet\n")
                      : render_table({{"PAIR"}, {"COST", true}, {"S(I|J)", true}, {"S(J|I)", true}, {"SAMPLES", true}},
                                     rows);
  rows.clear();
  for (const auto& j : p.value("jobs", json::array())) {
    rows.push_back({std::to_string(j.value("id", 0LL)), fmt::format("{:.2f}", j.value("progress", 0.0)),
                    j["alone_per_s"].is_number() ? fmt::format("{:.4g}", j["alone_per_s"].get<double>()) : "-",
                    j.value("source", std::string()).empty() ? "-" : j.value("source", std::string()),
                    std::to_string(j.value("quanta_since_estimate", 0)), j.value("expired", true) ? "yes" : "no"});
  }
  if (!rows.empty()) {
    out += "\n" + render_table({{"JOB"}, {"PROGRESS", true}, {"ALONE/S", true}, {"SOURCE"}, {"QUANTA", true}, {"EXPIRED"}},
                               rows);
  }
  const json& x = p.value("exploration", json::object());
  out += fmt::format("\nexploration: {} of {} quanta forced an unseen pair (at most 1 in {}), predicted cost {:.3f}\n",
                     x.value("explored", 0), x.value("quanta", 0), x.value("every", 0), x.value("predicted_cost", 0.0));
  return out;
}

}  // namespace cosched::ctl
