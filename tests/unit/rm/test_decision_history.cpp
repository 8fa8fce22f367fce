// The `decisions` history is bounded by bytes: eight rounds of 256 short jobs took the RM from 51 MB to
// 1,021 MB when it kept 4,096 entries that each listed every running job.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "rm/accounting/decision_log.hpp"

using cosched::rm::DecisionHistory;

TEST(DecisionHistory, StaysWithinItsByteBudget) {
  DecisionHistory h(64 * 1024);
  const std::string pad(1000, 'x');
  for (int i = 0; i < 100000; ++i) h.add(i, R"({"t":)" + std::to_string(i) + R"(,"pad":")" + pad + R"("})");
  EXPECT_LE(h.bytes(), 64u * 1024u);
  EXPECT_GT(h.size(), 50u);  // the budget is used, not emptied
  auto all = nlohmann::json::parse(h.since(-1));
  ASSERT_EQ(all.size(), h.size());
  EXPECT_EQ(all.back()["t"], 99999);  // oldest dropped first, newest kept
  EXPECT_EQ(all.front()["t"].get<int>(), 100000 - static_cast<int>(h.size()));
}

TEST(DecisionHistory, SinceIsStrictAndTheNewestEntryIsAlwaysKept) {
  DecisionHistory h(10);
  h.add(1.0, R"({"t":1})");
  h.add(2.0, R"({"t":2,"big":"more than ten bytes"})");
  EXPECT_EQ(h.size(), 1u);
  EXPECT_EQ(nlohmann::json::parse(h.since(1.0)).size(), 1u);
  EXPECT_EQ(h.since(2.0), "[]");
  DecisionHistory empty(100);
  EXPECT_EQ(empty.since(-1), "[]");
}
