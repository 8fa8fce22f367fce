// A pidfd for a process (Linux 5.3): readable once the process exits, and never mistaken for another process
// that reuses its pid. Through syscall(): Debian 12's <sys/pidfd.h> declares pidfd_open without C linkage.
#pragma once

#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

namespace cosched::rm {

inline int open_pidfd(pid_t pid) { return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)); }

}  // namespace cosched::rm
