// What the daemon's room tests share: a job record with a real arena, and the arena mapped as the job maps
// it (to write what a job writes, or read what the RM published). A header, not an anonymous namespace per
// file: the unity build compiles several test files as one (docs/architecture.md, "How it compiles").
#pragma once

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include "rm/job/job.hpp"

namespace cosched::rm::test {

inline Job job_with_arena(policy::JobId id, pid_t pid = ::getpid()) {
  Job j;
  j.id = id;
  j.pid = pid;
  auto arena = ArenaHost::create(static_cast<std::uint32_t>(id));
  EXPECT_TRUE(arena);
  j.arena = std::move(*arena);
  return j;
}

// Unmap with munmap(p, proto::kArenaSize); nullptr when mmap fails.
inline proto::Arena* map_as_job(const Job& j) {
  void* p = mmap(nullptr, proto::kArenaSize, PROT_READ | PROT_WRITE, MAP_SHARED, j.arena->fd(), 0);
  return p == MAP_FAILED ? nullptr : static_cast<proto::Arena*>(p);
}

}  // namespace cosched::rm::test
