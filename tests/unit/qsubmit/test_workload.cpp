// Workload loading: catalog entries become command lines (@programs resolved), submit times are scaled,
// requests are scaled to this machine, and every input error names where it is before anything starts.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "paths.hpp"
#include "workload.hpp"

namespace fs = std::filesystem;
namespace qsub = cosched::qsubmit;
namespace cat = cosched::catalog;

namespace {

// Every @name resolves to /bin/true, which exists and runs everywhere.
cat::ProgramLookup fake_lookup() {
  return [](std::string_view name) -> std::optional<std::string> {
    if (name == "missing") return std::nullopt;
    return std::string("/bin/true");
  };
}

// A scratch directory with a workload and a catalog in it, removed at the end.
class WorkloadFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/qsubmit-unit-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write(const std::string& name, const std::string& text) {
    std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    return path;
  }
  std::string catalog(const std::string& command_1 = "@amdahl --serial-fraction 1.0") {
    return write("catalog.yaml", "apps:\n  1:\n    name: apsi\n    class: not-scalable\n    command: \"" + command_1 +
                                     "\"\n  2:\n    name: swim\n    command: [\"@amdahl\", \"--iterations\", \"5\"]\n"
                                     "  3:\n    name: model-only\n    speedup: {model: amdahl, serial_fraction: 0.5}\n");
  }
  qsub::LoadSettings settings(const std::string& swf) {
    qsub::LoadSettings s;
    s.swf_path = swf;
    return s;
  }

  std::string dir_;
};

constexpr const char* kTwoJobs =
    "; MaxProcs: 64\n"
    "1 10 -1 100 32 -1 -1 32 -1 -1 1 -1 -1 1 -1 -1 -1 -1\n"
    "2 20 -1 100 16 -1 -1 -1 -1 -1 1 -1 -1 2 -1 -1 -1 -1\n";

TEST_F(WorkloadFiles, CatalogEntriesBecomeCommandsWithProgramsResolved) {
  catalog();
  auto w = qsub::load_workload(settings(write("w.swf", kTwoJobs)), fake_lookup());
  ASSERT_TRUE(w.ok()) << w.error().message;
  ASSERT_EQ(w->jobs.size(), 2U);
  EXPECT_EQ(w->jobs[0].argv, (std::vector<std::string>{"/bin/true", "--serial-fraction", "1.0"}));
  EXPECT_EQ(w->jobs[0].app, "apsi");
  EXPECT_EQ(w->jobs[0].app_class, "not-scalable");
  EXPECT_EQ(w->jobs[1].argv, (std::vector<std::string>{"/bin/true", "--iterations", "5"}));
  EXPECT_EQ(w->jobs[1].app_class, "swim") << "no class: the app name groups the results";
  EXPECT_EQ(w->catalog_path, dir_ + "/catalog.yaml") << "the default catalog sits next to the workload";
}

TEST_F(WorkloadFiles, SubmitTimesAreScaled) {
  catalog();
  auto s = settings(write("w.swf", kTwoJobs));
  s.time_scale = 0.1;
  auto w = qsub::load_workload(s, fake_lookup());
  ASSERT_TRUE(w.ok()) << w.error().message;
  EXPECT_DOUBLE_EQ(w->jobs[0].submit, 1.0);
  EXPECT_DOUBLE_EQ(w->jobs[1].submit, 2.0);
}

TEST_F(WorkloadFiles, RequestsScaleFromTheTraceMachineToThisOne) {
  catalog();
  auto w = qsub::load_workload(settings(write("w.swf", kTwoJobs)), fake_lookup());
  ASSERT_TRUE(w.ok()) << w.error().message;
  EXPECT_EQ(w->trace_procs, 64);
  EXPECT_EQ(w->jobs[1].trace_request, 16) << "field 8 unknown: field 5 (allocated) stands in";
  qsub::scale_requests(*w, 4);
  EXPECT_EQ(w->jobs[0].request, 2);  // 32 * 4 / 64
  EXPECT_EQ(w->jobs[1].request, 1);  // 16 * 4 / 64

  // --max-procs overrides the header; a trace no larger than this machine keeps its requests.
  auto s = settings(dir_ + "/w.swf");
  s.max_procs = 32;
  auto small = qsub::load_workload(s, fake_lookup());
  ASSERT_TRUE(small.ok());
  qsub::scale_requests(*small, 64);
  EXPECT_EQ(small->jobs[0].request, 32);
  EXPECT_EQ(small->jobs[1].request, 16);
  qsub::scale_requests(*small, 2);
  EXPECT_EQ(small->jobs[0].request, 2);
  EXPECT_EQ(small->jobs[1].request, 1);
}

