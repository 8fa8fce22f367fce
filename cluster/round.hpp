// One coordination round of cosched-cluster (MemBUS, Koukis & Koziris §4-§5.1, with MPI collectives where
// the paper used a TCP star): the parts that need no MPI, so that they are testable alone.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cosched/error.hpp"

namespace cosched::cluster {

// This node's view, from the RM's cluster_local reply.
struct LocalJobs {
  std::vector<std::string> keys;      // one per job: an MPI job's launcher key, "n<rank>.<id>" for a local job
  std::vector<long long> ids;         // the RM's job id of each
  std::vector<std::string> candidates;  // the keys Algorithm 2 selected on this node
};

// Reads the RM's reply; `node` (this rank) names the jobs only this node has. An error names the field.
Result<LocalJobs> read_local(const nlohmann::json& reply, int node);

// Newline-joined keys (what the ranks exchange) and back. Keys hold no spaces or newlines (the RM checks).
std::string join_keys(const std::vector<std::string>& keys);
std::vector<std::string> split_keys(const std::string& text);

// The union of every node's keys, sorted: the same index on every node.
std::vector<std::string> global_keys(const std::vector<std::string>& all_nodes_keys);

// S_l over the global index: 1 for each of this node's candidates.
std::vector<int> local_array(const std::vector<std::string>& global, const std::vector<std::string>& candidates);

// The RM ids of this node's jobs in the order of `order` (indices into `global`), skipping keys this node
// does not have.
std::vector<long long> local_order(const std::vector<std::size_t>& order, const std::vector<std::string>& global,
                                   const LocalJobs& local);

}  // namespace cosched::cluster
