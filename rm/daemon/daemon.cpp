#include "daemon.hpp"
#include "time_sharing.hpp"

#include "rm/decision/core_trace.hpp"

#include <signal.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>

#include "cosched/log.hpp"
#include "policies/registry.hpp"
#include "rm/slurm/slurm_aware.hpp"

namespace cosched::rm {

Daemon::Daemon(Config cfg)
    : cfg_(std::move(cfg)),
      server_(cfg_, {[this](Conn& c, const wire::Frame& f) { return on_frame(c, f); },
                     [this](policy::JobId job, const std::string& why) { depart(job, why); },
                     [this] { return now(); }}),
      baseline_(cfg_.baseline),
      t0_(std::chrono::steady_clock::now()) {}

Daemon::~Daemon() {
  for (int fd : {epfd_, signal_fd_, quantum_fd_, wake_fd_}) {
    if (fd >= 0) ::close(fd);
  }
}

double Daemon::now() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
}

Status Daemon::start() {
  raise_fd_limit();
  raise_priority(cfg_.nice);
  // Before anything else starts (guard, cgroups): a directory we must not serve in is one error line.
  if (auto st = prepare_socket_dir(); !st) return st;
  auto topo = Topology::load(cfg_.cpus, cfg_.synthetic_topology);
  if (!topo) return topo.error();
  topo_ = std::move(*topo);
  core_ = DecisionCore(CoreMachine{topo_.machine().cpus, topo_.order(), topo_.core_of(), true});
  if (!cfg_.synthetic_topology.empty() && cfg_.enforce == "auto") cfg_.enforce = "none";  // a modelled machine
  // One RM per CPU (cpu_locks.hpp), taken before anything acts on a CPU; an RM that confines nothing
  // (--enforce none, a modelled machine) leaves the CPUs to whichever RM does.
  if (cfg_.enforce != "none") {
    auto locks = CpuLocks::acquire(CpuLocks::default_dir(), topo_.cpus(),
                                   std::filesystem::absolute(cfg_.socket).lexically_normal().string());
    if (!locks) return locks.error();
    cpu_locks_ = std::move(*locks);
  }
  // The bandwidth constants: options, a saved calibration, or measured now, on the CPUs just locked.
  if (auto st = sensing_.resolve_calibration(cfg_, topo_.cpus()); !st) return st;
  topo_.set_mem_bandwidth(cfg_.mem_bandwidth);

  auto pol = policy::make_policy(cfg_.policy, topo_.machine(), cfg_.params);
  if (!pol) return pol.error();
  policy_ = std::move(*pol);
  if (auto st = sensing_.start(cfg_); !st) return st;

  if (auto st = records_.open(cfg_); !st) return st;
  if (records_.tracing()) records_.trace(trace_header(core_.machine(), topo_.machine(), cfg_.policy, cfg_.params));
  if (cfg_.accounting != "none") {
    const std::string path = cfg_.accounting.empty() ? AccountingLog::default_path(cfg_.socket) : cfg_.accounting;
    if (auto st = accounting_.open(path, cfg_.all_users); !st) return st;
    next_id_ = std::max<policy::JobId>(next_id_, accounting_.last_id() + 1);
  }

  // Signals arrive through a signalfd; block them before the guard is forked so it starts with a clean slate
  // of its own (it resets what it needs).
  sigset_t mask;
  sigemptyset(&mask);
  for (int s : {SIGTERM, SIGINT, SIGHUP, SIGCHLD}) sigaddset(&mask, s);
  ::signal(SIGPIPE, SIG_IGN);

  if (auto st = guard_.start(); !st) return st;
  ::sigprocmask(SIG_BLOCK, &mask, nullptr);
  gate_ = std::make_unique<SlurmGate>(cfg_.slurm_node, cfg_.scontrol, guard_);
  gate_->recover();

  auto enf = make_enforcer(cfg_.enforce, topo_.cpus(), guard_);
  if (!enf) return enf.error();
  auto shared = with_cpu_share(cfg_.cpu_share, make_slurm_aware_enforcer(std::move(*enf), topo_.cpus()), guard_);
  enforcer_ = std::move(shared.enforcer);
  cpu_share_ = std::move(shared.mode);
  auto stopper = make_stopper(cfg_.stop_with, enforcer_->name() == "cgroup-v2", guard_);
  if (!stopper) return stopper.error();
  stopper_ = make_slurm_aware_stopper(std::move(*stopper), guard_);

  epfd_ = ::epoll_create1(EPOLL_CLOEXEC);
  signal_fd_ = ::signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
  quantum_fd_ = ::timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
  wake_fd_ = ::timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
  if (epfd_ < 0 || signal_fd_ < 0 || quantum_fd_ < 0 || wake_fd_ < 0 || !narrow_poll_.open()) {
    return make_error(Errc::io_error, std::string("event loop setup: ") + std::strerror(errno));
  }
  itimerspec q{};
  q.it_interval.tv_sec = cfg_.quantum_ms / 1000;
  q.it_interval.tv_nsec = static_cast<long>(cfg_.quantum_ms % 1000) * 1000000L;
  q.it_value = q.it_interval;
  ::timerfd_settime(quantum_fd_, 0, &q, nullptr);
  watch_fd(epfd_, signal_fd_, EPOLLIN);
  watch_fd(epfd_, quantum_fd_, EPOLLIN);
  watch_fd(epfd_, wake_fd_, EPOLLIN);
  watch_fd(epfd_, narrow_poll_.fd(), EPOLLIN);

  if (auto st = server_.open(epfd_); !st) return st;
  COSCHED_INFO(rm, "serving {} | policy {} | {} | enforcement {} | CPU share per {} | stopping {} | sensor {} | "
                   "quantum {} ms",
               cfg_.socket, policy_->name(), topo_.description(), enforcer_->name(), cpu_share_, stopper_->name(),
               sensing_.sensors().backend(), cfg_.quantum_ms);
  decide(policy::Event::quantum, -1);  // an empty machine: answers may-start from the first query on
  realtime_.enter(cfg_.rt_priority);  // last: the guard and everything set up above start at normal priority
  return {};
}

