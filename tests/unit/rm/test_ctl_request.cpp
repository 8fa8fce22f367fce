// Control requests are type-checked before the daemon acts: every wrongly typed field is one error naming
// the field. `{"cmd":"policy","name":123}` used to abort the RM with an uncaught nlohmann type_error.
#include <gtest/gtest.h>

#include <string>

#include "rm/daemon/ctl_request.hpp"

using namespace cosched;
using namespace cosched::rm;

namespace {
std::string error_of(const std::string& payload) {
  auto r = parse_ctl_request(payload);
  EXPECT_FALSE(r.ok()) << payload;
  return r.ok() ? std::string() : r.error().message;
}
}  // namespace

TEST(CtlRequest, PolicyNameOfAnyWrongTypeIsAnError) {
  for (const char* name : {"123", "null", "[1,2]", "true", "{}", "\"\"", "1.5"}) {
    std::string payload = std::string(R"({"cmd":"policy","name":)") + name + "}";
    EXPECT_NE(error_of(payload).find("'name'"), std::string::npos) << payload;
  }
  EXPECT_NE(error_of(R"({"cmd":"policy"})").find("'name'"), std::string::npos);
}

TEST(CtlRequest, EveryFieldIsTypeChecked) {
  EXPECT_NE(error_of("[1]").find("not a JSON object"), std::string::npos);
  EXPECT_NE(error_of("{not json").find("not a JSON object"), std::string::npos);
  EXPECT_NE(error_of(R"({"cmd":3})").find("'cmd'"), std::string::npos);
  EXPECT_NE(error_of(R"({"cmd":"why","job":"1"})").find("'job'"), std::string::npos);
  EXPECT_NE(error_of(R"({"cmd":"why","job":1.5})").find("'job'"), std::string::npos);
  EXPECT_NE(error_of(R"({"cmd":"why","job":18446744073709551615})").find("'job'"), std::string::npos);
  EXPECT_NE(error_of(R"({"cmd":"decisions","since":"0"})").find("'since'"), std::string::npos);
  EXPECT_NE(error_of(R"({"cmd":"set","params":[1]})").find("'params'"), std::string::npos);
  EXPECT_NE(error_of(R"({"cmd":"set"})").find("'params'"), std::string::npos);
  EXPECT_NE(error_of(R"({"cmd":"set","params":{"step":null}})").find("'step'"), std::string::npos);
  EXPECT_NE(error_of(R"({"cmd":"policy","name":"pdpa","params":{"a":{"b":1}}})").find("'a'"), std::string::npos);
  EXPECT_NE(error_of(R"({"cmd":"may_start","queued":-1})").find("'queued'"), std::string::npos);
  for (const char* id : {"-1", "\"7\"", "1.5", "4294967296", "18446744073709551615"}) {
    EXPECT_NE(error_of(std::string(R"({"cmd":"expect","slurm_job_id":)") + id + "}").find("'slurm_job_id'"),
              std::string::npos) << id;
  }
  auto expect = parse_ctl_request(R"({"cmd":"expect","slurm_job_id":4294967295})");
  ASSERT_TRUE(expect.ok());
  EXPECT_EQ(expect->slurm_job_id, 4294967295LL);
  EXPECT_NE(error_of(R"({"cmd":"may_start","queued":"3"})").find("'queued'"), std::string::npos);
  EXPECT_NE(error_of(R"({"cmd":"may_start","queued":2.5})").find("'queued'"), std::string::npos);
  EXPECT_NE(error_of(R"({"cmd":"may_start","starting":-1})").find("'starting'"), std::string::npos);
  EXPECT_NE(error_of(R"({"cmd":"may_start","starting":"1"})").find("'starting'"), std::string::npos);
  EXPECT_NE(error_of(R"({"cmd":"may_start","queued":18446744073709551615})").find("'queued'"), std::string::npos);
  EXPECT_NE(error_of(R"({"cmd":"explode"})").find("unknown command 'explode'"), std::string::npos);
}

TEST(CtlRequest, WellFormedRequestsAreTyped) {
  auto why = parse_ctl_request(R"({"cmd":"why","job":7})");
  ASSERT_TRUE(why.ok());
  EXPECT_EQ(why->cmd, CtlCmd::why);
  EXPECT_EQ(why->job, 7);

  auto set = parse_ctl_request(R"({"cmd":"set","params":{"step":2,"high_eff":"0.95"}})");
  ASSERT_TRUE(set.ok()) << set.error().message;
  EXPECT_EQ(set->cmd, CtlCmd::set);
  ASSERT_EQ(set->params.size(), 2u);
  EXPECT_EQ(set->params[0], (std::pair<std::string, std::string>{"high_eff", "0.95"}));
  EXPECT_EQ(set->params[1], (std::pair<std::string, std::string>{"step", "2"}));

  auto pol = parse_ctl_request(R"({"cmd":"policy","name":"pdpa","extra":[null]})");  // unknown fields: ignored
  ASSERT_TRUE(pol.ok());
  EXPECT_EQ(pol->name, "pdpa");
  EXPECT_TRUE(pol->params.empty());

  auto may = parse_ctl_request(R"({"cmd":"may_start","queued":3})");
  ASSERT_TRUE(may.ok());
  EXPECT_EQ(may->queued, 3);
  EXPECT_EQ(parse_ctl_request(R"({"cmd":"may_start"})")->queued, -1);
  EXPECT_EQ(parse_ctl_request(R"({"cmd":"may_start"})")->starting, -1);
  EXPECT_EQ(parse_ctl_request(R"({"cmd":"may_start","queued":3,"starting":2})")->starting, 2);

  auto dec = parse_ctl_request(R"({"cmd":"decisions","since":2.5})");
  ASSERT_TRUE(dec.ok());
  EXPECT_DOUBLE_EQ(dec->since, 2.5);
  EXPECT_DOUBLE_EQ(parse_ctl_request(R"({"cmd":"decisions"})")->since, -1);
}

TEST(CtlRequest, DeepNestingIsJustAnError) {
  std::string deep(30000, '[');
  EXPECT_FALSE(parse_ctl_request(deep).ok());
  std::string obj = R"({"cmd":"status","x":)" + std::string(30000, '[') + std::string(30000, ']') + "}";
  EXPECT_TRUE(parse_ctl_request(obj).ok());
}
