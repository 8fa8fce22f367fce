// Process management for qsubmit: starting a program in its own process group with its output in files,
// noticing its end without blocking, and stopping it for good. Also the signal plumbing that turns SIGCHLD,
// SIGINT, SIGTERM and SIGHUP into a readable file descriptor, so the replay loop sleeps in poll() and wakes
// for a job's end or a Ctrl-C alike.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cosched/error.hpp"

namespace cosched::qsubmit {

struct SpawnSpec {
  std::vector<std::string> argv;                         // argv[0] is a path (no $PATH search)
  std::vector<std::pair<std::string, std::string>> env;  // set on top of our environment
  std::string stdout_path;                               // created/truncated; empty: inherit
  std::string stderr_path;
};

// Starts the program as the leader of a new process group (so Ctrl-C on the terminal reaches qsubmit only,
// and qsubmit stops each job as a whole). Returns its pid once exec succeeded; an exec failure is an error
// here, not an exit status later.
Result<pid_t> spawn(const SpawnSpec& spec);

// The exit status of `pid` if it has ended (reaping it), in the shell's convention: the exit code, or
// 128 + signal number when a signal killed it.
std::optional<int> try_reap(pid_t pid);
// Like try_reap, but waits up to `seconds`.
std::optional<int> reap_within(pid_t pid, double seconds);

// Ends a process group that may be stopped: SIGCONT (a stopped job must never stay stopped), then `sig`.
void signal_group(pid_t pgid, int sig);

// Signals as events. install() once; fd() becomes readable on SIGCHLD and on a stop request; drain() empties
// it. stop_signal() is the first of SIGINT/SIGTERM/SIGHUP received, 0 while none.
namespace signals {
void install();
int fd();
void drain();
int stop_signal();
// Back to the default dispositions (in a child before exec).
void reset_in_child();
}  // namespace signals

}  // namespace cosched::qsubmit
