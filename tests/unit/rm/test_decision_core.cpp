// The decision core (rm/decision/decision_core.hpp): the policy's answer made safe, stops, placement, each
// process's action and the decision-log record, with values worked out by hand.
#include <gtest/gtest.h>

#include "rm/decision/decision_core.hpp"

using cosched::CpuSet;
using namespace cosched::rm;
namespace policy = cosched::policy;

namespace {

// A policy that answers what the test tells it to.
class Scripted : public policy::Policy {
 public:
  policy::Decision next;
  int calls = 0;
  [[nodiscard]] std::string_view name() const override { return "scripted"; }
  [[nodiscard]] std::unique_ptr<Policy> clone() const override { return std::make_unique<Scripted>(*this); }
  policy::Decision decide(const policy::Snapshot& /*s*/) override {
    ++calls;
    return next;
  }
};

CoreMachine flat(int n) {
  CoreMachine m;
  m.cpus = n;
  for (int i = 0; i < n; ++i) {
    m.order.push_back(i);
    m.core_of.push_back(i);
  }
  return m;
}

CoreJob job(policy::JobId id, int allocation, const CpuSet& cpus, bool runnable = true, std::string state = "") {
  CoreJob j;
  j.id = id;
  j.allocation = allocation;
  j.cpus = cpus;
  j.processes.push_back({id, allocation, cpus, runnable, std::move(state)});
  return j;
}

policy::Allocation alloc(policy::JobId id, int cpus, bool runnable = true, std::string state = "",
                         std::string reason = "") {
  return {id, cpus, runnable, std::move(state), std::move(reason)};
}

policy::Snapshot snap(policy::Event e, policy::JobId subject, double now = 1.5) {
  policy::Snapshot s;
  s.event = e;
  s.subject = subject;
  s.now = now;
  return s;
}

SettleContext ctx(bool log = true) { return {"scripted", false, std::nullopt, log}; }

}  // namespace

TEST(DecisionCore, AnArrivalIsPlacedAndLogged) {
  // Job 1 holds 0-3 of 4; job 2 arrives. The policy gives 2 each: job 1 keeps 0-1 (the first it had), job 2
  // takes 2-3.
  DecisionCore core(flat(4));
  Scripted pol;
  pol.next.jobs = {alloc(1, 2, true, "DEC", "equal shares"), alloc(2, 2, true, "NEW", "arrival")};
  pol.next.may_start = true;
  pol.next.may_start_reason = "a CPU is free";
  std::vector<CoreJob> jobs = {job(1, 4, CpuSet::range(0, 3), true, "STABLE"), job(2, 0, {})};
  const Proposal p = core.propose(pol, snap(policy::Event::arrival, 2), jobs);
  EXPECT_TRUE(p.stops.empty());
  const Settled s = core.settle(p, jobs, ctx());
  ASSERT_EQ(s.processes.size(), 2u);
  EXPECT_EQ(s.processes[0].count, 2);
  EXPECT_EQ(s.processes[0].cpus.to_string(), "0-1");
  EXPECT_EQ(s.processes[0].from, 4);
  EXPECT_TRUE(s.processes[0].moved);
  EXPECT_EQ(s.processes[0].why, "equal shares");
  EXPECT_EQ(s.processes[1].cpus.to_string(), "2-3");
  EXPECT_TRUE(s.changed);
  EXPECT_TRUE(s.may_start);
  EXPECT_TRUE(s.may_start_changed);  // the caller said no before
  ASSERT_TRUE(s.noteworthy);
  EXPECT_EQ(s.record["event"], "arrival");
  EXPECT_EQ(s.record["subject"], 2);
  EXPECT_EQ(s.record["t"], 1.5);
  EXPECT_EQ(s.record["policy"], "scripted");
  ASSERT_EQ(s.entries.size(), 2u);
  EXPECT_EQ(s.entries[0]["cpus"], "0-1");
  EXPECT_EQ(s.entries[0]["run"], "running");
  EXPECT_EQ(s.entries[0]["state"], "DEC");
  EXPECT_EQ(s.entries[1]["allocated"], 2);
}

