// The loader model: each test builds a few tiny shared libraries with the C compiler, lays them out in
// directories, and checks which file the walk finds for each name, and how (the order glibc's ld.so uses).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "elf_closure.hpp"

namespace fs = std::filesystem;
using namespace cosched::launcher;

namespace {

class ClosureTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/cosched-closure-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    std::ofstream(root_ + "/empty.c") << "int cosched_fixture_symbol(void) { return 0; }\n";
    std::ofstream(root_ + "/main.c") << "int main(void) { return 0; }\n";
  }
  void TearDown() override { fs::remove_all(root_); }

  std::string dir(const std::string& name) {
    fs::create_directories(root_ + "/" + name);
    return root_ + "/" + name;
  }

  // Builds `path` (a shared library with soname = its file name, or an executable) that needs `needed`
  // (paths of libraries built before), with extra linker flags.
  void build(const std::string& path, const std::vector<std::string>& needed, const std::string& flags,
             bool executable = false) {
    std::string cmd = std::string(COSCHED_TEST_CC) + " -o " + path + " " +
                      (executable ? root_ + "/main.c" : "-shared -fPIC -Wl,-soname," + fs::path(path).filename().string() +
                                                            " " + root_ + "/empty.c") +
                      " -Wl,--no-as-needed";
    for (const auto& n : needed) cmd += " " + n;
    cmd += " " + flags + " 2>/dev/null";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  }

  Closure walk(const std::string& program, SearchEnv env = {}) {
    auto c = dependency_closure(program, env);
    EXPECT_TRUE(c.ok()) << (c.ok() ? "" : c.error().message);
    return c.ok() ? *c : Closure{};
  }

  static const LoadedObject* object(const Closure& c, const std::string& name) {
    for (const auto& o : c.objects) {
      if (o.name == name) return &o;
    }
    return nullptr;
  }

  std::string root_;
};

TEST_F(ClosureTest, RunpathWithOriginFindsALibraryOfALibrary) {
  // prog → liba.so (RUNPATH $ORIGIN/a) → libgomp.so.1 (RUNPATH of liba: $ORIGIN/../g): libgomp only
  // through a library, as GROMACS has it.
  const std::string a = dir("a"), g = dir("g");
  build(g + "/libgomp.so.1", {}, "");
  build(a + "/liba.so", {g + "/libgomp.so.1"}, "-Wl,--enable-new-dtags,-rpath,'$ORIGIN/../g'");
  build(root_ + "/prog", {a + "/liba.so"}, "-Wl,--enable-new-dtags,-rpath,'$ORIGIN/a'", true);
  const Closure c = walk(root_ + "/prog");
  const auto* gomp = object(c, "libgomp.so.1");
  ASSERT_NE(gomp, nullptr);
  EXPECT_EQ(gomp->path, a + "/../g/libgomp.so.1");
  EXPECT_EQ(gomp->via, "RUNPATH of liba.so");
  const RuntimeVerdict v = openmp_runtime(c);
  EXPECT_EQ(v.kind, OmpRuntime::gomp);
  EXPECT_EQ(load_chain(c, v.index), "prog → liba.so → libgomp.so.1");
}

TEST_F(ClosureTest, RunpathIsNotInheritedButRpathIs) {
  const std::string a = dir("a"), c_dir = dir("c");
  build(c_dir + "/libc1.so", {}, "");
  build(a + "/liba.so", {c_dir + "/libc1.so"}, "");  // no path of its own
  // The executable's RUNPATH serves only its own DT_NEEDED: libc1.so (needed by liba.so) is not found.
  build(root_ + "/prog", {a + "/liba.so"}, "-Wl,--enable-new-dtags,-rpath," + a + ":" + c_dir, true);
  Closure c = walk(root_ + "/prog");
  EXPECT_EQ(object(c, "libc1.so"), nullptr);
  EXPECT_EQ(c.missing.size(), 2U);  // libc.so.6 too: these walks search no system directory
  EXPECT_NE(std::find(c.missing.begin(), c.missing.end(), "libc1.so (needed by liba.so)"), c.missing.end());
  // The same path as DT_RPATH is searched for the libraries' libraries too.
  build(root_ + "/prog", {a + "/liba.so"}, "-Wl,--disable-new-dtags,-rpath," + a + ":" + c_dir, true);
  c = walk(root_ + "/prog");
  ASSERT_NE(object(c, "libc1.so"), nullptr);
  EXPECT_EQ(object(c, "libc1.so")->via, "RPATH of prog");
  EXPECT_EQ(c.missing, std::vector<std::string>{"libc.so.6 (needed by prog)"});
}

