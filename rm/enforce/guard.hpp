// The guard: a small process forked by cosched-rm at start-up that outlives it. It learns, over a pipe,
// which jobs the RM confines or stops; when the pipe closes without a goodbye (the RM was killed, even with
// SIGKILL), it puts every job back to native: original cgroup, SIGCONT, thawed, and removes the RM's
// cgroups, and resumes a Slurm node the RM drained. This is what makes DESIGN rule 3 hold when the RM cannot clean up after itself.
#pragma once

#include <sys/types.h>

#include <string>

#include "cosched/error.hpp"

namespace cosched::rm {

class Guard {
 public:
  Guard() = default;
  ~Guard();
  Guard(const Guard&) = delete;
  Guard& operator=(const Guard&) = delete;

  // Forks the guard process. Call before the RM starts any thread.
  Status start();
  [[nodiscard]] bool running() const { return fd_ >= 0; }
  [[nodiscard]] pid_t pid() const { return pid_; }

  // The job `pid` is confined in `job_dir`; on RM death write its pid to `restore_procs` (a cgroup.procs
  // file) and remove `job_dir`. Either may be empty. Once per hierarchy the job is moved in (cpuset, freezer).
  void job_confined(pid_t pid, const std::string& restore_procs, const std::string& job_dir);
  void job_stopped(pid_t pid, const std::string& freezer_dir);  // stopped by signal (dir empty) or freezer
  void job_resumed(pid_t pid);
  void job_released(pid_t pid);
  // The RM is about to drain Slurm node `node` (slurm_gate.hpp); on RM death the guard resumes it if it is
  // still drained with cosched's reason, with `scontrol`. node_resumed: nothing of ours to undo any more.
  void node_drained(const std::string& node, const std::string& scontrol);
  void node_resumed(const std::string& node);
  // A directory the RM created (removed by the guard after the jobs, in reverse order of announcement).
  void owns_dir(const std::string& dir);
  // Clean shutdown: everything was already released by the RM; the guard exits.
  void goodbye();

  // The guard's own loop, public for tests: reads announcements from `fd` until EOF, then restores.
  static void run(int fd);

 private:
  void send(const std::string& line);
  int fd_ = -1;
  pid_t pid_ = -1;
};

}  // namespace cosched::rm
