// Released processes that still run (admission.hpp says why they count). A pidfd per process: it turns
// readable when the process exits, and a pid the kernel reuses meanwhile is never mistaken for it.
#include <poll.h>
#include <unistd.h>

#include <algorithm>

#include "admission.hpp"

namespace cosched::rm {

Admission::~Admission() {
  for (int fd : released_) ::close(fd);
}

void Admission::released(int pidfd) {
  if (pidfd >= 0) released_.push_back(pidfd);
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
