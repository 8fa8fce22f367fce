#include "perf_event.hpp"

#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

namespace cosched::sensors {

namespace {

int perf_open(const PerfEventSpec& spec, pid_t tid) {
  perf_event_attr a{};
  a.size = sizeof a;
  a.type = spec.type;
  a.config = spec.config;
  a.exclude_kernel = 1;
  a.exclude_hv = 1;
  a.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
  return static_cast<int>(::syscall(SYS_perf_event_open, &a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC));
}

std::string paranoid() {
  std::ifstream in("/proc/sys/kernel/perf_event_paranoid");
  std::string v;
  in >> v;
  return v.empty() ? "?" : v;
}

}  // namespace

PerfEventSpec PerfEvent::llc_misses() {
  PerfEventSpec s;
  s.type = PERF_TYPE_HARDWARE;
  s.config = PERF_COUNT_HW_CACHE_MISSES;
  const long line = ::sysconf(_SC_LEVEL3_CACHE_LINESIZE);
  s.bytes_per_count = line > 0 ? static_cast<double>(line) : 64.0;
  s.label = "PERF_COUNT_HW_CACHE_MISSES";
  return s;
}

Result<std::unique_ptr<PerfEvent>> PerfEvent::probe(const PerfEventSpec& spec) {
  const int fd = perf_open(spec, 0);
  if (fd < 0) {
    const int e = errno;
    std::string why;
    if (e == ENOENT || e == EOPNOTSUPP || e == ENODEV) {
      why = "no hardware PMU: perf_event_open(" + spec.label + ") failed with " + std::strerror(e) +
            " (a VM without a virtual PMU, or a CPU the kernel has no events for)";
    } else if (e == EACCES || e == EPERM) {
      why = "not permitted: perf_event_open(" + spec.label + ") failed with " + std::strerror(e) +
            " (kernel.perf_event_paranoid=" + paranoid() + "; run the RM as root or lower it to 1 or less)";
    } else {
      why = "perf_event_open(" + spec.label + ") failed with " + std::strerror(e);
    }
    return make_error(Errc::unsupported, why);
  }
  ::close(fd);
  return std::unique_ptr<PerfEvent>(new PerfEvent(spec));
}

Result<long> PerfEvent::start_thread(pid_t tid) {
  const int fd = perf_open(spec_, tid);
  if (fd < 0) {
    return make_error(Errc::io_error, "perf_event_open(" + spec_.label + ", tid " + std::to_string(tid) +
                                          "): " + std::strerror(errno));
  }
  return static_cast<long>(fd);
}

std::optional<std::uint64_t> PerfEvent::read_thread(long handle) {
  std::uint64_t v[3] = {0, 0, 0};  // value, time enabled, time running
  if (::read(static_cast<int>(handle), v, sizeof v) != static_cast<ssize_t>(sizeof v)) return std::nullopt;
  // Multiplexed with other events: scale by the share of time it was counting.
  if (v[2] > 0 && v[2] < v[1]) return static_cast<std::uint64_t>(static_cast<double>(v[0]) * v[1] / v[2]);
  return v[0];
}

void PerfEvent::stop_thread(long handle) { ::close(static_cast<int>(handle)); }

}  // namespace cosched::sensors
