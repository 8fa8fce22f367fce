// cosched-cluster: MemBUS's cross-node phase as an MPI program (Koukis & Koziris §4-§5.1; the paper's TCP
// star replaced by MPI collectives, as its §5.1 plans). One rank per node, started by mpirun; each rank talks
// to its node's cosched-rm (run with --policy membus) over the RM's socket. Every quantum:
//   1. cluster_local: the node's jobs and Algorithm 2's candidates S_l (computed by the RM's policy);
//   2. MPI_Allgatherv of the job keys → the same global index on every node;
//   3. MPI_Allreduce(SUM) of S_l → S_total, sorted by popularity (membus_reduce, Algorithm 1 lines 10-11);
//   4. MPI_Barrier (line 12: "perform a barrier to sync the context switch");
//   5. cluster_switch: the node resumes jobs in the agreed order while CPUs remain (lines 14-16).
// Faults: a rank that cannot reach its RM aborts the whole MPI job (MPI_Abort), and every RM that hears from no
// coordinator for `stale` quanta schedules alone (membus.hpp); an RM that dies releases its jobs through its
// guard. Nothing here can leave a job stopped.
#include <mpi.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "ctl/client.hpp"
#include "cosched/cli.hpp"
#include "cosched/wire.hpp"
#include "policies/bandwidth/membus_select.hpp"
#include "round.hpp"

namespace {

using nlohmann::json;

std::string with_rank(std::string text, int rank) {
  const std::string tag = "{rank}";
  for (auto at = text.find(tag); at != std::string::npos; at = text.find(tag)) text.replace(at, tag.size(), std::to_string(rank));
  return text;
}

[[noreturn]] void give_up(int rank, const std::string& why) {
  std::fprintf(stderr, "cosched-cluster rank %d: %s; aborting, every node falls back to its local policy\n", rank,
               why.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 3);
  std::_Exit(3);
}

// Every node's keys, gathered on every node (variable lengths: Allgather of the sizes, then Allgatherv).
std::vector<std::string> gather_keys(const std::vector<std::string>& mine, int size) {
  const std::string text = cosched::cluster::join_keys(mine);
  int len = static_cast<int>(text.size());
  std::vector<int> lens(static_cast<std::size_t>(size));
  MPI_Allgather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, MPI_COMM_WORLD);
  std::vector<int> displs(static_cast<std::size_t>(size), 0);
  for (int r = 1; r < size; ++r) displs[r] = displs[r - 1] + lens[r - 1];
  std::string all(static_cast<std::size_t>(displs.back() + lens.back()), '\0');
  MPI_Allgatherv(text.data(), len, MPI_CHAR, all.data(), lens.data(), displs.data(), MPI_CHAR, MPI_COMM_WORLD);
  return cosched::cluster::split_keys(all);
}

// Every option, and where its value lands: the options table, and nothing else.
struct ClusterArgs {
  std::string socket = cosched::wire::default_socket_path();
  double quantum = 0.5;
  long rounds = 0;
  int timeout_ms = 2000;
  std::string trace;
  bool timing = false;
};

void add_options(CLI::App& app, ClusterArgs& a) {
  app.set_version_flag("--version", std::string("cosched-cluster ") + COSCHED_VERSION);
  app.add_option("--socket", a.socket, "the node's RM socket; {rank} is replaced by this rank (several RMs on one "
                                       "machine, for tests)")->capture_default_str();
  app.add_option("--quantum", a.quantum, "seconds between coordination rounds (MemBUS q, paper §6: 0.5); 0: back to back")
      ->check(CLI::Range(0.0, 3600.0))->capture_default_str();
  app.add_option("--rounds", a.rounds, "stop after this many rounds (0: run until killed)")->check(CLI::Range(0L, 1L << 40));
  app.add_option("--timeout-ms", a.timeout_ms, "how long one RM request may take")->check(CLI::Range(10, 600000))
      ->capture_default_str();
  app.add_option("--trace", a.trace, "write one JSON line per round to this file ({rank} is replaced by the rank)");
  app.add_flag("--timing", a.timing, "at the end, rank 0 prints the cost of one round (median, 90th percentile)");
}

