// The Slurm node gate: how a node's RM tells slurmctld whether the node admits another job (docs/slurm.md,
// "The multiprogramming level under Slurm"). The policy's may_start answer is the decision; this is the
// mechanism that applies it, by draining the node (slurmctld then starts nothing more on it, and pending jobs
// show "ReqNodeNotAvail") and resuming it, through `scontrol update`.
//
// Why scontrol rather than libslurm's slurm_update_node(): libslurm's soname changes with every Slurm
// release (libslurm.so.38 is 22.05), so an RM linked to it would break at each upgrade of the site's Slurm,
// while scontrol's command line has been stable for a decade and reads the same SLURM_CONF; a drain or a
// resume happens when the multiprogramming level changes, a few times a minute at most, so a process per
// change costs nothing that matters; and the guard, which must resume the node after the RM dies, stays a
// small process that only needs to run a program.
//
// Whose drain is it: the node is drained only when nobody else drained it (or took it down), with the reason
// kDrainReason, and resumed only while that reason is still ours. An administrator's drain is never undone.
//
// In rm/enforce/ rather than rm/slurm/: it is a mechanism, and the guard (guard.cpp), which resumes a node a
// dead RM left drained, runs it; rm/slurm/'s gate, which drives it by the policy's answers, sits above enforce/.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

namespace cosched::rm::slurm {

inline constexpr const char* kDrainReason = "cosched: multiprogramming level reached";
inline constexpr const char* kReasonPrefix = "cosched:";

enum class NodeOp { drain, resume };

// The outcome of a node operation; also the exit status of a spawned one.
enum NodeOpResult : int {
  op_done = 0,          // the node is as asked (drained with our reason, or not drained by us)
  op_failed = 1,        // scontrol failed (message on stderr, or in `why`)
  op_not_ours = 3,      // drain: drained or down for another reason; resume: drained for another reason
  op_cannot_read = 4,   // `scontrol show node` did not answer or did not name the node
};

const char* to_string(NodeOpResult r);

// What `scontrol -o show node` says: State= (e.g. "MIXED+DRAIN") and Reason= (without the "[user@time]").
struct NodeView {
  std::string state;
  std::string reason;
  [[nodiscard]] bool drained() const;   // DRAIN, DRAINED, DRAINING, or DOWN/FAIL (no job starts)
  [[nodiscard]] bool ours() const;      // the reason is ours
};
// Parses one line of `scontrol -o show node NAME`; false when it names no State.
bool parse_node_line(const std::string& line, NodeView& out);

// Reads the node and changes it if it is ours to change; synchronous (two scontrol runs). `why` gets
// scontrol's message on failure.
NodeOpResult run_node_op(NodeOp op, const std::string& node, const std::string& scontrol, std::string& why);

// The same in a child process (the RM's event loop never waits for slurmctld): returns its pid, -1 when fork
// failed. Its exit status is the NodeOpResult.
pid_t spawn_node_op(NodeOp op, const std::string& node, const std::string& scontrol);

// A job's CPU report where Slurm users look (docs/slurm.md, "What the job's CPUs bought"): sets the Slurm job's
// AdminComment to `text` through `scontrol update`, in a child process (the RM's SIGCHLD handler reaps it), and
// only when `scontrol -o show job` names `uid` as the job's owner. Returns the child's pid, -1 when fork failed.
pid_t spawn_admin_comment(const std::string& scontrol, std::int64_t job, uid_t uid, const std::string& text);
// Whether a `scontrol -o show job` line's UserId=NAME(UID) is `uid`.
bool job_owned_by(const std::string& show_job_line, uid_t uid);

}  // namespace cosched::rm::slurm
