// cosched-run and the Slurm plugin keep the user's OMPT tools (OMP_TOOL_LIBRARIES) as libcosched's clients
// (COSCHED_CLIENT_TOOL_LIBRARIES) when libcosched takes OMP_TOOL_LIBRARIES.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "launch_env.hpp"

namespace cosched::launcher {
namespace {

struct Planned {
  LaunchPlan plan;
  std::map<std::string, std::string> env;  // the last value set for each name
};

// A path that is not an ELF file: the plan treats it as a clang/libomp program that does not link libcosched.
Planned plan_with(std::map<std::string, std::string> environment) {
  LaunchSettings settings;
  settings.socket = "/tmp/none.sock";
  LibraryPaths libs{"/opt/cosched/lib/libcosched.so.1", "/opt/cosched/lib/libcosched_wrap.so.1",
                    "/opt/cosched/lib/libcosched_mpi.so.1", "/usr/lib/llvm-14/lib/libomp.so.5"};
  Planned p;
  p.plan = plan_launch("/nonexistent/program", settings, libs, [&](const char* name, bool& present) {
    auto it = environment.find(name);
    present = it != environment.end();
    return present ? it->second : std::string();
  });
  for (const auto& e : p.plan.env) p.env[e.name] = e.value;
  return p;
}

TEST(ToolLibraries, NoUserToolMeansNoClient) {
  auto p = plan_with({});
  EXPECT_EQ(p.env["OMP_TOOL_LIBRARIES"], "/opt/cosched/lib/libcosched.so.1");
  EXPECT_EQ(p.env.count("COSCHED_CLIENT_TOOL_LIBRARIES"), 0u);
  EXPECT_TRUE(p.plan.client_tools.empty());
  EXPECT_TRUE(p.plan.warnings.empty());
}

TEST(ToolLibraries, UserToolsBecomeClients) {
  auto p = plan_with({{"OMP_TOOL_LIBRARIES", "/opt/prof/libprof.so:libother.so"}});
  EXPECT_EQ(p.env["OMP_TOOL_LIBRARIES"], "/opt/cosched/lib/libcosched.so.1");
  EXPECT_EQ(p.env["COSCHED_CLIENT_TOOL_LIBRARIES"], "/opt/prof/libprof.so:libother.so");
  EXPECT_EQ(p.plan.client_tools, "/opt/prof/libprof.so:libother.so");
  EXPECT_TRUE(p.plan.warnings.empty());
}

TEST(ToolLibraries, CoschedRunInsideCoschedRunKeepsTheClients) {
  // The environment of a program already launched by cosched-run (a batch script run through it, say).
  auto p = plan_with({{"OMP_TOOL_LIBRARIES", "/opt/cosched/lib/libcosched.so.1"},
                      {"COSCHED_CLIENT_TOOL_LIBRARIES", "/opt/prof/libprof.so"}});
  EXPECT_EQ(p.env["OMP_TOOL_LIBRARIES"], "/opt/cosched/lib/libcosched.so.1");
  EXPECT_EQ(p.env.count("COSCHED_CLIENT_TOOL_LIBRARIES"), 0u);  // inherited as it is
  EXPECT_EQ(p.plan.client_tools, "/opt/prof/libprof.so");
  EXPECT_TRUE(p.plan.warnings.empty());
}

TEST(ToolLibraries, ExplicitClientListWinsAndTheDroppedToolIsNamed) {
  auto p = plan_with({{"OMP_TOOL_LIBRARIES", "/opt/a/liba.so"}, {"COSCHED_CLIENT_TOOL_LIBRARIES", "/opt/b/libb.so"}});
  EXPECT_EQ(p.env["OMP_TOOL_LIBRARIES"], "/opt/cosched/lib/libcosched.so.1");
  EXPECT_EQ(p.plan.client_tools, "/opt/b/libb.so");
  ASSERT_EQ(p.plan.warnings.size(), 1u);
  EXPECT_NE(p.plan.warnings[0].find("OMP_TOOL_LIBRARIES=/opt/a/liba.so is not loaded"), std::string::npos)
      << p.plan.warnings[0];
}

TEST(ToolLibraries, EmptyUserListIsNoClient) {
  auto p = plan_with({{"OMP_TOOL_LIBRARIES", ""}});
  EXPECT_EQ(p.env.count("COSCHED_CLIENT_TOOL_LIBRARIES"), 0u);
  EXPECT_TRUE(p.plan.client_tools.empty());
}

}  // namespace
}  // namespace cosched::launcher
