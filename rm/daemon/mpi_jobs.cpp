// Jobs of several processes on one node (MPI jobs): the ranks of one job register with the same key
// (libcosched, from Open MPI's environment or `cosched-run --job`), get the same job id, and are one job for
// the policies: one request (their sum), one allocation split among them (rank_split.hpp), one gang for
// time sharing (stopped and resumed together, so no rank spins in MPI_Recv while its partner is stopped).
// Each rank keeps its own record (Job): pid, arena, cgroup, stops — the mechanisms act per process.
#include <algorithm>
#include <cstring>

#include "cosched/log.hpp"
#include "daemon.hpp"
#include "time_sharing.hpp"
#include "register_body.hpp"

namespace cosched::rm {

namespace {

// A key is shown in status and logs and compared byte for byte: printable ASCII, no spaces, NUL-terminated.
bool valid_key(const char* key, std::size_t max, std::string& out) {
  out.clear();
  for (std::size_t i = 0; i < max; ++i) {
    if (key[i] == '\0') return !out.empty();
    const auto ch = static_cast<unsigned char>(key[i]);
    if (ch < 0x21 || ch > 0x7e) return false;
    out.push_back(key[i]);
  }
  return false;  // not terminated
}

}  // namespace

void Daemon::handle_register_rank(Conn& c, const wire::Frame& f) {
  auto refuse = [&](const std::string& why) {
    COSCHED_THROTTLED(server_.peer_log(), rm, warn, "registration from pid {} refused: {}", c.pid, why);
    c.closing = true;
    server_.queue_reply(c, proto::MsgType::refused, why);
  };
  if (c.job >= 0) {
    COSCHED_THROTTLED(server_.peer_log(), rm, warn, "pid {}: second registration refused: already job {}", c.pid, c.job);
    server_.queue_reply(c, proto::MsgType::refused, "already registered as job " + std::to_string(c.job));
    return;
  }
  if (f.payload.size() != sizeof(proto::RegisterRankBody)) {
    return refuse("register_rank message has " + std::to_string(f.payload.size()) + " bytes, expected " +
                  std::to_string(sizeof(proto::RegisterRankBody)));
  }
  auto base = parse_register_body(std::string_view(f.payload).substr(0, sizeof(proto::RegisterBody)));
  if (!base) return refuse(base.error().message);
  proto::RegisterRankBody body{};
  std::memcpy(&body, f.payload.data(), sizeof body);
  std::string key;
  if (!valid_key(body.job_key, sizeof body.job_key, key)) {
    return refuse("field job_key is not 1 to " + std::to_string(proto::kJobKeyMax - 1) +
                  " printable characters without spaces");
  }
  if (body.rank < 0) return refuse("field rank=" + std::to_string(body.rank) + " is negative");
  if (body.local_ranks < 0 || body.local_ranks > proto::kMaxCpus) {
    return refuse("field local_ranks=" + std::to_string(body.local_ranks) + " out of range [0, " +
                  std::to_string(proto::kMaxCpus) + "]");
  }
  admit(c, std::move(*base), key, body.rank);
}

// This node's jobs as the coordinator needs them: a key that names the job on every node (an MPI job's
// launcher key; null for a job of its own, which only this node has), the CPUs it asks for, and the policy's
// local candidates (MemBUS Algorithm 2) — computed on the same snapshot a decision would see, changing nothing.
nlohmann::json Daemon::cluster_local_json() {
  const policy::Snapshot s = snapshot(policy::Event::query, -1);
  const auto candidates = policy_->cluster_candidates(s);
  nlohmann::json jobs = nlohmann::json::array();
  for (const auto& v : s.jobs) {
    auto g = gangs_.find(v.id);
    jobs.push_back({{"id", v.id},
                    {"key", g != gangs_.end() ? nlohmann::json(g->second.key) : nlohmann::json(nullptr)},
                    {"request", v.request},
                    {"runnable", v.runnable},
                    {"net_bytes_per_s", v.network.valid() ? v.network.latest().bytes_per_s : 0.0}});
  }
  nlohmann::json out = {{"ok", true}, {"policy", policy_->name()}, {"now", now()}, {"jobs", jobs},
                        {"supported", candidates.has_value()}};
  out["candidates"] = candidates ? nlohmann::json(*candidates) : nlohmann::json::array();
  return out;
}

// The agreed order (Algorithm 1 after the reduction): kept for the snapshot and applied at once, so every node
// switches when its coordinator rank leaves the barrier. Ids of jobs that left meanwhile are dropped.
nlohmann::json Daemon::cluster_switch(const std::vector<policy::JobId>& order) {
  cluster_.order.clear();
  for (policy::JobId id : order) {
    const bool known = gangs_.count(id) != 0 || (jobs_.count(id) != 0 && jobs_.at(id).gang == 0);
    if (known) cluster_.order.push_back(id);
  }
  cluster_.at = now();
  ++cluster_.seq;
  decide(policy::Event::timer, -1);
  nlohmann::json running = nlohmann::json::array();
  for (Unit& u : units(jobs_)) {
    if (std::all_of(u.members.begin(), u.members.end(), [](const Job* m) { return m->runnable && !m->suspended; })) {
      running.push_back(u.id);
    }
  }
  return {{"ok", true}, {"seq", cluster_.seq}, {"running", running}};
}

}  // namespace cosched::rm
