// Slurm's job-completion records (jobcomp/filetxt), as qsubmit --backend slurm reads them.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>

#include "qs/qsubmit/slurm/jobcomp.hpp"
#include "options.hpp"
#include "qs/qsubmit/slurm/slurm_replay.hpp"

using namespace cosched::qsubmit;

namespace {
const char* kLine =
    "JobId=12 UserId=root(0) GroupId=root(0) Name=qsubmit-3 JobState=COMPLETED Partition=main TimeLimit=UNLIMITED "
    "StartTime=2026-11-25T08:31:28 EndTime=2026-11-25T08:31:31 NodeList=vm NodeCnt=1 ProcCnt=2 WorkDir=/tmp "
    "ReservationName= Tres=cpu=2,mem=1M,node=1,billing=2 Account= QOS= WcKey= Cluster=unknown "
    "SubmitTime=2026-11-25T08:31:26 EligibleTime=2026-11-25T08:31:26 DerivedExitCode=0:0 ExitCode=0:0 ";
}

TEST(Jobcomp, ReadsTheFieldsOfARecord) {
  auto r = parse_completion_line(kLine);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->job_id, 12);
  EXPECT_EQ(r->name, "qsubmit-3");
  EXPECT_EQ(r->state, "COMPLETED");
  EXPECT_EQ(r->nodes, "vm");
  EXPECT_EQ(r->cpus, 2);
  EXPECT_EQ(r->exit_status, 0);
  EXPECT_DOUBLE_EQ(r->end - r->start, 3.0);
  EXPECT_DOUBLE_EQ(r->start - r->submit, 2.0);
}

TEST(Jobcomp, ExitCodesFollowTheShell) {
  EXPECT_EQ(*parse_exit_code("0:0"), 0);
  EXPECT_EQ(*parse_exit_code("3:0"), 3);
  EXPECT_EQ(*parse_exit_code("0:9"), 137);
  EXPECT_FALSE(parse_exit_code("x").ok());
  EXPECT_DOUBLE_EQ(*parse_slurm_time("Unknown"), -1.0);
  EXPECT_FALSE(parse_slurm_time("yesterday").ok());
}

TEST(Jobcomp, ABadRecordNamesTheField) {
  auto r = parse_completion_line("JobId=x JobState=COMPLETED SubmitTime=None StartTime=None EndTime=None ExitCode=0:0");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("JobId"), std::string::npos) << r.error().message;
  EXPECT_FALSE(parse_completion_line("JobId=1").ok());
}

TEST(Jobcomp, TheReaderReturnsOnlyNewCompleteLines) {
  char path[] = "/tmp/cosched-jobcomp-XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  JobcompReader reader(path);
  std::string line(kLine);
  {
    std::ofstream f(path, std::ios::app);
    f << line << "\n" << "garbage\n" << line.substr(0, 20);  // a record being written
  }
  auto first = reader.read_new();
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->size(), 1U);
  EXPECT_EQ(reader.bad_lines(), 1);
  {
    std::ofstream f(path, std::ios::app);
    std::string rest = line.substr(20);
    rest.replace(rest.find("ProcCnt=2"), 9, "ProcCnt=4");
    f << rest << "\n";
  }
  auto second = reader.read_new();
  ASSERT_TRUE(second.ok());
  ASSERT_EQ(second->size(), 1U);
  EXPECT_EQ(second->at(12).cpus, 4);
  std::remove(path);
}

TEST(SlurmBackend, BatchScriptsQuoteForTheShellAndExecTheProgram) {
  PlannedJob j;
  j.id = 7;
  j.app = "swim";
  j.request = 2;
  j.argv = {"/opt/bin/amdahl", "--name", "it's"};
  EXPECT_EQ(batch_script(j, false), "#!/bin/sh\n# qsubmit: job 7 (swim), 2 CPU(s)\nexec '/opt/bin/amdahl' '--name' 'it'\\''s'\n");
  EXPECT_NE(batch_script(j, true).find("export OMP_NUM_THREADS=2\n"), std::string::npos);
  Options o;
  j.team = "malleable";
  auto opts = sbatch_options(j, o, "/r/jobs", "main", true);
  EXPECT_NE(std::find(opts.begin(), opts.end(), "--cosched=malleable"), opts.end());
  EXPECT_NE(std::find(opts.begin(), opts.end(), "--cpus-per-task=2"), opts.end());
  EXPECT_NE(std::find(opts.begin(), opts.end(), "--output=/r/jobs/7.out"), opts.end());
  o.rm_mode = RmMode::native;
  opts = sbatch_options(j, o, "/r/jobs", "main", false);
  EXPECT_EQ(std::count_if(opts.begin(), opts.end(), [](const std::string& s) { return s.find("cosched") != std::string::npos; }), 0);
}
