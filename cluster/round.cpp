#include "round.hpp"

#include <algorithm>
#include <map>
#include <set>

namespace cosched::cluster {

Result<LocalJobs> read_local(const nlohmann::json& reply, int node) {
  auto bad = [](const std::string& m) { return make_error(Errc::invalid_argument, "RM cluster_local reply: " + m); };
  if (!reply.is_object() || !reply.value("ok", false)) {
    return bad(reply.is_object() ? reply.value("error", std::string("not ok")) : std::string("not an object"));
  }
  if (!reply.value("supported", false)) {
    return bad("policy '" + reply.value("policy", std::string("?")) +
               "' has no cluster phase (run the RMs with --policy membus)");
  }
  auto jobs = reply.find("jobs");
  auto cand = reply.find("candidates");
  if (jobs == reply.end() || !jobs->is_array()) return bad("field 'jobs' is not an array");
  if (cand == reply.end() || !cand->is_array()) return bad("field 'candidates' is not an array");
  LocalJobs out;
  std::map<long long, std::string> key_of;
  for (const auto& j : *jobs) {
    if (!j.is_object() || !j.contains("id") || !j["id"].is_number_integer()) return bad("a job without an integer 'id'");
    const long long id = j["id"].get<long long>();
    std::string key = j.contains("key") && j["key"].is_string() ? j["key"].get<std::string>()
                                                                 : "n" + std::to_string(node) + "." + std::to_string(id);
    out.keys.push_back(key);
    out.ids.push_back(id);
    key_of[id] = key;
  }
  for (const auto& c : *cand) {
    if (!c.is_number_integer()) return bad("field 'candidates' holds a non-integer");
    auto it = key_of.find(c.get<long long>());
    if (it == key_of.end()) return bad("candidate " + c.dump() + " is not one of the jobs");
    out.candidates.push_back(it->second);
  }
  return out;
}

std::string join_keys(const std::vector<std::string>& keys) {
  std::string out;
  for (const auto& k : keys) out += k + "\n";
  return out;
}

std::vector<std::string> split_keys(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < text.size()) {
    auto end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    if (end > start) out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

std::vector<std::string> global_keys(const std::vector<std::string>& all_nodes_keys) {
  std::set<std::string> u(all_nodes_keys.begin(), all_nodes_keys.end());
  return {u.begin(), u.end()};
}

std::vector<int> local_array(const std::vector<std::string>& global, const std::vector<std::string>& candidates) {
  std::vector<int> s(global.size(), 0);
  for (const auto& c : candidates) {
    auto it = std::lower_bound(global.begin(), global.end(), c);
    if (it != global.end() && *it == c) s[static_cast<std::size_t>(it - global.begin())] = 1;
  }
  return s;
}

std::vector<long long> local_order(const std::vector<std::size_t>& order, const std::vector<std::string>& global,
                                   const LocalJobs& local) {
  std::vector<long long> out;
  for (std::size_t i : order) {
    if (i >= global.size()) continue;
    for (std::size_t k = 0; k < local.keys.size(); ++k) {
      if (local.keys[k] == global[i]) out.push_back(local.ids[k]);
    }
  }
  return out;
}

}  // namespace cosched::cluster