// One line of --trace: what this node ran after the switch, by job key, next to the agreed totals.
void trace_round(std::ofstream& out, long round, int rank, double switch_wall, double cost,
                 const std::vector<int>& total, const std::vector<std::string>& global,
                 const cosched::cluster::LocalJobs& local, const json& done) {
  std::vector<std::string> running;
  for (const auto& id : done["running"]) {
    for (std::size_t k = 0; k < local.ids.size(); ++k) {
      if (local.ids[k] == id.get<long long>()) running.push_back(local.keys[k]);
    }
  }
  std::sort(running.begin(), running.end());
  out << json{{"round", round}, {"rank", rank}, {"switch_at", switch_wall}, {"cost_s", cost},
              {"total", total}, {"keys", global}, {"running", running}}.dump()
      << std::endl;
}

// Algorithm 1's steps 1-5 for this node (the file's header), once; returns what the round cost.
double coordinate_once(const ClusterArgs& a, int rank, int size, long round, std::ofstream& trace_out) {
  const double t0 = MPI_Wtime();
  auto reply = cosched::ctl::request(a.socket, json{{"cmd", "cluster_local"}}, a.timeout_ms);
  if (!reply) give_up(rank, "RM at " + a.socket + ": " + reply.error().message);
  auto local = cosched::cluster::read_local(*reply, rank);
  if (!local) give_up(rank, local.error().message);
  const auto global = cosched::cluster::global_keys(gather_keys(local->keys, size));
  std::vector<int> mine = cosched::cluster::local_array(global, local->candidates);
  std::vector<int> total(mine.size(), 0);
  MPI_Allreduce(mine.data(), total.data(), static_cast<int>(mine.size()), MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  const auto order = cosched::policy::membus_reduce({total});
  const auto ids = cosched::cluster::local_order(order, global, *local);
  MPI_Barrier(MPI_COMM_WORLD);
  const double switch_wall = MPI_Wtime();
  auto done = cosched::ctl::request(a.socket, json{{"cmd", "cluster_switch"}, {"order", ids}}, a.timeout_ms);
  if (!done) give_up(rank, "RM at " + a.socket + ": " + done.error().message);
  if (!done->value("ok", false)) give_up(rank, "RM refused the switch: " + done->value("error", std::string("?")));
  const double cost = MPI_Wtime() - t0;
  if (trace_out) trace_round(trace_out, round, rank, switch_wall, cost, total, global, *local, *done);
  return cost;
}

void print_timing(std::vector<double> costs, int rank, int size) {
  std::sort(costs.begin(), costs.end());
  double worst = costs.back();
  double median = costs[costs.size() / 2];
  double p90 = costs[std::min(costs.size() - 1, costs.size() * 9 / 10)];
  // Every rank's median, the slowest node's decides how long a round takes.
  double slowest_median = 0;
  MPI_Reduce(&median, &slowest_median, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    std::printf("cosched-cluster: %d ranks, %zu rounds: round cost median %.3f ms (slowest node %.3f ms), "
                "p90 %.3f ms, max %.3f ms\n",
                size, costs.size(), median * 1e3, slowest_median * 1e3, p90 * 1e3, worst * 1e3);
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  CLI::App app{"MemBUS's cross-node phase: run with mpirun, one rank per node, each talking to its node's "
               "cosched-rm (--policy membus). Sums the nodes' candidates with MPI and makes every node switch to "
               "the agreed gang at the same time."};
  ClusterArgs a;
  add_options(app, a);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = rank == 0 ? app.exit(e) : (e.get_exit_code() == 0 ? 0 : 2);
    MPI_Finalize();
    return rc;
  }
  a.socket = with_rank(a.socket, rank);
  std::ofstream trace_out;
  if (!a.trace.empty()) {
    trace_out.open(with_rank(a.trace, rank));
    if (!trace_out) give_up(rank, "cannot write " + with_rank(a.trace, rank));
  }

  std::vector<double> costs;
  for (long round = 0; a.rounds == 0 || round < a.rounds; ++round) {
    const double t0 = MPI_Wtime();
    costs.push_back(coordinate_once(a, rank, size, round, trace_out));
    const double left = t0 + a.quantum - MPI_Wtime();
    if (left > 0) ::usleep(static_cast<useconds_t>(left * 1e6));
  }
  if (a.timing && !costs.empty()) print_timing(std::move(costs), rank, size);
  MPI_Finalize();
  return 0;
}
