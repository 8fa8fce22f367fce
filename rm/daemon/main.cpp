// cosched-rm: the resource-manager daemon. One options table (CLI11) generates --help.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "cosched/cli.hpp"
#include "cosched/log.hpp"
#include "cosched/wire.hpp"
#include "daemon.hpp"
#include "policies/registry.hpp"
#include "sensors/detect.hpp"

namespace {

void report_ready(int fd, const std::string& error);

// Forks into the background; the parent returns only when the child reports that it serves (or failed),
// so `cosched-rm && cosched-run ...` is race-free. Returns the write end of the readiness pipe in the child.
// The child's stdout and stderr go to `messages` from here on; a messages file that cannot be opened is a
// start-up error (reported by the parent), never a daemon writing into the shell that launched it.
int daemonize(const std::string& messages) {
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0) return -1;
  pid_t pid = ::fork();
  if (pid < 0) return -1;
  if (pid > 0) {
    // The child writes "" when it serves, or its error sentence; EOF without a byte means it died.
    ::close(p[1]);
    std::string msg;
    char buf[512];
    ssize_t n;
    bool any = false;
    while ((n = ::read(p[0], buf, sizeof buf)) > 0) {
      msg.append(buf, static_cast<std::size_t>(n));
      any = true;
    }
    if (any && msg == "ok") ::_exit(0);
    std::fprintf(stderr, "cosched-rm: %s\n", any ? msg.c_str() : ("failed to start; see " + messages).c_str());
    ::_exit(1);
  }
  ::close(p[0]);
  ::setsid();
  int in = ::open("/dev/null", O_RDONLY);
  int out = ::open(messages.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
  if (out < 0) {
    report_ready(p[1], "cannot open the messages file " + messages + ": " + std::strerror(errno));
    ::_exit(1);
  }
  if (in >= 0) ::dup2(in, STDIN_FILENO);
  ::dup2(out, STDOUT_FILENO);
  ::dup2(out, STDERR_FILENO);
  return p[1];
}

void report_ready(int fd, const std::string& error) {
  if (fd < 0) return;
  std::string msg = error.empty() ? "ok" : error;
  ssize_t ignored = ::write(fd, msg.data(), msg.size());
  (void)ignored;
  ::close(fd);
}

// The policies whose bus capacity defaults to --mem-bandwidth: those with a bus_bandwidth parameter.
bool uses_machine_bus(const cosched::policy::PolicyInfo& p) {
  for (const auto& q : p.params) {
    if (q.name == "bus_bandwidth") return true;
  }
  return false;
}

// Every option, and where its value lands; what the options table leaves to finish_config.
struct RmOptions {
  cosched::rm::Config cfg;
  std::string cpus;
  std::vector<std::string> params;
  bool no_slurm_comment = false;
  CLI::Option* cpus_opt = nullptr;
  CLI::Option* mem_opt = nullptr;
  CLI::Option* thread_opt = nullptr;
  CLI::Option* contention_opt = nullptr;
};

// The options table.
void add_options(CLI::App& app, RmOptions& o) {
  app.set_version_flag("--version", std::string("cosched-rm ") + COSCHED_VERSION);
  app.footer("Policies, and their parameters as NAME=DEFAULT (accepted values): meaning (set with --param, or at run "
             "time with cosched-ctl set):\n" + cosched::policy::describe_policies());
  app.add_option("--policy,-p", o.cfg.policy, "scheduling policy (below: each with its parameters)")->capture_default_str();
  app.add_option("--param", o.params, "policy parameter NAME=VALUE (repeatable), e.g. --param target_eff=0.7");
  o.cpus_opt =
      app.add_option("--cpus", o.cpus, "CPUs to manage, e.g. 0-3,8 (default: every CPU this process may use)");
  app.add_option("--socket,-s", o.cfg.socket, "UNIX socket to serve (env COSCHED_SOCKET)")->capture_default_str();
  auto* group_opt = app.add_option("--socket-group", o.cfg.socket_group,
                                   "also let members of this group register jobs and read status (socket mode 0660)");
  app.add_flag("--all-users", o.cfg.all_users,
               "let every local user register their own jobs and read status (socket mode 0666): a node's RM")
      ->excludes(group_opt);
  app.add_option("--admin-group", o.cfg.admin_group,
                 "members of this group may also change the policy or parameters and shut the RM down "
                 "(besides root and the RM's own user)");
  app.add_option("--quantum-ms", o.cfg.quantum_ms, "policy quantum in milliseconds")
      ->check(CLI::Range(1, 60000))
      ->capture_default_str();
  app.add_option("--nice", o.cfg.nice,
                 "the RM's niceness (applied when permitted): jobs wait on the RM to register, and it uses little CPU")
      ->check(CLI::Range(-20, 19))
      ->capture_default_str();
  app.add_option("--rt-priority", o.cfg.rt_priority,
                 "run the RM at this SCHED_FIFO priority (1-99; needs root or CAP_SYS_NICE), so that jobs and clients "
                 "are answered at once on a busy node; back to normal scheduling if it ever runs 200 ms without "
                 "blocking. 0: normal scheduling")
      ->check(CLI::Range(0, 99))
      ->capture_default_str();
  app.add_option("--client-timeout-ms", o.cfg.client_timeout_ms,
                 "drop a connection that leaves a frame half-sent, or sends nothing, for this long (a registered "
                 "job's idle connection is never dropped)")
      ->check(CLI::Range(10, 3600000))
      ->capture_default_str();
  app.add_option("--log", o.cfg.decision_log, "write one JSON line per decision to this file");
  app.add_option("--core-trace", o.cfg.core_trace,
                 "write the decision core's inputs to this file, one JSON line per decision (`cosched-sim "
                 "replay-core FILE` replays them: the daemon and the simulator decide alike)");
  app.add_option("--accounting", o.cfg.accounting,
                 "append one JSON line per finished job to this file, read by `cosched-ctl history` (default: the "
                 "socket's path with .accounting.jsonl for .sock; 'none': no records)");
  app.add_option("--enforce", o.cfg.enforce, "CPU enforcement: auto, cgroup, cgroup-v1, cgroup-v2, affinity, none")
      ->check(CLI::IsMember({"auto", "cgroup", "cgroup-v1", "cgroup-v2", "affinity", "none"}))
      ->capture_default_str();
  app.add_option("--cpu-share", o.cfg.cpu_share,
                 "how jobs that share a CPU divide it: job (each confined job in a cgroup of its own in the cpu "
                 "controller's v1 hierarchy, one share whatever its thread count; per thread where there is none), "
                 "thread (the kernel's default); status names it")
      ->check(CLI::IsMember({"job", "thread"}))
      ->capture_default_str();
  app.add_option("--stop-with", o.cfg.stop_with,
                 "how time-sharing policies stop and resume jobs: auto (the first that works of cgroup-v2 freezer, "
                 "cgroup-v1 freezer, signal), cgroup-v2, cgroup-v1, signal (SIGSTOP/SIGCONT); status names it")
      ->check(CLI::IsMember({"auto", "cgroup-v2", "cgroup-v1", "signal"}))
      ->capture_default_str();
  app.add_option("--baseline-cpus", o.cfg.baseline_cpus,
                 "SelfAnalyzer baseline allocation published to jobs: N CPUs, or auto (a quarter of each job's "
                 "request, at least 1)")
      ->transform(CLI::Transformer(std::map<std::string, std::string>{{"auto", "0"}}))
      ->check(CLI::Range(0, 1024))
      ->default_str("auto");
  app.add_option("--baseline", o.cfg.baseline,
                 "when jobs measure a SelfAnalyzer baseline (a few iterations at --baseline-cpus): auto (when the "
                 "policy uses speedups: " + cosched::policy::policy_names([](const auto& p) { return p.uses_speedup; }) +
                 "; a job alone waits until another runs or waits), always "
                 "(every job from its start, under any policy: speedups in status), never")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->capture_default_str();
  app.add_option("--topology", o.cfg.synthetic_topology,
                 "model this machine instead of the real one (hwloc synthetic, e.g. 'package:2 core:8 pu:2'); "
                 "implies --enforce none");
  app.add_option("--sensor", o.cfg.sensor,
                 std::string("memory-bandwidth sensors: ") + cosched::sensors::kSensorSpecs +
                     ". auto tries perf_event, papi, app-reported (programs calling cosched_report_bytes), "
                     "counter-free (SelfAnalyzer slowdowns), per job in that order; status names the one in use")
      ->capture_default_str();
  app.add_option("--rate-sensor", o.cfg.rate_sensor,
                 "progress rates for the co-scheduling policies (" +
                     cosched::policy::policy_names([](const auto& p) { return p.learns_pairs; }) + "): auto "
                 "(app-reported work, else the SelfAnalyzer's iterations, else parallel regions per second), "
                 "app-work, iterations, regions, or replay:FILE (rates as a function of the group partners)")
      ->capture_default_str();
  app.add_option("--also-sensor", o.cfg.also_sensor,
                 "also run this backend (app, counter-free, perf_event, papi, replay:FILE) on every job and show its "
                 "rate in status (bandwidth.estimates) next to the one in use, for comparison; policies never read "
                 "it (repeatable)");
  app.add_option("--papi-event", o.cfg.papi_event,
                 "the papi sensor counts this PAPI event (a preset such as PAPI_L3_TCM, or a native event such as "
                 "perf::LLC-LOAD-MISSES; papi_native_avail lists them), one cache line per count, instead of its "
                 "presets PAPI_L3_TCM, PAPI_L2_TCM");
  o.mem_opt = cosched::cli::add_rate(app, "--mem-bandwidth", o.cfg.mem_bandwidth,
              "bytes/s the memory sustains with every managed CPU streaming (e.g. 29G; scripts/calibrate-bandwidth): "
              "the bus capacity of " + cosched::policy::policy_names(uses_machine_bus) + ", and the counter-free sensor's B");
  o.thread_opt = cosched::cli::add_rate(app, "--thread-bandwidth", o.cfg.thread_bandwidth,
              "bytes/s one streaming thread (BBMA) moves alone: the counter-free sensor's b");
  o.contention_opt = app.add_option("--contention", o.cfg.contention,
                 "the counter-free sensor's k: slowdown per unit of excess demand of a purely memory-bound job "
                 "(scripts/calibrate-bandwidth)")
      ->check(CLI::Range(0.01, 100.0))
      ->capture_default_str();
  app.add_option(
      "--slurm-node", o.cfg.slurm_node,
      "Slurm node whose admission the policy gates: drained (reason 'cosched: multiprogramming level reached') "
      "while the policy admits no more jobs, resumed when it does and when the RM exits or dies (docs/slurm.md)")
      ->check([](const std::string& v) {
        for (unsigned char ch : v) {
          if (!std::isalnum(ch) && ch != '-' && ch != '_' && ch != '.') {
            return std::string("a Slurm node name: letters, digits, '-', '_' and '.'");
          }
        }
        return v.empty() ? std::string("must not be empty") : std::string();
      });
  app.add_option("--scontrol", o.cfg.scontrol,
                 "the scontrol that drains and resumes --slurm-node and writes Slurm jobs' AdminComment (uses "
                 "SLURM_CONF)")
      ->capture_default_str();
  app.add_flag("--no-slurm-comment", o.no_slurm_comment,
               "do not put the CPU report of a --cosched Slurm job's program in the job's AdminComment when it ends "
               "(docs/slurm.md)");
  app.add_flag("--calibrate", o.cfg.calibrate,
               "measure --thread-bandwidth, --mem-bandwidth and --contention at start, on the managed CPUs, with the "
               "runs of scripts/calibrate-bandwidth (bbma, stream-copy; a few seconds); with --calibration FILE the "
               "result is saved there. Options given explicitly win");
  app.add_option("--calibration", o.cfg.calibration_file,
                 "read those three from FILE (written by scripts/calibrate-bandwidth --output FILE, or by --calibrate); "
                 "options given explicitly win");
  app.add_option("--calibrate-seconds", o.cfg.calibrate_seconds, "length of each --calibrate run (three of each kind)")
      ->check(CLI::Range(0.1, 60.0))
      ->capture_default_str();
  app.add_flag("--foreground,-f", o.cfg.foreground, "stay in the foreground, log to stderr");
  app.add_option("--messages", o.cfg.messages,
                 "log file when running in the background (default: the socket's path with .log for .sock, "
                 "e.g. /run/cosched/rm.log)");
  app.add_option("--log-level", o.cfg.log_level, "error|warn|info|debug|trace, or per subsystem: rm=debug,policy=trace")
      ->capture_default_str();
}

// What parsing alone cannot check: the log spec, the CPU list, each --param. False after one error line.
bool finish_config(RmOptions& o) {
  o.cfg.slurm_comment = !o.no_slurm_comment;
  o.cfg.mem_bandwidth_given = o.mem_opt->count() > 0;
  o.cfg.thread_bandwidth_given = o.thread_opt->count() > 0;
  o.cfg.contention_given = o.contention_opt->count() > 0;
  if (auto st = cosched::log::configure(o.cfg.log_level); !st) {
    std::fprintf(stderr, "cosched-rm: --log-level: %s\n", st.error().message.c_str());
    return false;
  }
  if (o.cpus_opt->count() > 0) {
    // Given but empty (`--cpus ''`, an unset shell variable) is a mistake, not "every CPU".
    auto set = cosched::CpuSet::parse(o.cpus);
    if (set && set->empty()) set = cosched::make_error(cosched::Errc::invalid_argument, "empty CPU list");
    if (!set) {
      std::fprintf(stderr, "cosched-rm: --cpus '%s': %s\n", o.cpus.c_str(), set.error().message.c_str());
      return false;
    }
    o.cfg.cpus = *set;
  }
  for (const auto& kv : o.params) {
    auto p = cosched::policy::parse_param(kv);
    if (!p) {
      std::fprintf(stderr, "cosched-rm: --param: %s\n", p.error().message.c_str());
      return false;
    }
    o.cfg.params.push_back(*p);
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  RmOptions o;
  o.cfg.socket = cosched::wire::default_socket_path();
  CLI::App app{"cosched-rm: the cosched resource manager. Divides the CPUs among malleable OpenMP jobs\n"
               "started with cosched-run, following the chosen policy; cosched-ctl inspects and steers it."};
  add_options(app, o);
  COSCHED_CLI_PARSE(app, argc, argv);
  cosched::log::set_program("cosched-rm");
  if (!finish_config(o)) return 2;
  cosched::rm::Config& cfg = o.cfg;

  int ready_fd = -1;
  cosched::rm::Daemon d(cfg);
  if (!cfg.foreground) {
    // The messages file sits next to the socket (rm.sock → rm.log), in a directory that may not exist yet
    // on a fresh /run: create it (with the socket's rules) before opening the file in it.
    if (cfg.messages.empty()) cfg.messages = std::filesystem::path(cfg.socket).replace_extension(".log").string();
    if (auto st = d.prepare_socket_dir(); !st) {
      std::fprintf(stderr, "cosched-rm: %s\n", st.error().message.c_str());
      return 1;
    }
    ready_fd = daemonize(cfg.messages);
  }
  if (auto st = d.start(); !st) {
    // In the background the error goes once to the messages file (stderr) and once to the launching
    // terminal, through the parent.
    std::fprintf(stderr, "cosched-rm: %s\n", st.error().message.c_str());
    report_ready(ready_fd, st.error().message);
    return 1;
  }
  report_ready(ready_fd, "");
  return d.run();
}
