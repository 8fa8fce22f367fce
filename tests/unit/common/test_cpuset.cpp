#include <gtest/gtest.h>

#include "cosched/cpuset.hpp"

using cosched::CpuSet;

TEST(CpuSet, ParsesKernelListFormat) {
  auto s = CpuSet::parse("0-3,8,10-11");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->count(), 7);
  EXPECT_TRUE(s->test(3));
  EXPECT_FALSE(s->test(4));
  EXPECT_EQ(s->to_string(), "0-3,8,10-11");
}

TEST(CpuSet, RoundTripsAcrossWordBoundaries) {
  auto s = CpuSet::range(60, 130);
  EXPECT_EQ(s.count(), 71);
  EXPECT_EQ(s.first(), 60);
  EXPECT_EQ(s.last(), 130);
  EXPECT_EQ(CpuSet::parse(s.to_string())->to_string(), "60-130");
}

TEST(CpuSet, EmptyTextIsEmptySet) {
  auto s = CpuSet::parse("");
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(s->empty());
  EXPECT_EQ(s->to_string(), "");
  EXPECT_EQ(s->first(), -1);
}

TEST(CpuSet, RejectsBadTokensNamingThem) {
  for (const char* bad : {"a", "3-1", "1-", "-1", "0,,x", "99999999"}) {
    auto s = CpuSet::parse(bad);
    ASSERT_FALSE(s.ok()) << bad;
    EXPECT_NE(s.error().message.find("bad CPU list token"), std::string::npos) << s.error().message;
  }
}

TEST(CpuSet, SetAlgebra) {
  auto a = CpuSet::range(0, 3);
  auto b = CpuSet::of({2, 3, 4});
  EXPECT_EQ((a | b).to_string(), "0-4");
  EXPECT_EQ((a & b).to_string(), "2-3");
  EXPECT_EQ((a - b).to_string(), "0-1");
  EXPECT_TRUE((a & CpuSet::of({9})).empty());
  EXPECT_EQ(a, CpuSet::parse("0,1,2,3").value());
}
