// The RM's status reply as qsubmit reads it, and the end-of-run summary table.
#include <gtest/gtest.h>

#include "progress.hpp"
#include "rm_link.hpp"

namespace qsub = cosched::qsubmit;
using nlohmann::json;

TEST(RmStatus, ReadsWhatTheReplayNeeds) {
  json reply = json::parse(R"({"ok": true, "policy": "pdpa", "params": {"target_eff": "0.7"}, "cpus": [0, 1],
    "may_start": true, "uptime_s": 12.5,
    "jobs": [{"pid": 100, "allocated": 1, "cpus": [1], "state": "running"},
             {"pid": 101, "allocated": 1, "cpus": [0], "state": "stopped"}]})");
  auto st = qsub::parse_status(reply);
  ASSERT_TRUE(st.ok()) << st.error().message;
  EXPECT_EQ(st->policy, "pdpa");
  EXPECT_EQ(st->params["target_eff"], "0.7");
  EXPECT_EQ(st->cpus, (std::vector<int>{0, 1}));
  EXPECT_TRUE(st->may_start);
  EXPECT_DOUBLE_EQ(st->uptime_s, 12.5);
  ASSERT_EQ(st->jobs.size(), 2U);
  EXPECT_EQ(st->jobs[0].pid, 100);
  EXPECT_EQ(st->jobs[0].cpus, (std::vector<int>{1}));
  EXPECT_FALSE(st->jobs[0].stopped);
  EXPECT_TRUE(st->jobs[1].stopped);
}

TEST(RmStatus, ErrorsNameTheField) {
  auto st = qsub::parse_status(json::parse(R"({"ok": true, "jobs": []})"));
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message.find("'cpus'"), std::string::npos) << st.error().message;
  st = qsub::parse_status(json::parse(R"({"cpus": [0], "jobs": [{"pid": "x"}]})"));
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message.find("jobs[].pid"), std::string::npos) << st.error().message;
  st = qsub::parse_status(json::parse(R"({"cpus": [0, "a"], "jobs": []})"));
  ASSERT_FALSE(st.ok());
}

TEST(SummaryTable, MeansPerClassAndFailures) {
  cosched::results::Run run;
  auto job = [](std::int64_t id, const char* cls, double submit, double start, double end, int status) {
    cosched::results::JobRecord j;
    j.id = id;
    j.app = cls;
    j.app_class = cls;
    j.submit = submit;
    j.start = start;
    j.end = end;
    j.exit_status = status;
    return j;
  };
  run.jobs = {job(1, "a", 0, 0, 4, 0), job(2, "a", 1, 2, 4, 0), job(3, "b", 0, 1, 2, 3), job(4, "b", 5, -1, -1, -1)};
  std::string table = qsub::summary_table(run);
  EXPECT_NE(table.find("response (s)"), std::string::npos) << table;
  // a: responses 4 and 3 → 3.50; executions 4 and 2 → 3.00.
  EXPECT_NE(table.find("3.50"), std::string::npos) << table;
  EXPECT_NE(table.find("3.00"), std::string::npos) << table;
  // b: two jobs, both failed (one exited 3, one never ran); the means come from the one that ended.
  auto b = table.find("\nb ");
  ASSERT_NE(b, std::string::npos) << table;
  EXPECT_NE(table.find("2       2", b), std::string::npos) << table;
  EXPECT_NE(table.find("\nall "), std::string::npos) << table;
}
