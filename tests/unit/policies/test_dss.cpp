// DSS (Polychronopoulos et al., §3.1, eqs. 1–3): W = Σρ, R_i = ⌊ρ_i P / W⌋, x_i = R_i + δ_i, min(x_i, ρ_i).
#include <gtest/gtest.h>

#include "policies/space/dss.hpp"
#include "policy_test_util.hpp"

using namespace cosched::policy;

namespace {

using cosched::policy::testing::counts;

Snapshot machine(int cpus, const std::vector<int>& requests) { return cosched::policy::testing::machine_with(cpus, requests); }

}  // namespace

TEST(Dss, ProportionalToRequests) {
  // W = 120 on P = 60: R = ⌊30·60/120⌋ = 15 each (the paper's 64-CPU Origin with 60 in use).
  Dss p;
  EXPECT_EQ(counts(p.decide(machine(60, {30, 30, 30, 30}))), (std::vector<int>{15, 15, 15, 15}));
  // W = 90: 30·60/90 = 20, 60·60/90 = 40.
  EXPECT_EQ(counts(p.decide(machine(60, {30, 60}))), (std::vector<int>{20, 40}));
}

TEST(Dss, LightLoadGetsTheRequest) {
  // W = 30 ≤ P: R = 20 and 40 exceed the requests, min(x, ρ) = ρ; the other 30 CPUs stay idle.
  const auto t = dss_terms({10, 20}, 60);
  EXPECT_EQ(t.workload, 30);
  EXPECT_EQ(t.r, (std::vector<int>{20, 40}));
  Dss p;
  EXPECT_EQ(counts(p.decide(machine(60, {10, 20}))), (std::vector<int>{10, 20}));
}

TEST(Dss, ShareBelowOneGetsDelta) {
  // W = 62 on 8 CPUs: R = ⌊240/62⌋ = 3, 3 and ⌊16/62⌋ = 0 → δ = 1.
  const auto t = dss_terms({30, 30, 2}, 8);
  EXPECT_EQ(t.workload, 62);
  EXPECT_EQ(t.r, (std::vector<int>{3, 3, 0}));
  EXPECT_EQ(t.x, (std::vector<int>{3, 3, 1}));
  Dss p;
  auto d = p.decide(machine(8, {30, 30, 2}));
  EXPECT_EQ(counts(d), (std::vector<int>{3, 3, 1}));  // the floor leaves one CPU idle, as in the paper
  EXPECT_EQ(d.jobs[2].reason, "DSS: ρ=2 W=62 P=8: R=⌊ρP/W⌋=0, δ=1, min(x, ρ)=1 → 1 CPU");
}

TEST(Dss, FillRemainderIsAnOption) {
  // Remainders of ρP/W: 240 - 3·62 = 54, 54, 16: the first job gets the idle CPU.
  EXPECT_EQ(dss_partition({30, 30, 2}, 8, true), (std::vector<int>{4, 3, 1}));
  Dss p;
  ASSERT_TRUE(p.set_param("fill_remainder", "1").ok());
  EXPECT_EQ(counts(p.decide(machine(8, {30, 30, 2}))), (std::vector<int>{4, 3, 1}));
  EXPECT_FALSE(p.set_param("fill_remainder", "2").ok());
  EXPECT_FALSE(p.set_param("step", "1").ok());
}

TEST(Dss, DeltaOverflowIsTakenFromTheLargest) {
  // W = 43 on 10 CPUs: x = 4, 4, 1, 1, 1 → Σ = 11 > 10. One CPU comes back from the largest (youngest on ties).
  const auto t = dss_terms({20, 20, 1, 1, 1}, 10);
  EXPECT_EQ(t.x, (std::vector<int>{4, 4, 1, 1, 1}));
  Dss p;
  auto d = p.decide(machine(10, {20, 20, 1, 1, 1}));
  EXPECT_EQ(counts(d), (std::vector<int>{4, 3, 1, 1, 1}));
  EXPECT_NE(d.jobs[1].reason.find("trimmed by 1 so Σ fits P"), std::string::npos) << d.jobs[1].reason;
}

TEST(Dss, MoreJobsThanCpusKeepsOneEach) {
  EXPECT_EQ(dss_partition({8, 1, 1, 1, 1}, 4), (std::vector<int>{1, 1, 1, 1, 1}));
  Dss p;
  EXPECT_FALSE(p.decide(machine(4, {8, 1, 1, 1, 1})).may_start);
}

TEST(Dss, LargeNumbersDoNotOverflow) {
  // ρ·P = 2^20 · 1024 = 2^30 per job, Σ over 4 jobs would overflow a 32-bit product sum.
  EXPECT_EQ(dss_partition({1 << 20, 1 << 20, 1 << 20, 1 << 20}, 1024), (std::vector<int>{256, 256, 256, 256}));
  EXPECT_TRUE(dss_partition({}, 8).empty());
}
