#include "workload.hpp"

#include <cstdio>
#include <filesystem>
#include <map>

#include "options.hpp"
#include "paths.hpp"

namespace fs = std::filesystem;

namespace cosched::qsubmit {

std::string default_catalog_path(const std::string& swf_path) {
  return (fs::path(swf_path).parent_path() / "catalog.yaml").string();
}

Result<PlannedJob> plan_job(const swf::Job& job, const catalog::Catalog& catalog,
                            const catalog::ProgramLookup& lookup, double time_scale) {
  PlannedJob p;
  p.id = job.number;
  p.line = job.line;
  p.submit = job.submit_s * time_scale;
  p.preceding = job.preceding_job;
  p.think = std::max(job.think_time_s, 0.0) * time_scale;
  p.ideal = job.run_s;
  std::string where = "job " + std::to_string(job.number) + " (line " + std::to_string(job.line) + ")";

  auto request = swf::processor_request(job);
  if (!request) return request.error();
  p.trace_request = *request;

  auto app = catalog.resolve(job.executable);
  if (!app) return make_error(app.error().code, where + ": " + app.error().message);
  p.app = (*app)->name;
  p.app_class = (*app)->app_class.empty() ? (*app)->name : (*app)->app_class;

  // A catalog entry may be simulation-only (no command); a real run cannot use it.
  std::string entry = catalog.source + ":" + std::to_string((*app)->line) + ": app '" + (*app)->name + "'";
  if ((*app)->command.empty()) {
    return make_error(Errc::invalid_argument, entry + " has no command, but " + where + " uses it");
  }
  auto argv = catalog::expand_programs((*app)->command, lookup);
  if (!argv) return make_error(argv.error().code, entry + ", used by " + where + ": " + argv.error().message);
  if (find_executable(argv->front()).empty()) {
    return make_error(Errc::not_found,
                      entry + ", used by " + where + ": program '" + argv->front() + "' not found or not executable");
  }
  p.argv = std::move(*argv);
  p.team = (*app)->team;
  return p;
}

Result<LoadedWorkload> load_workload(const LoadSettings& settings, const catalog::ProgramLookup& lookup) {
  LoadedWorkload out;
  out.swf_path = settings.swf_path;
  out.catalog_path = settings.catalog_path.empty() ? default_catalog_path(settings.swf_path) : settings.catalog_path;

  swf::Options read_options;
  read_options.lenient = settings.lenient;
  read_options.extra_fields = settings.extra_fields;
  auto trace = swf::read_file(settings.swf_path, read_options);
  if (!trace) return trace.error();
  if (auto st = swf::require_jobs(*trace, settings.swf_path); !st) return st.error();
  out.warnings = trace->warnings;
  out.notes = swf::workload_notes(*trace, settings.swf_path);
  out.skipped_lines = trace->skipped_lines;

  std::error_code ec;
  if (!fs::exists(out.catalog_path, ec)) {
    return make_error(Errc::not_found, "no catalog: " + out.catalog_path +
                                           (settings.catalog_path.empty() ? " (next to the workload; give --catalog)" : ""));
  }
  auto cat = catalog::load_file(out.catalog_path);
  if (!cat) return cat.error();

  out.trace_procs = settings.max_procs > 0 ? settings.max_procs : trace->header.machine_procs().value_or(0);

  // Job numbers name the output files (jobs/<id>.out) and the rows of jobs.csv: they must be unique.
  std::map<std::int64_t, std::int64_t> line_of_number;
  for (const auto& job : trace->jobs) {
    if (job.number < 0) {
      return make_error(Errc::parse_error, settings.swf_path + ":" + std::to_string(job.line) +
                                               ": field 1 (job number): unknown (-1), but results are named by it");
    }
    auto [it, fresh] = line_of_number.emplace(job.number, job.line);
    if (!fresh) {
      return make_error(Errc::parse_error, settings.swf_path + ":" + std::to_string(job.line) +
                                               ": field 1 (job number): " + std::to_string(job.number) +
                                               " is already used on line " + std::to_string(it->second));
    }
    auto planned = plan_job(job, *cat, lookup, settings.time_scale);
    if (!planned) {
      return make_error(planned.error().code, settings.swf_path + ": " + planned.error().message);
    }
    out.jobs.push_back(std::move(*planned));
  }
  if (out.jobs.empty()) return make_error(Errc::invalid_argument, settings.swf_path + ": no jobs to replay");
  return out;
}

void scale_requests(LoadedWorkload& workload, int machine_cpus) {
  for (auto& job : workload.jobs) {
    job.request = static_cast<int>(swf::scale_request(job.trace_request, workload.trace_procs, machine_cpus));
  }
}

Result<LoadedWorkload> load_workload(const Options& options) {
  LoadSettings load;
  load.swf_path = options.workload;
  load.catalog_path = options.catalog;
  load.time_scale = options.time_scale;
  load.max_procs = options.max_procs;
  load.lenient = options.lenient;
  load.extra_fields = options.extra_fields == "ignore" ? swf::ExtraFields::ignore : swf::ExtraFields::error;
  auto workload = load_workload(load, default_program_lookup());
  if (workload) {
    for (const auto& w : workload->warnings) std::fprintf(stderr, "qsubmit: skipped: %s\n", w.c_str());
    for (const auto& n : workload->notes) std::fprintf(stderr, "qsubmit: warning: %s\n", n.c_str());
  }
  return workload;
}

}  // namespace cosched::qsubmit