TEST(DecisionCore, AnAllocationOutOfRangeKeepsTheJobWhereItIs) {
  DecisionCore core(flat(4));
  Scripted pol;
  pol.next.jobs = {alloc(1, 9)};  // more than the machine
  std::vector<CoreJob> jobs = {job(1, 3, CpuSet::range(0, 2))};
  const Settled s = core.settle(core.propose(pol, snap(policy::Event::quantum, -1), jobs), jobs, ctx());
  ASSERT_EQ(s.errors.size(), 1u);
  EXPECT_EQ(s.errors[0], "scripted gave job 1 9 CPUs (must be 1..4); keeping 3");
  EXPECT_EQ(s.processes[0].count, 3);
  EXPECT_FALSE(s.processes[0].moved);
  EXPECT_FALSE(s.changed);
  EXPECT_FALSE(s.noteworthy);  // a quantum that changed nothing is not logged
  EXPECT_TRUE(s.record.is_null());
}

TEST(DecisionCore, AWakeUpIsKeptAtItsTime) {
  // A policy's wake-up ends a quantum of its: half a millisecond ahead stays there (it used to be pushed
  // to 1 ms on, so a tick just before a vtq-dss quantum's end lengthened it); never less than 1 µs ahead;
  // "now" or the past gets 1 ms, not a loop.
  DecisionCore core(flat(2));
  Scripted pol;
  pol.next.jobs = {alloc(1, 2)};
  std::vector<CoreJob> jobs = {job(1, 2, CpuSet::range(0, 1))};
  pol.next.wake_at = 1.5005;
  Settled s = core.settle(core.propose(pol, snap(policy::Event::quantum, -1, 1.5), jobs), jobs, ctx());
  ASSERT_TRUE(s.wake_at.has_value());
  EXPECT_EQ(*s.wake_at, 1.5005);
  pol.next.wake_at = 1.5 + 1e-9;
  s = core.settle(core.propose(pol, snap(policy::Event::quantum, -1, 1.5), jobs), jobs, ctx());
  EXPECT_EQ(*s.wake_at, 1.5 + 1e-6);
  pol.next.wake_at = 1.5;
  s = core.settle(core.propose(pol, snap(policy::Event::quantum, -1, 1.5), jobs), jobs, ctx());
  EXPECT_EQ(*s.wake_at, 1.5 + 1e-3);
  pol.next.wake_at = std::nullopt;
  s = core.settle(core.propose(pol, snap(policy::Event::quantum, -1, 1.5), jobs), jobs, ctx());
  EXPECT_FALSE(s.wake_at.has_value());
}

TEST(DecisionCore, AStopFreesTheJobsCpusForTheOthers) {
  // Two jobs of 2 on 4 CPUs; the policy stops job 2 and gives job 1 all 4. Job 2 keeps its allocation and CPU
  // set; job 1 grows onto them.
  DecisionCore core(flat(4));
  Scripted pol;
  pol.next.jobs = {alloc(1, 4), alloc(2, 2, false, "", "its quantum ended")};
  std::vector<CoreJob> jobs = {job(1, 2, CpuSet::range(0, 1)), job(2, 2, CpuSet::range(2, 3))};
  const Proposal p = core.propose(pol, snap(policy::Event::timer, -1), jobs);
  ASSERT_EQ(p.stops.size(), 1u);
  EXPECT_EQ(p.stops[0].first, 2);
  EXPECT_EQ(p.stops[0].second, "its quantum ended");
  jobs[1].processes[0].runnable = false;  // the caller stopped it
  const Settled s = core.settle(p, jobs, ctx());
  ASSERT_EQ(s.processes.size(), 2u);
  EXPECT_EQ(s.processes[0].id, 1);
  EXPECT_EQ(s.processes[0].cpus.to_string(), "0-3");
  EXPECT_EQ(s.processes[1].id, 2);
  EXPECT_FALSE(s.processes[1].running);
  EXPECT_TRUE(s.processes[1].stopped_now);
  EXPECT_EQ(s.processes[1].count, 2);
  EXPECT_EQ(s.processes[1].cpus.to_string(), "2-3");
  EXPECT_EQ(s.entries[1]["run"], "stopped");
}

