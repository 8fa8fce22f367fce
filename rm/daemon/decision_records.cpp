// What the daemon keeps of its decisions (decision_records.hpp).
#include "decision_records.hpp"

#include <fmt/format.h>

namespace cosched::rm {

Status DecisionRecords::open(const Config& cfg) {
  if (!cfg.decision_log.empty()) {
    if (auto st = log_.open(cfg.decision_log); !st) return st;
  }
  if (!cfg.core_trace.empty()) {
    core_trace_.open(cfg.core_trace, std::ios::trunc);
    if (!core_trace_) return Error{Errc::io_error, fmt::format("--core-trace {}: cannot write it", cfg.core_trace)};
  }
  return {};
}

void DecisionRecords::trace(const nlohmann::json& record) {
  core_trace_ << record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
  core_trace_.flush();
}

void DecisionRecords::record(const Settled& st, const JobTable& jobs) {
  nlohmann::json all = nlohmann::json::array();
  nlohmann::json changes = nlohmann::json::array();
  for (std::size_t i = 0; i < st.entries.size(); ++i) {
    const Job& j = jobs.at(st.processes[i].id);
    nlohmann::json e = st.entries[i];
    if (st.processes[i].running) e["pid"] = j.pid;
    e["slurm_job_id"] = slurm_id_json(j);
    if (st.processes[i].listed) changes.push_back(e);
    if (log_.is_open()) all.push_back(std::move(e));
  }
  nlohmann::json entry = st.record;
  if (log_.is_open()) {
    entry["jobs"] = std::move(all);
    log_.write(entry);
  }
  entry["jobs"] = std::move(changes);
  recent_.add(entry["t"].get<double>(), entry.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

}  // namespace cosched::rm
