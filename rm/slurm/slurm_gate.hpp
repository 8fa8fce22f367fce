// The Slurm node gate as the daemon runs it (cosched-rm --slurm-node NAME): after every decision it is
// told the policy's may_start answer and drains or resumes the node to match (rm/enforce/slurm_node.hpp), one
// scontrol child at a time, never waiting for it in the event loop. The guard learns of each drain before it
// is issued, so a node drained by an RM that dies is resumed by the guard; the RM resumes it on a clean exit,
// and at start resumes a node a dead RM and its guard both left drained with our reason.
#pragma once

#include <sys/types.h>

#include <nlohmann/json.hpp>
#include <string>

#include "rm/enforce/guard.hpp"
#include "rm/enforce/slurm_node.hpp"

namespace cosched::rm {

class SlurmGate {
 public:
  SlurmGate(std::string node, std::string scontrol, Guard& guard)
      : node_(std::move(node)), scontrol_(std::move(scontrol)), guard_(guard) {}

  [[nodiscard]] bool enabled() const { return !node_.empty(); }

  // At start: a node left drained with our reason is resumed (synchronously). Logs what it found.
  void recover();
  // The policy's latest answer, at RM time `now`: starts a drain or a resume when the node does not match.
  void apply(bool may_start, double now);
  // A child exited (the daemon reaps every child): true when it was ours, and the gate took its result.
  bool on_child_exit(pid_t pid, int status, double now);
  // Clean exit: waits for a child in flight, then resumes the node if we drained it.
  void shutdown();

  [[nodiscard]] nlohmann::json status_json() const;

 private:
  void start(slurm::NodeOp op, double now);

  std::string node_;
  std::string scontrol_;
  Guard& guard_;
  bool drained_ = false;        // we drained the node (and nobody else's reason replaced ours since)
  bool want_drained_ = false;
  pid_t child_ = -1;            // the scontrol operation in flight
  slurm::NodeOp child_op_ = slurm::NodeOp::drain;
  double retry_at_ = 0;         // after a failure, no new attempt before this RM time
  std::string last_result_;     // the latest operation's outcome, for status
  int changes_ = 0;             // drains and resumes applied
};

}  // namespace cosched::rm
