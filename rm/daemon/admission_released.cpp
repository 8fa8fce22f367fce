// Released processes that still run (admission.hpp says why they count). A pidfd per process: it turns
// readable when the process exits, and a pid the kernel reuses meanwhile is never mistaken for it.
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "admission.hpp"
#include "pidfd.hpp"
#include "cosched/log.hpp"

namespace cosched::rm {

Admission::~Admission() {
  for (int fd : released_) ::close(fd);
}

void Admission::released(pid_t pid) {
  const int fd = open_pidfd(pid);
  if (fd < 0) {
    // Already gone (ESRCH), or a kernel without pidfds: nothing runs that we could count.
    COSCHED_DEBUG(rm, "released pid {}: no pidfd ({}); not counted at admission", pid, errno);
    return;
  }
  released_.push_back(fd);
}

int Admission::released_running() {
  auto exited = [](int fd) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 0) == 0) return false;
    ::close(fd);
    return true;
  };
  released_.erase(std::remove_if(released_.begin(), released_.end(), exited), released_.end());
  return static_cast<int>(released_.size());
}

}  // namespace cosched::rm