TEST_F(ClosureTest, ALibraryWithRunpathIgnoresEveryRpath) {
  const std::string a = dir("a"), c_dir = dir("c"), none = dir("none");
  build(c_dir + "/libc1.so", {}, "");
  build(a + "/liba.so", {c_dir + "/libc1.so"}, "-Wl,--enable-new-dtags,-rpath," + none);
  build(root_ + "/prog", {a + "/liba.so"}, "-Wl,--disable-new-dtags,-rpath," + a + ":" + c_dir, true);
  const Closure c = walk(root_ + "/prog");
  EXPECT_EQ(object(c, "libc1.so"), nullptr);  // liba's RUNPATH turns off the executable's RPATH for it
}

TEST_F(ClosureTest, SearchOrderRpathThenLdLibraryPathThenRunpath) {
  const std::string r = dir("r"), l = dir("l"), u = dir("u");
  for (const auto& d : {r, l, u}) build(d + "/libx.so", {}, "");
  build(root_ + "/prog_rpath", {r + "/libx.so"}, "-Wl,--disable-new-dtags,-rpath," + r, true);
  build(root_ + "/prog_runpath", {u + "/libx.so"}, "-Wl,--enable-new-dtags,-rpath," + u, true);
  SearchEnv env;
  env.ld_library_path = l;
  EXPECT_EQ(object(walk(root_ + "/prog_rpath", env), "libx.so")->path, r + "/libx.so");
  const Closure c = walk(root_ + "/prog_runpath", env);
  EXPECT_EQ(object(c, "libx.so")->path, l + "/libx.so");
  EXPECT_EQ(object(c, "libx.so")->via, "LD_LIBRARY_PATH");
  EXPECT_EQ(object(walk(root_ + "/prog_runpath"), "libx.so")->path, u + "/libx.so");
}

TEST_F(ClosureTest, CacheThenDefaultDirectoriesAndNodeflib) {
  const std::string d = dir("default"), a = dir("a");
  build(d + "/libdef.so", {}, "");
  build(a + "/liba.so", {d + "/libdef.so"}, "");
  build(a + "/liba_nodeflib.so", {d + "/libdef.so"}, "-Wl,-z,nodefaultlib");
  build(root_ + "/prog", {a + "/liba.so"}, "-Wl,-rpath," + a, true);
  build(root_ + "/prog_nodeflib", {a + "/liba_nodeflib.so"}, "-Wl,-rpath," + a, true);
  SearchEnv env;
  env.default_dirs = {dir("elsewhere"), d};
  const Closure c = walk(root_ + "/prog", env);
  ASSERT_NE(object(c, "libdef.so"), nullptr);
  EXPECT_EQ(object(c, "libdef.so")->via, "default directory " + d);
  EXPECT_EQ(object(walk(root_ + "/prog_nodeflib", env), "libdef.so"), nullptr);
}

TEST_F(ClosureTest, AFileThatIsNotALoadableObjectIsPassedOver) {
  const std::string bad = dir("bad"), good = dir("good");
  std::ofstream(bad + "/libx.so") << "INPUT(-lfoo)\n";  // a linker script, as libc.so is
  build(good + "/libx.so", {}, "");
  build(root_ + "/prog", {good + "/libx.so"}, "-Wl,--enable-new-dtags,-rpath," + bad + ":" + good, true);
  EXPECT_EQ(object(walk(root_ + "/prog"), "libx.so")->path, good + "/libx.so");
}

