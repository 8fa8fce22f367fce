// The Slurm node gate's mechanism (rm/enforce/slurm_node.hpp) against a fake scontrol: a node is drained only
// when nobody else drained it, resumed only while the reason is cosched's, and the guard resumes it when the
// RM dies.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

#include "rm/enforce/guard.hpp"
#include "rm/enforce/slurm_node.hpp"

namespace slurm = cosched::rm::slurm;

namespace {

// A directory with a fake `scontrol` that prints `state`/`reason` for `show node` and logs every `update`.
struct FakeScontrol {
  std::string dir;
  std::string path;
  std::string log;

  FakeScontrol(const std::string& state, const std::string& reason) {
    char tmpl[] = "/tmp/cosched-scontrol-XXXXXX";
    dir = mkdtemp(tmpl);
    path = dir + "/scontrol";
    log = dir + "/updates";
    std::ofstream f(path);
    f << "#!/bin/sh\n"
      << "if [ \"$1\" = -o ] && [ \"$2\" = show ]; then\n"
      << "  echo 'NodeName=n1 Arch=x86_64 CPUTot=2 State=" << state << " ThreadsPerCore=1 Reason=" << reason << "'\n"
      << "  exit 0\nfi\n"
      << "echo \"$*\" >> " << log << "\n";
    f.close();
    chmod(path.c_str(), 0755);
  }
  ~FakeScontrol() {
    unlink(path.c_str());
    unlink(log.c_str());
    rmdir(dir.c_str());
  }
  std::string updates() const {
    std::ifstream in(log);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
};

const std::string kOurs = std::string(slurm::kDrainReason) + " [root@2026-11-25T08:31:52]";

}  // namespace

TEST(SlurmNode, ParsesStateAndReasonWithSpaces) {
  slurm::NodeView v;
  ASSERT_TRUE(slurm::parse_node_line("NodeName=vm CPUTot=2 State=ALLOCATED+DRAIN Weight=1 Reason=" + kOurs, v));
  EXPECT_EQ(v.state, "ALLOCATED+DRAIN");
  EXPECT_EQ(v.reason, slurm::kDrainReason);
  EXPECT_TRUE(v.drained());
  EXPECT_TRUE(v.ours());
  ASSERT_TRUE(slurm::parse_node_line("NodeName=vm State=IDLE Reason=(null)", v));
  EXPECT_FALSE(v.drained());
  EXPECT_EQ(v.reason, "");
  EXPECT_FALSE(slurm::parse_node_line("no node here", v));
}

TEST(SlurmNode, DrainsAnOpenNodeWithCoschedsReason) {
  FakeScontrol fake("IDLE", "(null)");
  std::string why;
  EXPECT_EQ(slurm::run_node_op(slurm::NodeOp::drain, "n1", fake.path, why), slurm::op_done);
  EXPECT_EQ(fake.updates(), std::string("update NodeName=n1 State=DRAIN Reason=") + slurm::kDrainReason + "\n");
}

TEST(SlurmNode, NeverOverridesOrUndoesSomeoneElsesDrain) {
  FakeScontrol fake("IDLE+DRAIN", "disk replacement [admin@2026-11-25T08:00:00]");
  std::string why;
  EXPECT_EQ(slurm::run_node_op(slurm::NodeOp::drain, "n1", fake.path, why), slurm::op_not_ours);
  EXPECT_EQ(slurm::run_node_op(slurm::NodeOp::resume, "n1", fake.path, why), slurm::op_not_ours);
  EXPECT_EQ(fake.updates(), "");
}

TEST(SlurmNode, ResumesOnlyItsOwnDrain) {
  FakeScontrol fake("MIXED+DRAIN", kOurs);
  std::string why;
  EXPECT_EQ(slurm::run_node_op(slurm::NodeOp::resume, "n1", fake.path, why), slurm::op_done);
  EXPECT_EQ(fake.updates(), "update NodeName=n1 State=RESUME\n");
}

TEST(SlurmNode, AnUnreadableNodeIsReported) {
  std::string why;
  EXPECT_EQ(slurm::run_node_op(slurm::NodeOp::resume, "n1", "/nonexistent/scontrol", why), slurm::op_cannot_read);
  EXPECT_NE(why.find("No such file"), std::string::npos) << why;
}

TEST(SlurmNode, TheGuardResumesADrainedNodeWhenTheRmDies) {
  FakeScontrol fake("ALLOCATED+DRAIN", kOurs);
  int p[2];
  ASSERT_EQ(pipe(p), 0);
  std::string lines = "N\tn1\t" + fake.path + "\nN\tn2\t" + fake.path + "\nn\tn2\n";  // n2 was resumed already
  ASSERT_EQ(write(p[1], lines.data(), lines.size()), static_cast<ssize_t>(lines.size()));
  close(p[1]);  // the RM dies
  cosched::rm::Guard::run(p[0]);
  close(p[0]);
  EXPECT_EQ(fake.updates(), "update NodeName=n1 State=RESUME\n");
}

TEST(SlurmNode, TheAdminCommentGoesOnlyOnAJobOfTheSameUid) {
  const std::string line = "JobId=42 JobName=wrap UserId=alice(1000) GroupId=alice(1000) MCS_label=N/A Priority=1";
  EXPECT_TRUE(slurm::job_owned_by(line, 1000));
  EXPECT_FALSE(slurm::job_owned_by(line, 0));  // root's RM writes it for the job's owner, never for another uid
  EXPECT_FALSE(slurm::job_owned_by("JobId=42 UserId=(x) GroupId=1", 0));
  EXPECT_FALSE(slurm::job_owned_by("slurm_load_jobs error: Invalid job id specified", 0));
}