int Daemon::run() {
  while (running_) loop_once(-1);
  stop_all();
  return 0;
}

void Daemon::loop_once(int timeout_ms) {
  epoll_event evs[64];
  int n = ::epoll_wait(epfd_, evs, 64, timeout_ms);
  realtime_.check();
  if (n < 0) {
    if (errno != EINTR) COSCHED_ERROR(rm, "epoll_wait: {}", std::strerror(errno));
    return;
  }
  // Peers first: a starting job waits for its registration reply (and gives up after its timeout), while
  // a quantum, a timer or a departure loses nothing by waiting for the rest of this batch.
  for (int i = 0; i < n; ++i) {
    server_.on_event(evs[i].data.fd, evs[i].events);
  }
  confine_admitted();
  for (int i = 0; i < n; ++i) {
    int fd = evs[i].data.fd;
    if (fd == signal_fd_) {
      on_signal();
    } else if (fd == quantum_fd_) {
      std::uint64_t ticks;
      while (::read(quantum_fd_, &ticks, sizeof ticks) > 0) {
      }
      on_quantum();
    } else if (fd == wake_fd_) {
      std::uint64_t ticks;
      while (::read(wake_fd_, &ticks, sizeof ticks) > 0) {
      }
      decide(policy::Event::timer, -1);
    } else if (fd == narrow_poll_.fd()) {
      narrow_poll_.drain();
      poll_narrowed();
    } else if (auto p = pidfds_.find(fd); p != pidfds_.end()) {
      depart(p->second, "process exited");
    }
  }
}

bool Daemon::on_frame(Conn& c, const wire::Frame& f) {
  switch (f.type) {
    case proto::MsgType::register_job: handle_register(c, f); return true;
    case proto::MsgType::register_rank: handle_register_rank(c, f); return true;
    case proto::MsgType::ctl_request: handle_ctl(c, f); return true;
    default: return false;
  }
}

