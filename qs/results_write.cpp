// write_run: every file of a run directory (listed in qs/results.hpp, columns in docs/results.md). Each file
// is written whole and renamed into place, so cosched-report running during a run sees old or new, never half.
#include <filesystem>
#include <system_error>

#include "qs/results.hpp"
#include "qs/results_text.hpp"
#include "qs/trace_placement.hpp"
#include "qs/trace_writers.hpp"

namespace cosched::results {

namespace {

using text::csv_field;
using text::number;

std::string jobs_csv(const Run& run) {
  std::string out =
      "job,app,class,submit,start,end,wait,response,execution,requested,mean_cpus,exit_status,rm_id,pid\n";
  for (const JobRecord& j : run.jobs) {
    out += std::to_string(j.id) + "," + csv_field(j.app) + "," + csv_field(j.app_class) + "," + number(j.submit) + "," +
           number(j.start) + "," + number(j.end) + "," + number(j.wait()) + "," + number(j.response()) + "," +
           number(j.execution()) + "," + std::to_string(j.requested) + "," + number(j.mean_cpus()) + "," +
           std::to_string(j.exit_status) + "," + std::to_string(j.rm_id) + "," + std::to_string(j.pid) + "\n";
  }
  return out;
}

std::string ml_csv(const std::vector<MlSample>& ml) {
  std::string out = "t,running,queued\n";
  for (const MlSample& m : ml) {
    out += number(m.t) + "," + std::to_string(m.running) + "," + std::to_string(m.queued) + "\n";
  }
  return out;
}

std::string allocation_csv(const Run& run) {
  std::string out = "job,t0,t1,cpus,cpu_list\n";
  for (const JobRecord& j : run.jobs) {
    for (const CpuSegment& s : j.allocation) {
      // Not CpuSet::to_string: the list is kept as given (order, duplicates) so a read gives it back as is.
      std::string list;
      for (int cpu : s.cpu_list) list += (list.empty() ? "" : " ") + std::to_string(cpu);
      out += std::to_string(j.id) + "," + number(s.t0) + "," + number(s.t1) + "," + std::to_string(s.cpus) + "," +
             list + "\n";
    }
  }
  return out;
}

}  // namespace

Status write_run(const std::string& dir, const Run& run, const WriteOptions& options) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return make_error(Errc::io_error, dir + ": cannot create directory: " + ec.message());

  // Each file is written as soon as it is made and let go: a run holds at most one file's text at a time
  // (a trace can be gigabytes).
  auto write = [&](const char* name, const std::string& content) {
    return text::write_file_atomically((std::filesystem::path(dir) / name).string(), content);
  };
  const std::vector<MlSample> ml = run.ml.empty() ? derive_ml(run.jobs) : run.ml;
  if (Status s = write("ml.csv", ml_csv(ml)); !s) return s;
  if (options.allocation) {
    if (Status s = write("allocation.csv", allocation_csv(run)); !s) return s;
  } else {
    std::filesystem::remove(std::filesystem::path(dir) / "allocation.csv", ec);
  }
  const std::string summary = summarize(run).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  if (Status s = write("summary.json", summary); !s) return s;
  if (options.traces) {
    const Placement placement = place_on_cpus(run);
    {
      const ParaverTrace paraver = paraver_trace(run, placement, ml);
      if (Status s = write("trace.prv", paraver.prv); !s) return s;
      if (Status s = write("trace.pcf", paraver.pcf); !s) return s;
      if (Status s = write("trace.row", paraver.row); !s) return s;
    }
    if (Status s = write("trace.json", chrome_trace(run, placement, ml)); !s) return s;
  } else {
    for (const char* name : {"trace.prv", "trace.pcf", "trace.row", "trace.json"}) {
      std::filesystem::remove(std::filesystem::path(dir) / name, ec);
    }
  }
  // jobs.csv last: once it exists, every other file of a first write exists too.
  return write("jobs.csv", jobs_csv(run));
}

}  // namespace cosched::results
