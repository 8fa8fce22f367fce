#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "rm/enforce/guard.hpp"

using cosched::rm::Guard;

namespace {
// A child process that stops itself: the guard must resume it when the RM "dies".
pid_t stopped_child() {
  pid_t pid = fork();
  if (pid == 0) {
    raise(SIGSTOP);
    _exit(0);
  }
  int st = 0;
  waitpid(pid, &st, WUNTRACED);
  return pid;
}
}  // namespace

TEST(Guard, ResumesStoppedJobsAndRestoresCgroupsWhenThePipeCloses) {
  char tmpl[] = "/tmp/cosched-guard-XXXXXX";
  std::string dir = mkdtemp(tmpl);
  std::string restore = dir + "/procs";
  std::string job_dir = dir + "/job1";
  std::string rm_dir = dir + "/rm";
  ASSERT_EQ(mkdir(job_dir.c_str(), 0755), 0);
  ASSERT_EQ(mkdir(rm_dir.c_str(), 0755), 0);
  { std::ofstream(restore) << ""; }
  pid_t job = stopped_child();

  int p[2];
  ASSERT_EQ(pipe(p), 0);
  std::string lines = "D\t" + rm_dir + "\nJ\t" + std::to_string(job) + "\t" + restore + "\t" + job_dir + "\nS\t" +
                      std::to_string(job) + "\t\n";
  ASSERT_EQ(write(p[1], lines.data(), lines.size()), static_cast<ssize_t>(lines.size()));
  close(p[1]);  // the RM dies
  Guard::run(p[0]);
  close(p[0]);

  int st = 0;
  ASSERT_EQ(waitpid(job, &st, 0), job);  // it was resumed and exited
  EXPECT_TRUE(WIFEXITED(st));
  std::ifstream in(restore);
  std::string written;
  in >> written;
  EXPECT_EQ(written, std::to_string(job));  // put back into its original cgroup
  struct stat sb;
  EXPECT_NE(stat(job_dir.c_str(), &sb), 0);  // the job's cgroup and the RM's are removed
  EXPECT_NE(stat(rm_dir.c_str(), &sb), 0);
  unlink(restore.c_str());
  rmdir(dir.c_str());
}

TEST(Guard, ReleasedJobsAreLeftAlone) {
  char tmpl[] = "/tmp/cosched-guard-XXXXXX";
  std::string dir = mkdtemp(tmpl);
  std::string restore = dir + "/procs";
  { std::ofstream(restore) << ""; }
  int p[2];
  ASSERT_EQ(pipe(p), 0);
  std::string lines = "J\t12345\t" + restore + "\t\nR\t12345\nB\n";
  ASSERT_EQ(write(p[1], lines.data(), lines.size()), static_cast<ssize_t>(lines.size()));
  close(p[1]);
  Guard::run(p[0]);
  close(p[0]);
  std::ifstream in(restore);
  std::string written;
  in >> written;
  EXPECT_TRUE(written.empty());
  unlink(restore.c_str());
  rmdir(dir.c_str());
}

TEST(Guard, ThawsTheFreezerAndRestoresEveryHierarchyOfAJob) {
  // A job confined in two hierarchies (cpuset and freezer) and frozen: the guard writes the thaw to both
  // freezer files (v2 and v1 names) and puts the job back in both hierarchies.
  char tmpl[] = "/tmp/cosched-guard-XXXXXX";
  std::string dir = mkdtemp(tmpl);
  std::string cpuset_procs = dir + "/cpuset.procs";
  std::string freezer_procs = dir + "/freezer.procs";
  std::string freezer = dir + "/freezer";
  ASSERT_EQ(mkdir(freezer.c_str(), 0755), 0);
  for (const auto& f : {cpuset_procs, freezer_procs, freezer + "/cgroup.freeze", freezer + "/freezer.state"}) {
    std::ofstream(f) << "";
  }
  pid_t job = stopped_child();
  int p[2];
  ASSERT_EQ(pipe(p), 0);
  const std::string pid = std::to_string(job);
  std::string lines = "J\t" + pid + "\t" + cpuset_procs + "\t\nJ\t" + pid + "\t" + freezer_procs + "\t\nS\t" + pid +
                      "\t" + freezer + "\n";
  ASSERT_EQ(write(p[1], lines.data(), lines.size()), static_cast<ssize_t>(lines.size()));
  close(p[1]);
  Guard::run(p[0]);
  close(p[0]);
  int st = 0;
  ASSERT_EQ(waitpid(job, &st, 0), job);
  auto first_word = [](const std::string& path) {
    std::ifstream in(path);
    std::string w;
    in >> w;
    return w;
  };
  EXPECT_EQ(first_word(freezer + "/cgroup.freeze"), "0");
  EXPECT_EQ(first_word(freezer + "/freezer.state"), "THAWED");
  EXPECT_EQ(first_word(cpuset_procs), pid);
  EXPECT_EQ(first_word(freezer_procs), pid);
  for (const auto& f : {cpuset_procs, freezer_procs, freezer + "/cgroup.freeze", freezer + "/freezer.state"}) {
    unlink(f.c_str());
  }
  rmdir(freezer.c_str());
  rmdir(dir.c_str());
}
