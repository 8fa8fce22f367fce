// Chrome/Perfetto trace of a Run (Trace Event Format, JSON object form), for ui.perfetto.dev or
// chrome://tracing: one thread track per CPU row, a complete ("X") event per job piece, the ML as a counter.
#include <cmath>

#include "qs/trace_writers.hpp"

namespace cosched::results {

namespace {

constexpr int kPid = 1;

// The format counts microseconds; fractional values are allowed and keep sub-microsecond pieces apart.
double to_us(double seconds) { return std::isfinite(seconds) && seconds > 0 ? seconds * 1e6 : 0.0; }

nlohmann::json metadata(const char* what, int tid, nlohmann::json args) {
  return {{"ph", "M"}, {"name", what}, {"pid", kPid}, {"tid", tid}, {"args", std::move(args)}};
}

}  // namespace

std::string chrome_trace(const Run& run, const Placement& placement, const std::vector<MlSample>& ml) {
  nlohmann::json events = nlohmann::json::array();
  std::string process = "cosched " + (run.name.empty() ? run.mode : run.name);
  if (!run.policy.empty()) process += " (" + run.policy + ")";
  events.push_back(metadata("process_name", 0, {{"name", process}}));
  for (int r = 0; r < placement.rows; ++r) {
    events.push_back(metadata("thread_name", r, {{"name", row_label(placement, r)}}));
    events.push_back(metadata("thread_sort_index", r, {{"sort_index", r}}));
  }
  for (const PlacedPiece& p : placement.pieces) {
    const JobRecord& job = run.jobs[p.job_index];
    // Named by application first, so that viewers that colour by name colour by application (Fig. 5).
    std::string name = (job.app.empty() ? std::string("job") : job.app) + " #" + std::to_string(job.id);
    events.push_back({{"ph", "X"},
                      {"name", name},
                      {"cat", "job"},
                      {"pid", kPid},
                      {"tid", p.row},
                      {"ts", to_us(p.t0)},
                      {"dur", to_us(p.t1) - to_us(p.t0)},
                      {"args", {{"job", job.id}, {"app", job.app}, {"class", job.app_class}}}});
  }
  for (const MlSample& m : ml) {
    events.push_back({{"ph", "C"},
                      {"name", "multiprogramming level"},
                      {"pid", kPid},
                      {"tid", 0},
                      {"ts", to_us(m.t)},
                      {"args", {{"running", m.running}, {"queued", m.queued}}}});
  }
  // No "displayTimeUnit": the format defines it as a display hint only ("ms" or "ns"; ts and dur are always
  // microseconds), but Perfetto's JSON importer once read it as the unit of ts and dur: until early 2022
  // (google/perfetto issues #141 and #274) its tokenizer looked for the key in the file's first chunk and,
  // for "ms", read every timestamp as milliseconds, so this trace drew 1000 times too long (nlohmann::json
  // sorts keys, so the key came first). Perfetto's importer now reads the key and ignores it (it only counts
  // it in the json_display_time_unit stat); chrome://tracing only formats numbers with it. Without the key
  // every importer reads microseconds.
  nlohmann::json trace = {{"traceEvents", std::move(events)},
                          {"otherData",
                           {{"name", run.name},
                            {"mode", run.mode},
                            {"policy", run.policy},
                            {"machine_cpus", run.machine_cpus},
                            {"workload", run.workload}}}};
  // `replace`: a name with invalid UTF-8 (from a catalog) must not make the whole trace unwritable.
  return trace.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace cosched::results
