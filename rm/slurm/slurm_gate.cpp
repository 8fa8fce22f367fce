#include "slurm_gate.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "cosched/log.hpp"

namespace cosched::rm {

namespace {

// After a failed scontrol (slurmctld down, say), wait this long before trying again (our choice: a node whose
// controller does not answer cannot start jobs anyway, and retrying every quantum would flood its log).
constexpr double kRetryAfterS = 5.0;

const char* op_name(slurm::NodeOp op) { return op == slurm::NodeOp::drain ? "drain" : "resume"; }

}  // namespace

void SlurmGate::recover() {
  if (!enabled()) return;
  std::string why;
  auto r = slurm::run_node_op(slurm::NodeOp::resume, node_, scontrol_, why);
  if (r == slurm::op_done) {
    COSCHED_INFO(rm, "[slurm] node {}: admission follows the policy's may_start (drained with reason '{}' while it "
                     "says no)", node_, slurm::kDrainReason);
  } else {
    COSCHED_WARN(rm, "[slurm] node {}: {}{}{}", node_, slurm::to_string(r), why.empty() ? "" : ": ", why);
  }
}

void SlurmGate::apply(bool may_start, double now) {
  if (!enabled()) return;
  want_drained_ = !may_start;
  if (child_ > 0 || want_drained_ == drained_ || now < retry_at_) return;
  start(want_drained_ ? slurm::NodeOp::drain : slurm::NodeOp::resume, now);
}

void SlurmGate::start(slurm::NodeOp op, double now) {
  // Announced before it is issued: if the RM dies between the two, the guard resumes a node that may not
  // even be drained, which changes nothing (only our reason is ever resumed).
  if (op == slurm::NodeOp::drain) guard_.node_drained(node_, scontrol_);
  child_ = slurm::spawn_node_op(op, node_, scontrol_);
  child_op_ = op;
  if (child_ < 0) {
    COSCHED_WARN(rm, "[slurm] node {}: cannot run {}: {}", node_, scontrol_, std::strerror(errno));
    retry_at_ = now + kRetryAfterS;
  }
}

bool SlurmGate::on_child_exit(pid_t pid, int status, double now) {
  if (pid != child_ || child_ <= 0) return false;
  child_ = -1;
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : slurm::op_failed;
  const auto r = static_cast<slurm::NodeOpResult>(code);
  last_result_ = std::string(op_name(child_op_)) + ": " + slurm::to_string(r);
  if (r == slurm::op_done) {
    drained_ = child_op_ == slurm::NodeOp::drain;
    ++changes_;
    COSCHED_INFO(rm, "[slurm] node {} {}", node_, drained_ ? "drained: the policy admits no more jobs" : "resumed");
  } else if (r == slurm::op_not_ours) {
    // Someone else's drain (or a down node): never ours to change, and nothing of ours to undo.
    drained_ = false;
    COSCHED_WARN(rm, "[slurm] node {}: {}: {}", node_, op_name(child_op_), slurm::to_string(r));
    retry_at_ = now + kRetryAfterS;
  } else {
    COSCHED_WARN(rm, "[slurm] node {}: {} failed: {}", node_, op_name(child_op_), slurm::to_string(r));
    retry_at_ = now + kRetryAfterS;
  }
  if (!drained_) guard_.node_resumed(node_);
  if (want_drained_ != drained_ && now >= retry_at_) {
    start(want_drained_ ? slurm::NodeOp::drain : slurm::NodeOp::resume, now);
  }
  return true;
}

void SlurmGate::shutdown() {
  if (!enabled()) return;
  if (child_ > 0) {
    int status = 0;
    while (::waitpid(child_, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == slurm::op_done) drained_ = child_op_ == slurm::NodeOp::drain;
    child_ = -1;
  }
  // Whatever we believe, ask Slurm: a drain whose result we never saw is resumed too (only ours ever is).
  std::string why;
  auto r = slurm::run_node_op(slurm::NodeOp::resume, node_, scontrol_, why);
  if (r == slurm::op_done) {
    if (drained_) COSCHED_INFO(rm, "[slurm] node {} resumed", node_);
    guard_.node_resumed(node_);
  } else if (r != slurm::op_not_ours) {
    COSCHED_WARN(rm, "[slurm] node {}: resume at exit: {}{}{} (the guard tries again)", node_, slurm::to_string(r),
                 why.empty() ? "" : ": ", why);
  }
  drained_ = false;
}

nlohmann::json SlurmGate::status_json() const {
  if (!enabled()) return nullptr;
  return {{"node", node_},
          {"drained", drained_},
          {"want_drained", want_drained_},
          {"pending", child_ > 0},
          {"reason", slurm::kDrainReason},
          {"changes", changes_},
          {"last_result", last_result_}};
}

}  // namespace cosched::rm
