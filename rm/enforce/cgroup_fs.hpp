// Finding one's way in cgroupfs: where a hierarchy is mounted and which cgroup a process is in. Shared by
// the cpuset enforcement (cgroup.cpp) and the freezer (stop_freezer.cpp).
#pragma once

#include <sys/types.h>

#include <string>

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

}  // namespace cosched::rm::cgroupfs
