// qsubmit's side of the resource manager: one-shot control requests (status, may_start, decisions,
// shutdown) to a cosched-rm, which is either one that already runs (--socket) or a private one started for
// this run (--policy) and stopped at its end, whatever way the run ends.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cosched/error.hpp"

namespace cosched::qsubmit {

// What qsubmit needs from a `status` reply.
struct RmJobView {
  std::int64_t id = -1;     // the RM's job id
  pid_t pid = 0;
  int allocated = 0;        // CPUs the policy gave it
  std::vector<int> cpus;    // which ones
  bool stopped = false;     // time-shared out: holds no CPU right now
};

struct RmStatus {
  std::string policy;
  nlohmann::json params = nlohmann::json::object();
  std::vector<int> cpus;    // the CPUs the RM manages
  bool may_start = false;
  double uptime_s = 0;      // the RM's clock: decision-log entries carry it as "t"
  std::vector<RmJobView> jobs;
};

// Reads a `status` reply; Errc::protocol_error naming the missing or mistyped field.
Result<RmStatus> parse_status(const nlohmann::json& reply);

struct PrivateRmSettings {
  std::string policy;
  std::vector<std::string> params;  // NAME=VALUE, passed through as --param
  std::string cpus;                 // --cpus list; empty: every CPU
  std::string decision_log;         // --log path
};

class RmLink {
 public:
  // Talks to the RM serving `socket`.
  explicit RmLink(std::string socket);
  // Starts cosched-rm --foreground on a socket in a fresh temporary directory and waits (up to 10 s) until it
  // answers `status`. Errors carry the RM's own message (bad policy, bad parameter, bad CPU list).
  static Result<RmLink> start_private(const PrivateRmSettings& settings);

  RmLink(RmLink&& other) noexcept;
  RmLink& operator=(RmLink&&) = delete;
  RmLink(const RmLink&) = delete;
  RmLink& operator=(const RmLink&) = delete;
  ~RmLink();

  [[nodiscard]] const std::string& socket() const { return socket_; }
  [[nodiscard]] bool is_private() const { return rm_pid_ > 0; }

  Result<RmStatus> status() const;
  // `queued`: jobs waiting here, which the RM's policies may take into account (Snapshot::queued); `starting`:
  // jobs started here that the RM may not have seen register, which it counts as running (Snapshot::starting).
  Result<bool> may_start(int queued, int starting) const;
  // The RM's decision-log entries stamped at or after `since_uptime_s`. Errc::unsupported when this RM has no
  // `decisions` command.
  Result<std::vector<nlohmann::json>> decisions_since(double since_uptime_s) const;

  // Private RM only: asks it to shut down (it releases every job it holds), then SIGTERM, then SIGKILL if it
  // does not exit in time; removes the temporary directory. Does nothing for an RM we did not start; safe to
  // call twice. Returns the RM's exit status (0 for an RM we did not start).
  int stop();

 private:
  RmLink() = default;
  std::string socket_;
  std::string temp_dir_;  // private RM: holds the socket and the RM's messages
  pid_t rm_pid_ = 0;
};

}  // namespace cosched::qsubmit
