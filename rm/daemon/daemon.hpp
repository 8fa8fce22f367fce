// cosched-rm's core: one single-threaded event loop (epoll) over the listening socket, client connections,
// job pidfds, a quantum timer, a policy wake-up timer and a signalfd. Every policy call happens here, so
// policies need no locks.
//
// Split by concern: daemon.cpp (loop, start/stop), daemon_jobs.cpp (admission, departure, reports,
// decide-and-apply), daemon_ctl.cpp (control requests, status JSON); and the rooms it holds, each with a
// header and unit tests (docs/architecture.md, "The daemon's rooms"): the server, the job table's views,
// job status, time sharing, admission, the baseline (baseline.hpp, narrowing.hpp), sensing, the
// decision records and the real-time priority.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <deque>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "admission.hpp"
#include "baseline.hpp"
#include "config.hpp"
#include "decision_records.hpp"
#include "job_table.hpp"
#include "narrowing.hpp"
#include "rm/enforce/cpu_locks.hpp"
#include "ctl_request.hpp"
#include "cosched/log.hpp"
#include "cosched/wire.hpp"
#include "rm/accounting/accounting.hpp"
#include "rm/accounting/decision_log.hpp"
#include "rm/decision/decision_core.hpp"
#include "rm/enforce/enforcer.hpp"
#include "rm/enforce/stopper.hpp"
#include "rm/enforce/guard.hpp"
#include "rm/job/job.hpp"
#include "policies/policy.hpp"
#include "rm/slurm/slurm_gate.hpp"
#include "realtime.hpp"
#include "register_body.hpp"
#include "sensing.hpp"
#include "server.hpp"
#include "rm/placement/topology.hpp"

namespace cosched::rm {

class Daemon {
 public:
  explicit Daemon(Config cfg);
  ~Daemon();
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  // Loads the topology, starts the guard, sets up enforcement, the policy and the socket. Errors are
  // one clear sentence; nothing is left behind on failure.
  Status start();
  // Serves until SIGTERM/SIGINT or a `shutdown` request; then releases every job. Returns the exit code.
  int run();
  // Creates the socket's directory (or checks an existing one): start() does it too, and main() before it
  // daemonizes, because the messages file lives in that directory.
  Status prepare_socket_dir() const { return server_.prepare_socket_dir(); }

 private:
  // daemon.cpp
  double now() const;
  void loop_once(int timeout_ms);
  void on_signal();
  void on_quantum();
  void arm_wake(double at);
  void stop_all();
  // The server's frames: registrations and control requests; false for any other message type.
  bool on_frame(Conn& c, const wire::Frame& f);

  // daemon_jobs.cpp
  void handle_register(Conn& c, const wire::Frame& f);
  // Admits one process; `key` non-empty makes it a member of that job (mpi_jobs.cpp). Returns false when refused.
  void admit(Conn& c, RegisterRequest body, const std::string& key, int rank);
  void confine_admitted();
  void depart(policy::JobId id, const std::string& why);
  void poll_reports();
  bool read_estimates(Job& j);
  void write_slurm_comment(const Job& j, const nlohmann::json& report, bool leaving);
  // The snapshot, the decision core's two calls (rm/decision/decision_core.hpp) with the stops between them,
  // and its actions performed.
  void decide(policy::Event event, policy::JobId subject);
  policy::Snapshot snapshot(policy::Event event, policy::JobId subject);
  void apply(const Proposal& p, const Settled& st);
  // The narrow timer: the requests of the jobs that run narrowed (narrowing.hpp).
  void poll_narrowed();
  // The may_start answer with the starting jobs counted: the policy's rule on a copy of the policy.
  std::pair<bool, std::string> may_start_counting_starting();

  // slurm_arrivals.cpp: a Slurm job announced by its prolog, not registered yet (docs/slurm.md): the answer
  // is held at no until it registers (Admission::hold).
  void expect_slurm_job(std::int64_t slurm_job_id);

  // mpi_jobs.cpp: jobs of several processes (MPI ranks)
  void handle_register_rank(Conn& c, const wire::Frame& f);
  // cosched-cluster's two requests (docs/architecture.md, "Clusters"): this node's jobs and the policy's local
  // candidates; the agreed order, applied at once.
  nlohmann::json cluster_local_json();
  nlohmann::json cluster_switch(const std::vector<policy::JobId>& order);

  // daemon_ctl.cpp
  void handle_ctl(Conn& c, const wire::Frame& f);
  nlohmann::json answer_ctl(const Conn& c, const CtlRequest& req);
  nlohmann::json release_job(const Conn& c, policy::JobId id);  // cosched-ctl release
  nlohmann::json status_json() const;

  Config cfg_;
  Server server_;
  RealtimePriority realtime_;
  Topology topo_;
  CpuLocks cpu_locks_;  // before guard_: the guard, forked later, shares these locks
  Guard guard_;
  std::unique_ptr<Enforcer> enforcer_;
  std::string cpu_share_;  // what --cpu-share gave (status "cpu_share")
  std::unique_ptr<Stopper> stopper_;
  std::unique_ptr<policy::Policy> policy_;
  DecisionCore core_;
  std::unique_ptr<SlurmGate> gate_;  // --slurm-node: the policy's may_start applied to the Slurm node
  Sensing sensing_;  // sensing.hpp
  BaselineSteering baseline_;
  DecisionRecords records_;  // decision_records.hpp
  AccountingLog accounting_;
  std::chrono::steady_clock::time_point t0_;

  int epfd_ = -1;
  int signal_fd_ = -1;
  int quantum_fd_ = -1;
  int wake_fd_ = -1;
  NarrowPoll narrow_poll_;  // narrowing.hpp: polls narrowed jobs between quanta
  bool running_ = true;

  JobTable jobs_;                             // by id = admission order
  GangTable gangs_;                           // jobs of several processes, by the id their processes share
  std::map<int, policy::JobId> pidfds_;       // pidfd → job
  std::vector<policy::JobId> to_confine_;     // admitted in this event batch, confined after its replies
  std::map<policy::JobId, std::deque<WhyEntry>> departed_why_;  // `why` for recently departed jobs
  std::map<policy::JobId, nlohmann::json> departed_reports_;    // `report` for recently departed jobs
  std::map<std::int64_t, double> slurm_comment_at_;  // Slurm job → when its AdminComment was last written
  policy::JobId next_id_ = 1;
  bool may_start_ = false;
  std::string may_start_reason_;
  Admission admission_;  // admission.hpp: jobs not registered yet
  std::uint64_t decisions_ = 0;
  policy::ClusterOrder cluster_;  // cosched-cluster's latest order (Snapshot::cluster)
};

}  // namespace cosched::rm