TEST_F(ClosureTest, OriginIsTheDirectoryOfTheObjectHoldingThePath) {
  const std::string a = dir("lib/a"), b = dir("lib/b");
  build(b + "/libb.so", {}, "");
  build(a + "/liba.so", {b + "/libb.so"}, "-Wl,--enable-new-dtags,-rpath,'${ORIGIN}/../b'");
  build(root_ + "/prog", {a + "/liba.so"}, "-Wl,--enable-new-dtags,-rpath,'$ORIGIN/lib/a'", true);
  // Run through a symlink elsewhere: the executable's $ORIGIN follows it to the real file.
  const std::string elsewhere = dir("bin");
  fs::create_symlink(root_ + "/prog", elsewhere + "/prog");
  const Closure c = walk(elsewhere + "/prog");
  ASSERT_NE(object(c, "libb.so"), nullptr);
  EXPECT_EQ(object(c, "libb.so")->path, a + "/../b/libb.so");
}

TEST_F(ClosureTest, UnsteerableRuntimeWinsAndEachLibraryLoadsOnce) {
  const std::string d = dir("d");
  build(d + "/libgomp.so.1", {}, "");
  build(d + "/libiomp5.so", {}, "");
  build(d + "/libone.so", {d + "/libgomp.so.1"}, "-Wl,-rpath," + d);
  build(d + "/libtwo.so", {d + "/libgomp.so.1", d + "/libiomp5.so"}, "-Wl,-rpath," + d);
  build(root_ + "/prog", {d + "/libone.so", d + "/libtwo.so"}, "-Wl,-rpath," + d, true);
  const Closure c = walk(root_ + "/prog");
  int gomps = 0;
  for (const auto& o : c.objects) gomps += o.name == "libgomp.so.1";
  EXPECT_EQ(gomps, 1);
  const RuntimeVerdict v = openmp_runtime(c);
  EXPECT_EQ(v.kind, OmpRuntime::unsteerable);
  EXPECT_EQ(load_chain(c, v.index), "prog → libtwo.so → libiomp5.so");
}

TEST_F(ClosureTest, UserPreloadsAreLoadedToo) {
  const std::string d = dir("d");
  build(d + "/libgomp.so.1", {}, "");
  build(root_ + "/prog", {}, "", true);
  SearchEnv env;
  env.ld_preload = d + "/libgomp.so.1";
  EXPECT_EQ(openmp_runtime(walk(root_ + "/prog", env)).kind, OmpRuntime::gomp);
  EXPECT_EQ(openmp_runtime(walk(root_ + "/prog")).kind, OmpRuntime::none);
}

TEST_F(ClosureTest, NotAnElfFileIsAnError) {
  std::ofstream(root_ + "/script") << "#!/bin/sh\nexit 0\n";
  auto c = dependency_closure(root_ + "/script", {});
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().message, root_ + "/script: not an ELF file");
}

TEST(KnownRuntimes, NamesAndBundledCopies) {
  EXPECT_EQ(known_runtime("libgomp.so.1")->kind, OmpRuntime::gomp);
  EXPECT_EQ(known_runtime("libgomp-a34b3233.so.1.0.0")->kind, OmpRuntime::gomp);  // a Python wheel's copy
  EXPECT_EQ(known_runtime("libomp.so.5")->kind, OmpRuntime::llvm);
  EXPECT_EQ(known_runtime("libiomp5.so")->kind, OmpRuntime::unsteerable);
  EXPECT_EQ(known_runtime("libgomplike.so"), nullptr);
  EXPECT_EQ(known_runtime("libm.so.6"), nullptr);
}

}  // namespace
