#include <gtest/gtest.h>

#include "policies/registry.hpp"

using namespace cosched::policy;

TEST(Registry, BuildsKnownPolicy) {
  auto p = make_policy("equip", Machine{});
  ASSERT_TRUE(p.ok());
  EXPECT_EQ((*p)->name(), "equip");
}

TEST(Registry, UnknownPolicyListsKnownOnes) {
  auto p = make_policy("nosuch", Machine{});
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.error().message.find("known: equip"), std::string::npos) << p.error().message;
}

TEST(Registry, UnknownParameterIsAnError) {
  auto p = make_policy("equip", Machine{}, {{"step", "2"}});
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.error().message.find("no parameter 'step'"), std::string::npos);
}

TEST(Registry, ParsesKeyValue) {
  auto kv = parse_param("target_eff=0.7");
  ASSERT_TRUE(kv.ok());
  EXPECT_EQ(kv->first, "target_eff");
  EXPECT_EQ(kv->second, "0.7");
  EXPECT_FALSE(parse_param("novalue").ok());
  EXPECT_FALSE(parse_param("=3").ok());
}

namespace {
std::string param(const Policy& p, std::string_view name) {
  for (const auto& q : p.params()) {
    if (q.name == name) return q.value;
  }
  return "(absent)";
}
}  // namespace

// `cosched-ctl set high_eff=0.95 step=0` used to leave high_eff applied while reporting the error.
TEST(Registry, WithParamsAppliesAllOrNothing) {
  auto p = make_policy("pdpa", Machine{8, 8, 1, 1});
  ASSERT_TRUE(p.ok());
  const std::string high_before = param(**p, "high_eff");
  auto next = with_params(**p, {{"high_eff", "0.95"}, {"step", "0"}});
  ASSERT_FALSE(next.ok());
  EXPECT_NE(next.error().message.find("step='0'"), std::string::npos) << next.error().message;
  EXPECT_EQ(param(**p, "high_eff"), high_before);

  auto good = with_params(**p, {{"high_eff", "0.95"}, {"step", "3"}});
  ASSERT_TRUE(good.ok()) << good.error().message;
  EXPECT_EQ(param(**good, "high_eff"), "0.95");
  EXPECT_EQ(param(**good, "step"), "3");
  EXPECT_EQ(param(**p, "high_eff"), high_before);  // the original is untouched
}

// A JSON object reaches the RM with its keys sorted: constraints between parameters must not depend on it.
TEST(Registry, ParameterOrderDoesNotMatter) {
  auto p = make_policy("pdpa", Machine{8, 8, 1, 1});
  ASSERT_TRUE(p.ok());
  // Raising both thresholds above the old high_eff needs high_eff first; they arrive the other way round.
  auto next = with_params(**p, {{"target_eff", "0.96"}, {"high_eff", "0.98"}});
  ASSERT_TRUE(next.ok()) << next.error().message;
  EXPECT_EQ(param(**next, "target_eff"), "0.96");
  EXPECT_EQ(param(**next, "high_eff"), "0.98");
  // A pair that no order satisfies is refused.
  EXPECT_FALSE(with_params(**p, {{"target_eff", "0.99"}, {"high_eff", "0.98"}}).ok());
}
