// Writing one value into a kernel control file (cgroupfs, and the like): one open and one write(2), so the
// caller gets the kernel's own errno for that write (e.g. ESRCH when a pid moved into cgroup.procs has
// exited), which a buffered stream would lose. Used by the enforcement backends and by the guard process.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <string_view>

namespace cosched::rm {

// Returns 0, or the errno of the failed open or write.
inline int write_control_file(const std::string& path, std::string_view text) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  int err = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) ? 0 : errno;
  ::close(fd);
  return err;
}

}  // namespace cosched::rm
