#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmath>

#include "rm/job/arena_host.hpp"

using namespace cosched;
using cosched::rm::ArenaHost;

namespace {
// Maps the arena the way a job does, to write job-side fields.
proto::Arena* map_as_job(int fd) {
  void* p = mmap(nullptr, proto::kArenaSize, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  return p == MAP_FAILED ? nullptr : static_cast<proto::Arena*>(p);
}

void write_report(proto::Arena* a, double speedup, double eff, double iter, int cpus, std::uint64_t seq) {
  auto& j = a->job;
  j.seq.store(j.seq.load() + 1);
  j.speedup = speedup;
  j.efficiency = eff;
  j.iteration_s = iter;
  j.baseline_s = iter * 2;
  j.spread = 0.01;
  j.cpus = cpus;
  j.samples = 5;
  j.amdahl_f = -1;
  j.reports = seq;
  j.seq.store(j.seq.load() + 1);
}
}  // namespace

TEST(ArenaHost, HeaderAndPublishedAllocation) {
  auto h = ArenaHost::create(7);
  ASSERT_TRUE(h.ok());
  auto* a = map_as_job((*h)->fd());
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->header.magic, proto::kMagic);
  EXPECT_EQ(a->header.version, proto::kVersion);
  EXPECT_EQ(a->header.job_id, 7U);
  (*h)->publish(3, CpuSet::of({1, 2, 65}), true);
  EXPECT_EQ(a->rm.allocation.load(), 3);
  EXPECT_EQ(a->rm.cpu_mask[0].load(), 0b110U);
  EXPECT_EQ(a->rm.cpu_mask[1].load(), 0b10U);
  EXPECT_EQ(a->rm.seq.load() % 2, 0U);
  EXPECT_NE(a->rm.flags.load() & proto::rm_apply_mask, 0U);
  munmap(a, proto::kArenaSize);
}

TEST(ArenaHost, JobCannotShrinkTheArena) {
  auto h = ArenaHost::create(1);
  ASSERT_TRUE(h.ok());
  EXPECT_NE(ftruncate((*h)->fd(), 0), 0);  // sealed: a shrink would SIGBUS the RM
}

TEST(ArenaHost, ValidReportIsRead) {
  auto h = ArenaHost::create(1);
  auto* a = map_as_job((*h)->fd());
  EXPECT_FALSE((*h)->read_report().present);
  write_report(a, 1.8, 0.9, 0.02, 2, 1);
  auto r = (*h)->read_report();
  ASSERT_TRUE(r.valid) << r.invalid_field;
  EXPECT_DOUBLE_EQ(r.perf.speedup, 1.8);
  EXPECT_EQ(r.perf.cpus, 2);
  EXPECT_EQ(r.seq, 1U);
  munmap(a, proto::kArenaSize);
}

TEST(ArenaHost, NonsenseFromTheJobIsRejectedNamingTheField) {
  auto h = ArenaHost::create(1);
  auto* a = map_as_job((*h)->fd());
  struct Case {
    double speedup, eff, iter;
    int cpus;
    const char* field;
  } cases[] = {
      {std::nan(""), 0.5, 0.1, 2, "speedup"}, {1e12, 0.5, 0.1, 2, "speedup"},  {1.0, -1, 0.1, 2, "efficiency"},
      {1.0, 0.5, INFINITY, 2, "iteration_s"}, {1.0, 0.5, 0.1, 0, "cpus"},       {1.0, 0.5, 0.1, 100000, "cpus"},
  };
  std::uint64_t seq = 0;
  for (const auto& c : cases) {
    write_report(a, c.speedup, c.eff, c.iter, c.cpus, ++seq);
    auto r = (*h)->read_report();
    EXPECT_TRUE(r.present);
    EXPECT_FALSE(r.valid) << c.field;
    EXPECT_EQ(r.invalid_field.rfind(c.field, 0), 0U) << r.invalid_field;
  }
  munmap(a, proto::kArenaSize);
}

TEST(ArenaHost, SeqlockHeldOddGivesNoReport) {
  auto h = ArenaHost::create(1);
  auto* a = map_as_job((*h)->fd());
  write_report(a, 1.5, 0.75, 0.1, 2, 1);
  a->job.seq.store(a->job.seq.load() + 1);  // the job "dies" mid-write
  auto r = (*h)->read_report();
  EXPECT_FALSE(r.valid);
  EXPECT_NE(r.invalid_field.find("seq"), std::string::npos);
  munmap(a, proto::kArenaSize);
}

TEST(ArenaHost, ProgressIsClamped) {
  auto h = ArenaHost::create(1);
  auto* a = map_as_job((*h)->fd());
  a->job.last_team = -5;
  a->job.phase = 77;
  auto p = (*h)->read_progress();
  EXPECT_EQ(p.last_team, 0);
  EXPECT_EQ(p.phase, proto::Phase::none);
  munmap(a, proto::kArenaSize);
}
