// One RM per CPU: every CPU an RM confines jobs to is held by a lock file (flock) in a directory all RMs
// of the machine share, so a second RM whose CPUs overlap refuses to start with one error naming the RM
// that holds them (its pid and socket). RMs with disjoint CPUs partition the machine.
//
// The kernel drops a flock when the last descriptor of its open file goes away: a dead RM holds nothing,
// no stale lock survives it, and its guard (forked after the locks are taken, so it shares them) keeps the
// CPUs held until it has released that RM's jobs.
#pragma once

#include <string>
#include <vector>

#include "cosched/cpuset.hpp"
#include "cosched/error.hpp"

namespace cosched::rm {

class CpuLocks {
 public:
  CpuLocks() = default;
  CpuLocks(CpuLocks&& o) noexcept : fds_(std::move(o.fds_)) { o.fds_.clear(); }
  CpuLocks& operator=(CpuLocks&& o) noexcept;
  CpuLocks(const CpuLocks&) = delete;
  CpuLocks& operator=(const CpuLocks&) = delete;
  ~CpuLocks();

  // Locks every CPU of `cpus` in `dir` (created sticky and world-writable, like /tmp, so RMs of every user
  // meet there), writing "<pid> <socket>" into each lock file. All or nothing: on a conflict nothing stays
  // locked and the error names every other RM holding some of these CPUs.
  static Result<CpuLocks> acquire(const std::string& dir, const CpuSet& cpus, const std::string& socket);

  // COSCHED_LOCK_DIR, else /run/lock/cosched where /run/lock exists, else /tmp/cosched-locks.
  static std::string default_dir();

 private:
  std::vector<int> fds_;
};

}  // namespace cosched::rm
