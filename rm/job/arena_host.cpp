#include "arena_host.hpp"

#include "report_check.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cerrno>
#include <cstring>
#include <new>

namespace cosched::rm {


Result<std::unique_ptr<ArenaHost>> ArenaHost::create(std::uint32_t job_id) {
  std::string name = "cosched-arena-" + std::to_string(job_id);
  int fd = ::memfd_create(name.c_str(), MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return make_error(Errc::io_error, std::string("memfd_create: ") + std::strerror(errno));
  // Seal the size: a job that could shrink the file would make the RM's next read a SIGBUS.
  if (::ftruncate(fd, proto::kArenaSize) != 0 ||
      ::fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
    int e = errno;
    ::close(fd);
    return make_error(Errc::io_error, std::string("sizing/sealing the arena: ") + std::strerror(e));
  }
  void* p = ::mmap(nullptr, proto::kArenaSize, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    int e = errno;
    ::close(fd);
    return make_error(Errc::io_error, std::string("mmap arena: ") + std::strerror(e));
  }
  auto* a = new (p) proto::Arena{};
  a->header.magic = proto::kMagic;
  a->header.version = proto::kVersion;
  a->header.arena_size = proto::kArenaSize;
  a->header.job_id = job_id;
  a->rm.allocation.store(1, std::memory_order_relaxed);
  a->rm.runnable.store(1, std::memory_order_relaxed);
  return std::unique_ptr<ArenaHost>(new ArenaHost(fd, a));
}

ArenaHost::~ArenaHost() {
  if (a_ != nullptr) ::munmap(a_, proto::kArenaSize);
  if (fd_ >= 0) ::close(fd_);
}

void ArenaHost::publish(int allocation, const CpuSet& cpus, bool apply_mask) {
  auto& rm = a_->rm;
  std::uint32_t s = rm.seq.load(std::memory_order_relaxed);
  rm.seq.store(s + 1, std::memory_order_relaxed);  // odd: writing
  std::atomic_thread_fence(std::memory_order_release);
  const auto& words = cpus.words();
  for (int w = 0; w < proto::kMaskWords; ++w) {
    auto i = static_cast<std::size_t>(w);
    rm.cpu_mask[w].store(i < words.size() ? words[i] : 0, std::memory_order_relaxed);
  }
  flags_ = with_flag(flags_, proto::rm_apply_mask, apply_mask);
  rm.flags.store(flags_, std::memory_order_relaxed);
  rm.generation.store(++generation_, std::memory_order_relaxed);
  rm.allocation.store(allocation, std::memory_order_relaxed);
  rm.seq.store(s + 2, std::memory_order_release);  // even: stable
}

void ArenaHost::set_runnable(bool runnable) {
  a_->rm.runnable.store(runnable ? 1 : 0, std::memory_order_release);
}

void ArenaHost::count_stop() { a_->rm.stops.fetch_add(1, std::memory_order_release); }

bool ArenaHost::job_writing() const { return (a_->job.seq.load(std::memory_order_acquire) & 1U) != 0; }

void ArenaHost::set_flag(std::uint32_t flag, bool on) {
  flags_ = with_flag(flags_, flag, on);
  a_->rm.flags.store(flags_, std::memory_order_release);
}

void ArenaHost::set_baseline_wanted(bool wanted) { set_flag(proto::rm_no_baseline, !wanted); }

void ArenaHost::set_baseline_waits(bool waits) { set_flag(proto::rm_baseline_waits, waits); }

void ArenaHost::set_cpus_shared(bool shared) {
  if (shared != cpus_shared()) set_flag(proto::rm_cpus_shared, shared);
}

void ArenaHost::set_baseline(int cpus) {
  a_->rm.baseline_cpus.store(static_cast<std::uint32_t>(cpus), std::memory_order_release);
}

ArenaReport ArenaHost::read_report() const {
  ArenaReport r;
  const auto& j = a_->job;
  for (int attempt = 0; attempt < 8; ++attempt) {
    std::uint32_t s0 = j.seq.load(std::memory_order_acquire);
    if ((s0 & 1U) != 0) continue;
    r.seq = j.reports.load(std::memory_order_relaxed);
    r.perf.speedup = j.speedup.load(std::memory_order_relaxed);
    r.perf.efficiency = j.efficiency.load(std::memory_order_relaxed);
    r.perf.iteration_s = j.iteration_s.load(std::memory_order_relaxed);
    r.perf.baseline_s = j.baseline_s.load(std::memory_order_relaxed);
    r.perf.spread = j.spread.load(std::memory_order_relaxed);
    r.perf.cpus = j.cpus.load(std::memory_order_relaxed);
    r.perf.samples = j.samples.load(std::memory_order_relaxed);
    r.perf.amdahl_f = j.amdahl_f.load(std::memory_order_relaxed);
    r.perf.baseline_cpus = std::clamp(j.baseline_team.load(std::memory_order_relaxed), 0, proto::kMaxCpus);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (j.seq.load(std::memory_order_relaxed) != s0) continue;
    r.present = r.seq > 0;
    r.perf.seq = r.seq;
    if (!r.present) return r;
    r.invalid_field = check_report(r.perf);
    if (!r.invalid_field.empty()) return r;
    r.valid = true;
    r.perf.valid = true;
    return r;
  }
  r.invalid_field = "seq (held odd)";
  return r;
}

ArenaProgress ArenaHost::read_progress() const {
  const auto& j = a_->job;
  ArenaProgress p;
  p.regions = j.regions.load(std::memory_order_relaxed);
  p.iterations = j.iterations.load(std::memory_order_relaxed);
  p.net_bytes_out = j.net_bytes_out.load(std::memory_order_relaxed);
  p.net_bytes_in = j.net_bytes_in.load(std::memory_order_relaxed);
  p.net_messages = j.net_messages.load(std::memory_order_relaxed);
  p.last_team = std::clamp(j.last_team.load(std::memory_order_relaxed), 0, proto::kMaxCpus);
  const auto mode = static_cast<std::uint32_t>(j.team_mode.load(std::memory_order_relaxed));
  p.team_mode = mode <= proto::kTeamModeMax ? static_cast<proto::TeamMode>(mode) : proto::TeamMode::unknown;
  p.team_mismatches = j.team_mismatches.load(std::memory_order_relaxed);
  p.restarts = j.restarts.load(std::memory_order_relaxed);
  const double wait = j.cpu_wait.load(std::memory_order_relaxed);
  p.cpu_wait = std::isfinite(wait) && wait >= 0 && wait <= 64 ? wait : -1;  // a job may write anything
  p.contaminated = j.contaminated.load(std::memory_order_relaxed);
  const int narrow = j.narrow_cpus.load(std::memory_order_relaxed);
  p.narrow_cpus = narrow >= 1 && narrow <= proto::kMaxCpus ? narrow : 0;  // a job may write anything
  const auto why = j.restart_reason.load(std::memory_order_relaxed);
  p.restart_reason = why <= proto::kMeasureRestartMax ? static_cast<proto::MeasureRestart>(why) : proto::MeasureRestart::none;
  const auto no = j.no_speedup.load(std::memory_order_relaxed);
  p.no_speedup = no <= proto::kNoSpeedupMax ? static_cast<proto::NoSpeedup>(no) : proto::NoSpeedup::none;
  // A job may write anything: shown only as a finite, positive time at a team the machine can hold.
  const double unreported = j.unreported_s.load(std::memory_order_relaxed);
  const int unreported_cpus = j.unreported_cpus.load(std::memory_order_relaxed);
  if (p.no_speedup != proto::NoSpeedup::none && std::isfinite(unreported) && unreported > 0 &&
      unreported < 1e9 && unreported_cpus >= 1 && unreported_cpus <= proto::kMaxCpus) {
    p.unreported_s = unreported;
    p.unreported_cpus = unreported_cpus;
  }
  p.period = std::clamp(j.period.load(std::memory_order_relaxed), 0, 1 << 20);
  auto ph = j.phase.load(std::memory_order_relaxed);
  p.phase = ph <= static_cast<std::uint32_t>(proto::Phase::measuring) ? static_cast<proto::Phase>(ph) : proto::Phase::none;
  return p;
}

ArenaSensors ArenaHost::read_sensors() const {
  const auto& s = a_->sensors;
  ArenaSensors out;
  // Iterations first (the job stores them last, with release): the time read next is at least as recent.
  out.clean_iterations = s.clean_iterations.load(std::memory_order_acquire);
  out.clean_ns = s.clean_ns.load(std::memory_order_relaxed);
  out.clean_wait_ns = s.clean_wait_ns.load(std::memory_order_relaxed);
  out.clean_team = std::clamp(s.clean_team.load(std::memory_order_relaxed), 0, proto::kMaxCpus);
  out.reports_bytes = s.reports_bytes.load(std::memory_order_relaxed) != 0;
  out.bytes = s.bytes.load(std::memory_order_relaxed);
  out.reports_work = s.reports_work.load(std::memory_order_relaxed) != 0;
  out.work = s.work.load(std::memory_order_relaxed);
  out.regions = a_->job.regions.load(std::memory_order_relaxed);
  return out;
}

ArenaEfficiency ArenaHost::read_efficiency() const {
  const auto& b = a_->efficiency;
  ArenaEfficiency out;
  out.ticks = b.ticks.load(std::memory_order_relaxed);
  out.construct_iterations = b.construct_iterations.load(std::memory_order_relaxed);
  for (int attempt = 0; attempt < 8; ++attempt) {
    const std::uint32_t s0 = b.seq.load(std::memory_order_acquire);
    if ((s0 & 1U) != 0) continue;
    WaitingEstimate w;
    w.seq = b.reports.load(std::memory_order_relaxed);
    w.efficiency = b.efficiency.load(std::memory_order_relaxed);
    w.std_error = b.std_error.load(std::memory_order_relaxed);
    w.cpu_wait = b.cpu_wait.load(std::memory_order_relaxed);
    w.window_s = b.window_s.load(std::memory_order_relaxed);
    w.cpus = b.cpus.load(std::memory_order_relaxed);
    w.intervals = b.intervals.load(std::memory_order_relaxed);
    const auto structure = b.structure.load(std::memory_order_relaxed);
    const auto pending = b.pending.load(std::memory_order_relaxed);
    const int period = b.period.load(std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (b.seq.load(std::memory_order_relaxed) != s0) continue;
    // A job may write anything: each field in its range, or the estimate is not used.
    out.structure = structure <= proto::kStructureMax ? static_cast<proto::Structure>(structure) : proto::Structure::unknown;
    out.pending = pending <= proto::kEfficiencyPendingMax ? static_cast<proto::EfficiencyPending>(pending)
                                                          : proto::EfficiencyPending::no_team;
    out.period = std::clamp(period, 0, 1 << 20);
    if (w.seq == 0) return out;
    auto finite_in = [](double v, double lo, double hi) { return std::isfinite(v) && v >= lo && v <= hi; };
    if (!finite_in(w.efficiency, 0, 1)) {
      out.invalid_field = "efficiency=" + std::to_string(w.efficiency);
    } else if (!finite_in(w.std_error, 0, 1)) {
      out.invalid_field = "std_error=" + std::to_string(w.std_error);
    } else if (w.cpus < 1 || w.cpus > proto::kMaxCpus) {
      out.invalid_field = "cpus=" + std::to_string(w.cpus);
    } else if (w.intervals < 1 || w.intervals > 1 << 20) {
      out.invalid_field = "intervals=" + std::to_string(w.intervals);
    } else if (!finite_in(w.window_s, 0, 1e9)) {
      out.invalid_field = "window_s=" + std::to_string(w.window_s);
    } else {
      if (!finite_in(w.cpu_wait, 0, 64)) w.cpu_wait = -1;
      w.efficiency = std::max(w.efficiency, 1e-6);
      w.valid = true;
    }
    out.estimate = w;
    out.estimate.seq = w.seq;
    return out;
  }
  out.invalid_field = "seq (held odd)";
  return out;
}

}  // namespace cosched::rm
