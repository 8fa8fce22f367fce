// Finding one's way in cgroupfs: where a hierarchy is mounted, which cgroup a process is in, and writing a value. Shared by
// the cpuset enforcement (cgroup.cpp) and the freezer (stop_freezer.cpp).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "cosched/error.hpp"

namespace cosched::rm::cgroupfs {

struct Mount {
  std::string root;        // hierarchy path mounted there ("/" normally)
  std::string mountpoint;
};

// The mount of the v1 hierarchy holding `controller` (version 1) or of the unified hierarchy (version 2,
// `controller` ignored). False when there is none.
bool find_mount(int version, const std::string& controller, Mount& m);

// The cgroup of `pid` in that hierarchy, as a path relative to the hierarchy root; empty if none (gone).
std::string cgroup_of(pid_t pid, int version, const std::string& controller);

// The directory of hierarchy path `cg` under the mount.
std::string to_fs(const Mount& m, const std::string& cg);

// The first line of a control file, empty when it cannot be read.
std::string read_line(const std::string& path);

// Writes `text` into the control file at `path`; the error names the value, the file and the kernel's errno.
Status write_file(const std::string& path, const std::string& text);

// Cgroup directories the RM made and could not remove yet (a task that exited but is not reaped keeps its
// cgroup busy for a moment).
class PendingDirs {
 public:
  // Removes `dir` now, or keeps it for later when it is still busy.
  void remove(const std::string& dir);
  // Tries the kept ones again (each quantum).
  void tidy();
  // At shutdown: tries for up to a second, then hands what is left to `hand_over` (the guard, which
  // outlives the RM and keeps trying).
  template <typename HandOver>
  void drain(HandOver hand_over) {
    for (int i = 0; i < 20 && !dirs_.empty(); ++i) {
      tidy();
      if (!dirs_.empty()) pause_briefly();
    }
    for (const auto& d : dirs_) hand_over(d);
    dirs_.clear();
  }

 private:
  static void pause_briefly();  // 50 ms: exiting tasks leave their cgroup shortly
  std::vector<std::string> dirs_;
};

}  // namespace cosched::rm::cgroupfs