TEST_F(WorkloadFiles, MalformedLineNamesFileLineAndField) {
  catalog();
  std::string swf = write("bad.swf", std::string(kTwoJobs) + "3 30 -1 100 x -1 -1 2 -1 -1 1 -1 -1 1 -1 -1 -1 -1\n");
  auto w = qsub::load_workload(settings(swf), fake_lookup());
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.error().code, cosched::Errc::parse_error);
  EXPECT_NE(w.error().message.find("bad.swf:4:"), std::string::npos) << w.error().message;
  EXPECT_NE(w.error().message.find("field 5"), std::string::npos) << w.error().message;

  auto s = settings(swf);
  s.lenient = true;
  auto lenient = qsub::load_workload(s, fake_lookup());
  ASSERT_TRUE(lenient.ok()) << lenient.error().message;
  EXPECT_EQ(lenient->jobs.size(), 2U);
  EXPECT_EQ(lenient->warnings.size(), 1U);
}

TEST_F(WorkloadFiles, ProgramAndCatalogErrorsNameTheEntryAndTheJob) {
  std::string swf = write("w.swf", kTwoJobs);
  catalog("@missing --x");
  auto w = qsub::load_workload(settings(swf), fake_lookup());
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.error().message.find("job 1 (line 2)"), std::string::npos) << w.error().message;
  EXPECT_NE(w.error().message.find("@missing"), std::string::npos) << w.error().message;

  catalog("no-such-program-anywhere --x");
  w = qsub::load_workload(settings(swf), fake_lookup());
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.error().message.find("'no-such-program-anywhere' not found"), std::string::npos) << w.error().message;

  catalog();
  w = qsub::load_workload(settings(write("w3.swf", "1 0 -1 1 1 -1 -1 1 -1 -1 1 -1 -1 3 -1 -1 -1 -1\n")), fake_lookup());
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.error().message.find("app 'model-only' has no command"), std::string::npos) << w.error().message;

  w = qsub::load_workload(settings(write("w9.swf", "1 0 -1 1 1 -1 -1 1 -1 -1 1 -1 -1 9 -1 -1 -1 -1\n")), fake_lookup());
  ASSERT_FALSE(w.ok()) << "executable 9 has no entry and the catalog no default";

  w = qsub::load_workload(settings(write("dup.swf", "1 0 -1 1 1 -1 -1 1 -1 -1 1 -1 -1 1 -1 -1 -1 -1\n"
                                                    "1 5 -1 1 1 -1 -1 1 -1 -1 1 -1 -1 1 -1 -1 -1 -1\n")),
                          fake_lookup());
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.error().message.find("dup.swf:2: field 1 (job number)"), std::string::npos) << w.error().message;
}

TEST_F(WorkloadFiles, MissingCatalogIsAnError) {
  auto w = qsub::load_workload(settings(write("w.swf", kTwoJobs)), fake_lookup());
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.error().code, cosched::Errc::not_found);
  EXPECT_NE(w.error().message.find("catalog.yaml"), std::string::npos) << w.error().message;
}

TEST(ProgramDirectories, EnvironmentThenInstallThenBuildTree) {
  auto dirs = qsub::program_directories("/a::/b", "/opt/cosched/bin");
  ASSERT_GE(dirs.size(), 5U);
  EXPECT_EQ(dirs[0], "/a");
  EXPECT_EQ(dirs[1], "/b");
  EXPECT_EQ(dirs[2], "/opt/cosched/libexec/cosched");
  EXPECT_EQ(dirs[3], "/opt/cosched/libexec/cosched/npb");  // where the install puts the NPB kernels
  EXPECT_EQ(dirs[4], "/opt/cosched/libexec/cosched/microbench");
  if (dirs.size() > 5) {
    EXPECT_EQ(fs::path(dirs[5]).filename(), "bin") << "the build tree's program directory";
  }
}

TEST(ProgramDirectories, FindExecutableSearchesThePath) {
  EXPECT_FALSE(qsub::find_executable("sh").empty());
  EXPECT_EQ(qsub::find_executable("/bin/sh"), "/bin/sh");
  EXPECT_EQ(qsub::find_executable("/nonexistent/prog"), "");
  EXPECT_EQ(qsub::find_executable("no-such-program-anywhere"), "");
}

}  // namespace
