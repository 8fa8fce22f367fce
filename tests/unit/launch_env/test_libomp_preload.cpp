// cosched-run preloads LLVM libomp in front of every program that does not bring libomp itself, so that a
// libgomp loaded later (python3 importing scikit-learn, a script's gcc programs, a dlopen'd plugin) resolves
// to libomp; --no-gomp (LaunchSettings::no_gomp) opts out.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "launch_env.hpp"

namespace cosched::launcher {
namespace {

const LibraryPaths kLibs{"/opt/cosched/lib/libcosched.so.1", "/opt/cosched/lib/libcosched_wrap.so.1",
                         "/opt/cosched/lib/libcosched_mpi.so.1", "/usr/lib/llvm-14/lib/libomp.so.5"};

struct Planned {
  LaunchPlan plan;
  std::map<std::string, std::string> env;  // the last value set for each name
};

Planned plan_for(const std::string& program, bool no_gomp, std::map<std::string, std::string> environment = {}) {
  LaunchSettings settings;
  settings.socket = "/tmp/none.sock";
  settings.no_gomp = no_gomp;
  Planned p;
  p.plan = plan_launch(program, settings, kLibs, [&](const char* name, bool& present) {
    auto it = environment.find(name);
    present = it != environment.end();
    return present ? it->second : std::string();
  });
  for (const auto& e : p.plan.env) p.env[e.name] = e.value;
  return p;
}

TEST(LibompPreload, AProgramThatCannotBeReadGetsLibompBehindTheWrappers) {
  auto p = plan_for("/nonexistent/program", false);
  EXPECT_TRUE(p.plan.gomp);
  // The wrappers forward to the runtime, so they come first.
  EXPECT_EQ(p.env["LD_PRELOAD"], "/opt/cosched/lib/libcosched_wrap.so.1:/usr/lib/llvm-14/lib/libomp.so.5");
  EXPECT_EQ(p.env["COSCHED_GOMP"], "1");
  EXPECT_NE(p.plan.elf_note.find("(libomp is preloaded)"), std::string::npos) << p.plan.elf_note;
}

TEST(LibompPreload, AProgramWithoutOpenMPIsPreloadedForWhatItLoadsLater) {
  // /bin/sh links no OpenMP runtime; what it runs or loads may.
  auto p = plan_for("/bin/sh", false);
  EXPECT_TRUE(p.plan.gomp);
  EXPECT_NE(p.env["LD_PRELOAD"].find("/usr/lib/llvm-14/lib/libomp.so.5"), std::string::npos);
  ASSERT_FALSE(p.plan.notes.empty());
  EXPECT_NE(p.plan.notes.back().find("libraries it loads; libomp is preloaded, so that a libgomp it loads later"),
            std::string::npos)
      << p.plan.notes.back();
}

TEST(LibompPreload, NoGompLeavesTheRuntimeAlone) {
  auto p = plan_for("/bin/sh", true);
  EXPECT_FALSE(p.plan.gomp);
  EXPECT_EQ(p.env["LD_PRELOAD"], "/opt/cosched/lib/libcosched_wrap.so.1");
  EXPECT_EQ(p.env.count("COSCHED_GOMP"), 0u);
  ASSERT_FALSE(p.plan.notes.empty());
  EXPECT_NE(p.plan.notes.back().find("; libomp is not preloaded (--no-gomp)"), std::string::npos)
      << p.plan.notes.back();
}

TEST(LibompPreload, TheUsersPreloadsStayBehindOurs) {
  auto p = plan_for("/nonexistent/program", false, {{"LD_PRELOAD", "/opt/prof/libprof.so"}});
  EXPECT_EQ(p.env["LD_PRELOAD"],
            "/opt/cosched/lib/libcosched_wrap.so.1:/usr/lib/llvm-14/lib/libomp.so.5:/opt/prof/libprof.so");
}

TEST(LibompPreload, CoschedRunInsideCoschedRunPreloadsEachLibraryOnce) {
  // A script run under cosched-run that calls cosched-run: the inner one sees the outer one's LD_PRELOAD.
  const std::string outer = "/opt/cosched/lib/libcosched_wrap.so.1:/usr/lib/llvm-14/lib/libomp.so.5";
  auto p = plan_for("/nonexistent/program", false, {{"LD_PRELOAD", outer}});
  EXPECT_EQ(p.env["LD_PRELOAD"], outer);
}

}  // namespace
}  // namespace cosched::launcher
