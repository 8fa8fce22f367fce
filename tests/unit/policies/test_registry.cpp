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
