// cosched-cluster's round without MPI (cluster/round.hpp): the RM's reply read into keys, the global index
// every node derives, S_l over it, and the agreed order mapped back to this node's job ids.
#include <gtest/gtest.h>

#include "policies/bandwidth/membus_select.hpp"
#include "round.hpp"

using namespace cosched::cluster;
using nlohmann::json;

TEST(ClusterRound, ReadsTheRmsViewAndNamesLocalJobsByNode) {
  json reply = {{"ok", true}, {"supported", true}, {"policy", "membus"},
                {"jobs", {{{"id", 1}, {"key", "ompi:77"}}, {{"id", 4}, {"key", nullptr}}}},
                {"candidates", {4}}};
  auto l = read_local(reply, 3);
  ASSERT_TRUE(l.ok()) << l.error().message;
  EXPECT_EQ(l->keys, (std::vector<std::string>{"ompi:77", "n3.4"}));
  EXPECT_EQ(l->ids, (std::vector<long long>{1, 4}));
  EXPECT_EQ(l->candidates, (std::vector<std::string>{"n3.4"}));
}

TEST(ClusterRound, RefusesAPolicyWithoutAClusterPhaseAndBadFields) {
  auto l = read_local(json{{"ok", true}, {"supported", false}, {"policy", "equip"}}, 0);
  ASSERT_FALSE(l.ok());
  EXPECT_NE(l.error().message.find("equip"), std::string::npos);
  EXPECT_FALSE(read_local(json{{"ok", true}, {"supported", true}, {"jobs", 3}, {"candidates", json::array()}}, 0).ok());
  EXPECT_FALSE(read_local(json{{"ok", true}, {"supported", true}, {"jobs", json::array()}, {"candidates", {9}}}, 0).ok());
  EXPECT_FALSE(read_local(json{{"ok", false}, {"error", "permission denied"}}, 0).ok());
}

TEST(ClusterRound, TwoNodesAgreeOnTheOrder) {
  // Node 0 has jobs A (id 1) and B (id 2) and proposes A; node 1 has A (id 7), B (id 8) and its own job
  // (id 9) and proposes A and its own. S_total over (A, B, n1.9) = (2, 0, 1): order A, n1.9, B.
  LocalJobs n0{{"A", "B"}, {1, 2}, {"A"}};
  LocalJobs n1{{"A", "B", "n1.9"}, {7, 8, 9}, {"A", "n1.9"}};
  std::vector<std::string> all = split_keys(join_keys(n0.keys) + join_keys(n1.keys));
  const auto global = global_keys(all);
  ASSERT_EQ(global, (std::vector<std::string>{"A", "B", "n1.9"}));
  const auto s0 = local_array(global, n0.candidates);
  const auto s1 = local_array(global, n1.candidates);
  EXPECT_EQ(s0, (std::vector<int>{1, 0, 0}));
  EXPECT_EQ(s1, (std::vector<int>{1, 0, 1}));
  const auto order = cosched::policy::membus_reduce({s0, s1});
  EXPECT_EQ(order, (std::vector<std::size_t>{0, 2, 1}));
  EXPECT_EQ(local_order(order, global, n0), (std::vector<long long>{1, 2}));
  EXPECT_EQ(local_order(order, global, n1), (std::vector<long long>{7, 9, 8}));
}
