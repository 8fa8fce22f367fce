#include "rm/decision/core_trace.hpp"

#include <stdexcept>

namespace cosched::policy {
// Every field a policy may read, so that a replayed policy decides as the daemon's did. Doubles round-trip:
// nlohmann writes them with max_digits10.
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Perf, valid, kind, confidence, speedup, efficiency, iteration_s, baseline_s, spread,
                                   cpus, samples, amdahl_f, baseline_cpus, seq)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(HistoryEntry, cpus, speedup, efficiency, iteration_s, at)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(BandwidthSample, at, bytes_per_s, threads)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Bandwidth, samples, count, source, slowdown)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(RateSample, at, seconds, per_s, threads, source, with)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Rate, latest, seq)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(JobView, id, request, allocation, runnable, arrival, analyzing, analyzing_since,
                                   analyzed_iterations, perf, history, bandwidth, network, rate)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Machine, cpus, cores, packages, threads_per_core, mem_bandwidth)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(ClusterOrder, order, at, seq)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Snapshot, now, quantum, event, subject, machine, jobs, queued, starting, cluster)
}  // namespace cosched::policy

namespace cosched::rm {

namespace {

CpuSet cpus_from(const nlohmann::json& j) {
  auto c = CpuSet::parse(j.get<std::string>());
  if (!c) throw std::runtime_error(c.error().message);
  return *c;
}

}  // namespace

nlohmann::json trace_header(const CoreMachine& m, const policy::Machine& view, const std::string& policy,
                            const policy::ParamList& params) {
  return {{"cosched_core_trace", 1},
          {"cpus", m.cpus},
          {"order", m.order},
          {"core_of", m.core_of},
          {"place_cpus", m.place_cpus},
          {"machine", view},
          {"policy", policy},
          {"params", params}};
}

nlohmann::json trace_decide(const policy::Snapshot& s, const std::vector<CoreJob>& jobs,
                            const std::vector<policy::JobId>& stopped, bool may_start_before,
                            const std::optional<std::string>& hold) {
  nlohmann::json js = nlohmann::json::array();
  for (const CoreJob& c : jobs) {
    nlohmann::json procs = nlohmann::json::array();
    for (const CoreProcess& p : c.processes) {
      procs.push_back({{"id", p.id}, {"allocation", p.allocation}, {"cpus", p.cpus.to_string()},
                       {"runnable", p.runnable}, {"state", p.state}});
    }
    js.push_back({{"id", c.id}, {"several", c.several}, {"allocation", c.allocation}, {"cpus", c.cpus.to_string()},
                  {"allowed", c.allowed.to_string()}, {"threads", c.threads}, {"processes", std::move(procs)}});
  }
  return {{"decide", s},
          {"jobs", std::move(js)},
          {"stopped", stopped},
          {"may_start_before", may_start_before},
          {"hold", hold ? nlohmann::json(*hold) : nlohmann::json(nullptr)}};
}

CoreMachine core_machine_from(const nlohmann::json& header) {
  if (header.value("cosched_core_trace", 0) != 1) throw std::runtime_error("not a cosched core trace (version 1)");
  CoreMachine m;
  m.cpus = header.at("cpus").get<int>();
  m.order = header.at("order").get<std::vector<int>>();
  m.core_of = header.at("core_of").get<std::vector<int>>();
  m.place_cpus = header.at("place_cpus").get<bool>();
  return m;
}

policy::Machine machine_view_from(const nlohmann::json& header) { return header.at("machine").get<policy::Machine>(); }

policy::Snapshot snapshot_from(const nlohmann::json& j) { return j.get<policy::Snapshot>(); }

std::vector<CoreJob> core_jobs_from(const nlohmann::json& j) {
  std::vector<CoreJob> out;
  for (const auto& c : j) {
    CoreJob job;
    job.id = c.at("id").get<policy::JobId>();
    job.several = c.at("several").get<bool>();
    job.allocation = c.at("allocation").get<int>();
    job.cpus = cpus_from(c.at("cpus"));
    job.allowed = cpus_from(c.at("allowed"));
    job.threads = c.value("threads", 0);  // traces written before it had none
    for (const auto& p : c.at("processes")) {
      job.processes.push_back({p.at("id").get<policy::JobId>(), p.at("allocation").get<int>(), cpus_from(p.at("cpus")),
                               p.at("runnable").get<bool>(), p.at("state").get<std::string>()});
    }
    out.push_back(std::move(job));
  }
  return out;
}

policy::ParamList params_from(const nlohmann::json& j) { return j.get<policy::ParamList>(); }

}  // namespace cosched::rm
