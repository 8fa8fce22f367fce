// Writes two small run directories through the real results writer, for the cosched-report test:
//   OUT/pdpa    a "real" run on 4 CPUs whose segments name their CPUs, with sampled ML
//   OUT/native  the same jobs as a native run: no cpu_list, 5 CPUs' worth of threads at once (oversubscribed)
// Usage: results_fixture OUT
#include <cstdio>

#include "qs/results.hpp"

namespace results = cosched::results;

namespace {

results::JobRecord job(std::int64_t id, const char* app, double submit, double start, double end) {
  results::JobRecord j;
  j.id = id;
  j.app = app;
  j.app_class = app;
  j.submit = submit;
  j.start = start;
  j.end = end;
  j.requested = 2;
  return j;
}

results::CpuSegment segment(double t0, double t1, int cpus, std::vector<int> list = {}) {
  results::CpuSegment s;
  s.t0 = t0;
  s.t1 = t1;
  s.cpus = cpus;
  s.cpu_list = std::move(list);
  return s;
}

results::Run pdpa() {
  results::Run run;
  run.name = "pdpa";
  run.mode = "real";
  run.policy = "pdpa";
  run.machine_cpus = 4;
  run.workload = "fixture.swf";
  run.jobs = {job(1, "bt", 0, 0, 10), job(2, "bt", 2, 4, 12), job(3, "apsi", 5, 10, 20), job(4, "swim", 6, 12, 18)};
  run.jobs[0].allocation = {segment(0, 10, 2, {0, 1})};
  run.jobs[1].allocation = {segment(4, 12, 2, {2, 3})};
  run.jobs[2].allocation = {segment(10, 12, 2, {0, 1}), segment(12, 20, 2, {0, 1})};
  run.jobs[3].allocation = {segment(12, 18, 2, {2, 3})};
  run.ml = {{0, 1, 0}, {2, 1, 1}, {4, 2, 0}, {5, 2, 1}, {6, 2, 2}, {10, 2, 1}, {12, 2, 0}, {18, 1, 0}, {20, 0, 0}};
  return run;
}

results::Run native() {
  results::Run run;
  run.name = "native";
  run.mode = "native";
  run.machine_cpus = 4;
  run.workload = "fixture.swf";
  run.jobs = {job(1, "bt", 0, 0, 12), job(2, "bt", 2, 2, 16), job(3, "apsi", 5, 5, 24), job(4, "swim", 6, 16, 26)};
  run.jobs[0].allocation = {segment(0, 12, 2)};
  run.jobs[1].allocation = {segment(2, 16, 2)};
  run.jobs[2].allocation = {segment(5, 24, 2)};  // 6 threads on 4 CPUs over [5, 12)
  run.jobs[3].allocation = {segment(16, 26, 2)};
  return run;  // no ML samples: write_run derives them
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUT\n", argv[0]);
    return 2;
  }
  std::string out = argv[1];
  for (const auto& [name, run] : {std::pair{"pdpa", pdpa()}, std::pair{"native", native()}}) {
    if (auto s = results::write_run(out + "/" + name, run); !s) {
      std::fprintf(stderr, "%s\n", s.error().message.c_str());
      return 1;
    }
  }
  return 0;
}