void Daemon::on_signal() {
  signalfd_siginfo si;
  while (::read(signal_fd_, &si, sizeof si) == sizeof si) {
    if (si.ssi_signo == SIGCHLD) {
      int status = 0;
      while (pid_t p = ::waitpid(-1, &status, WNOHANG)) {
        if (p < 0) break;
        if (gate_ && gate_->on_child_exit(p, status, now())) continue;
        if (p == guard_.pid()) {
          COSCHED_ERROR(rm, "the guard process (pid {}) died: jobs are unprotected if the RM dies", p);
        }
      }
    } else if (si.ssi_signo == SIGHUP) {
      COSCHED_INFO(rm, "SIGHUP ignored (use cosched-ctl policy to change the policy)");
    } else {
      COSCHED_INFO(rm, "{} received: releasing {} job(s) and shutting down", strsignal(static_cast<int>(si.ssi_signo)),
                   jobs_.size());
      running_ = false;
    }
  }
}

void Daemon::on_quantum() {
  sensing_.sample(jobs_, now());  // first: the interval ends at the tick, before this quantum's decisions move anything
  // A job whose pid is gone (pidfd missed, or a reused socket) gives its CPUs back within one quantum.
  std::vector<policy::JobId> gone;
  for (auto& [id, j] : jobs_) {
    if (::kill(j.pid, 0) != 0 && errno == ESRCH) gone.push_back(id);
  }
  for (auto id : gone) depart(id, "process gone");
  server_.drop_stalled();
  server_.resume_accepting();  // after a pause for lack of fds: try again once per quantum
  poll_reports();
  track_suspended(jobs_, now());  // the quantum's decision below acts on it
  for (auto& [id, j] : jobs_) enforcer_->refresh(j);
  enforcer_->tidy();
  stopper_->tidy();
  decide(policy::Event::quantum, -1);
  sensing_.open(jobs_, now());
}

// The narrow timer: the requests of the jobs that run narrowed (narrowing.hpp).
void Daemon::poll_narrowed() {
  for (auto& [id, j] : jobs_) {
    if (j.narrow_request == 0) continue;
    note_team(j, j.arena->read_progress(), now());
    follow_narrowing(*enforcer_, j, now());
  }
  narrow_poll_.arm(jobs_);  // a job that left while narrowed stops the timer here
}

void Daemon::arm_wake(double at) {
  // `at` is rm::wake_time's, a little ahead of the decision's clock; the clock has moved on since. A zero
  // it_value would disarm the timer: the floor keeps it armed.
  double delay = std::max(at - now(), rm::kMinWakeAheadS);
  itimerspec t{};
  t.it_value.tv_sec = static_cast<time_t>(delay);
  t.it_value.tv_nsec = static_cast<long>((delay - std::floor(delay)) * 1e9);
  ::timerfd_settime(wake_fd_, 0, &t, nullptr);
}

void Daemon::stop_all() {
  std::vector<policy::JobId> ids;
  for (auto& [id, j] : jobs_) ids.push_back(id);
  for (auto id : ids) {
    auto& j = jobs_.at(id);
    release_stop(*stopper_, j);  // never leave a job stopped (time-sharing policies stop jobs)
    enforcer_->release(j);
    if (j.conn_fd >= 0) server_.close(j.conn_fd);  // the job's watcher sees EOF: native team size and mask
    if (j.pidfd >= 0) ::close(j.pidfd);
    COSCHED_INFO(rm, "job {} (pid {}) released to native behaviour", id, j.pid);
  }
  jobs_.clear();
  pidfds_.clear();
  stopper_->shutdown();
  enforcer_->shutdown();
  if (gate_) gate_->shutdown();  // after the jobs: they run again before slurmctld may start others
  guard_.goodbye();
  if (guard_.pid() > 0) {
    for (int i = 0; i < 50; ++i) {
      if (::waitpid(guard_.pid(), nullptr, WNOHANG) != 0) break;
      ::usleep(10 * 1000);
    }
  }
  server_.shut();  // the remaining connections (control clients), the socket and its file
  COSCHED_INFO(rm, "stopped after {} decisions", decisions_);
}

}  // namespace cosched::rm