TEST(DecisionCore, AStopTheCallerCouldNotMakeLeavesTheJobPlaced) {
  // The daemon defers the stop of a job writing its report: it runs on, and is placed with the others.
  DecisionCore core(flat(4));
  Scripted pol;
  pol.next.jobs = {alloc(1, 4), alloc(2, 2, false)};
  std::vector<CoreJob> jobs = {job(1, 2, CpuSet::range(0, 1)), job(2, 2, CpuSet::range(2, 3))};
  const Proposal p = core.propose(pol, snap(policy::Event::timer, -1), jobs);
  const Settled s = core.settle(p, jobs, ctx());  // nothing stopped
  ASSERT_EQ(s.processes.size(), 2u);
  EXPECT_TRUE(s.processes[1].running);
  EXPECT_FALSE(s.processes[1].stopped_now);
  // 4 + 2 CPUs on 4: placement shares, job 1 keeps its own and takes the two free ones it can.
  EXPECT_EQ(s.processes[0].count, 4);
  EXPECT_EQ(s.processes[1].cpus.to_string(), "2-3");
}

TEST(DecisionCore, AResumedJobIsPlacedAndToldToContinue) {
  DecisionCore core(flat(4));
  Scripted pol;
  pol.next.jobs = {alloc(1, 2), alloc(2, 2, true, "", "its turn")};
  std::vector<CoreJob> jobs = {job(1, 4, CpuSet::range(0, 3)), job(2, 2, CpuSet::range(2, 3), false)};
  const Settled s = core.settle(core.propose(pol, snap(policy::Event::timer, -1), jobs), jobs, ctx());
  ASSERT_EQ(s.processes.size(), 2u);
  EXPECT_EQ(s.processes[0].cpus.to_string(), "0-1");
  EXPECT_EQ(s.processes[1].cpus.to_string(), "2-3");
  EXPECT_TRUE(s.processes[1].resumed);
  EXPECT_FALSE(s.processes[1].moved);  // same count, same CPUs: nothing to publish, only to continue
  EXPECT_TRUE(s.processes[1].listed);
  EXPECT_TRUE(s.changed);
}

TEST(DecisionCore, RanksShareTheirJobsAllocation) {
  // A job of two ranks given 3 CPUs: rank 0 gets 2 (0-1), rank 1 gets 1 (2) (rank_split.hpp: the first ranks
  // take the remainder).
  DecisionCore core(flat(4));
  Scripted pol;
  pol.next.jobs = {alloc(7, 3, true, "", "equal shares")};
  CoreJob j;
  j.id = 7;
  j.several = true;
  j.allocation = 4;
  j.cpus = CpuSet::range(0, 3);
  j.processes = {{10, 2, CpuSet::range(0, 1), true, ""}, {11, 2, CpuSet::range(2, 3), true, ""}};
  std::vector<CoreJob> jobs = {j};
  const Settled s = core.settle(core.propose(pol, snap(policy::Event::quantum, -1), jobs), jobs, ctx());
  ASSERT_EQ(s.processes.size(), 2u);
  EXPECT_EQ(s.job_allocation.at(7), 3);
  EXPECT_EQ(s.job_cpus.at(7).to_string(), "0-2");
  EXPECT_EQ(s.processes[0].count, 2);
  EXPECT_EQ(s.processes[0].cpus.to_string(), "0-1");
  EXPECT_FALSE(s.processes[0].moved);
  EXPECT_EQ(s.processes[1].count, 1);
  EXPECT_EQ(s.processes[1].cpus.to_string(), "2");
  EXPECT_EQ(s.processes[1].why, "equal shares (rank 1: 1 of the job's 3)");
  EXPECT_EQ(s.entries[1]["job"], 7);
}

