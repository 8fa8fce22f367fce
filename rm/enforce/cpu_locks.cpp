#include "cpu_locks.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>

namespace cosched::rm {

namespace {

// "<pid> <socket>" as the holder wrote it, or a placeholder when the file is empty or unreadable.
std::string holder_of(int fd) {
  char buf[512];
  ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  std::string text = n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  auto space = text.find(' ');
  if (text.empty() || space == std::string::npos) return "another cosched-rm (pid unknown)";
  return "another cosched-rm (pid " + text.substr(0, space) + ", socket " + text.substr(space + 1) + ")";
}

Status prepare_dir(const std::string& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) return make_error(Errc::invalid_argument, dir + " (the CPU lock directory) is not a directory");
    return {};
  }
  mode_t old = ::umask(0);
  int rc = ::mkdir(dir.c_str(), 01777);
  ::umask(old);
  if (rc != 0 && errno != EEXIST) {
    return make_error(Errc::io_error, "cannot create the CPU lock directory " + dir + ": " + std::strerror(errno));
  }
  return {};
}

}  // namespace

CpuLocks& CpuLocks::operator=(CpuLocks&& o) noexcept {
  if (this != &o) {
    for (int fd : fds_) ::close(fd);
    fds_ = std::move(o.fds_);
    o.fds_.clear();
  }
  return *this;
}

CpuLocks::~CpuLocks() {
  for (int fd : fds_) ::close(fd);
}

std::string CpuLocks::default_dir() {
  if (const char* env = std::getenv("COSCHED_LOCK_DIR"); env != nullptr && *env != '\0') return env;
  struct stat st {};
  if (::stat("/run/lock", &st) == 0 && S_ISDIR(st.st_mode)) return "/run/lock/cosched";
  return "/tmp/cosched-locks";
}

Result<CpuLocks> CpuLocks::acquire(const std::string& dir, const CpuSet& cpus, const std::string& socket) {
  if (auto st = prepare_dir(dir); !st) return st.error();
  CpuLocks held;
  std::map<std::string, CpuSet> taken;  // holder → the CPUs of ours it holds
  const std::string owner = std::to_string(::getpid()) + " " + socket + "\n";
  for (int cpu : cpus.to_vector()) {
    std::string path = dir + "/cpu" + std::to_string(cpu);
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0 && errno == EACCES) fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);  // another user's
    if (fd < 0) return make_error(Errc::io_error, "cannot open the CPU lock " + path + ": " + std::strerror(errno));
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      taken[holder_of(fd)].set(cpu);
      ::close(fd);
      continue;
    }
    if (::ftruncate(fd, 0) == 0) {
      ssize_t ignored = ::pwrite(fd, owner.data(), owner.size(), 0);
      (void)ignored;  // best effort: the lock itself is what counts
    }
    held.fds_.push_back(fd);
  }
  if (taken.empty()) return held;
  std::string msg;
  for (const auto& [holder, set] : taken) {
    msg += (msg.empty() ? "" : "; ") + std::string("CPU") + (set.count() > 1 ? "s " : " ") + set.to_string() +
           (set.count() > 1 ? " are" : " is") + " managed by " + holder;
  }
  return make_error(Errc::invalid_argument,
                    msg + ": two RMs must not confine jobs to the same CPUs; give this one disjoint --cpus, or stop "
                          "the other (CPU locks in " + dir + ")");
}

}  // namespace cosched::rm