TEST(DecisionCore, AStateChangeWithoutAMoveIsAWhyLine) {
  DecisionCore core(flat(2));
  Scripted pol;
  pol.next.jobs = {alloc(1, 2, true, "INC")};
  std::vector<CoreJob> jobs = {job(1, 2, CpuSet::range(0, 1), true, "STABLE")};
  const Settled s = core.settle(core.propose(pol, snap(policy::Event::quantum, -1), jobs), jobs, ctx());
  EXPECT_FALSE(s.processes[0].moved);
  EXPECT_TRUE(s.processes[0].restated);
  EXPECT_EQ(s.processes[0].why, "STABLE → INC");
}

TEST(DecisionCore, AHeldMayStartIsWhatIsLogged) {
  DecisionCore core(flat(2));
  Scripted pol;
  pol.next.may_start = true;
  pol.next.may_start_reason = "a CPU is free";
  std::vector<CoreJob> jobs;
  SettleContext c = ctx();
  c.hold = "Slurm job 5 started and has not registered yet (the policy would say: a CPU is free)";
  const Settled s = core.settle(core.propose(pol, snap(policy::Event::quantum, -1), jobs), jobs, c);
  EXPECT_FALSE(s.may_start);
  EXPECT_FALSE(s.may_start_changed);  // the caller said no before too
  EXPECT_EQ(s.may_start_reason, *c.hold);
}

TEST(DecisionCore, PartnersThatChangeAreNamed) {
  DecisionCore core(flat(4));
  Scripted pol;
  pol.next.jobs = {alloc(1, 2), alloc(2, 2), alloc(3, 1)};
  pol.next.co_schedule = {{1, 2}};
  std::vector<CoreJob> jobs = {job(1, 2, CpuSet::range(0, 1)), job(2, 2, CpuSet::range(2, 3)), job(3, 1, {})};
  Settled s = core.settle(core.propose(pol, snap(policy::Event::quantum, -1), jobs), jobs, ctx());
  EXPECT_EQ(s.partners_changed, (std::vector<policy::JobId>{1, 2}));
  EXPECT_TRUE(s.groups_changed);
  EXPECT_EQ(s.partners.at(1), (std::vector<policy::JobId>{2}));
  s = core.settle(core.propose(pol, snap(policy::Event::quantum, -1), jobs), jobs, ctx());
  EXPECT_TRUE(s.partners_changed.empty());  // the same groups again
}

TEST(DecisionCore, WithoutPlacementCpuSetsStayAsTheyAre) {
  CoreMachine m = flat(4);
  m.place_cpus = false;
  DecisionCore core(m);
  Scripted pol;
  pol.next.jobs = {alloc(1, 3)};
  std::vector<CoreJob> jobs = {job(1, 1, {})};
  const Settled s = core.settle(core.propose(pol, snap(policy::Event::quantum, -1), jobs), jobs, ctx(false));
  EXPECT_EQ(s.processes[0].count, 3);
  EXPECT_TRUE(s.processes[0].cpus.empty());
  EXPECT_TRUE(s.processes[0].moved);
  EXPECT_TRUE(s.record.is_null());  // not asked for
}

TEST(DecisionCore, HistoryKeepsTheNewestEstimates) {
  std::vector<policy::HistoryEntry> h;
  for (int i = 0; i < 20; ++i) {
    policy::Perf p;
    p.cpus = i;
    push_history(h, p, i);
  }
  ASSERT_EQ(h.size(), kHistoryDepth);
  EXPECT_EQ(h.front().cpus, 4);
  EXPECT_EQ(h.back().at, 19);
}
