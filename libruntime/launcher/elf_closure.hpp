// The libraries a program will load, found the way glibc's dynamic loader finds them, and the OpenMP
// runtime among them: cosched-run decides from the whole program, not only the executable's own
// DT_NEEDED (GROMACS gets libgomp through libgromacs.so, most packaged codes through a library).
//
// Search order for a DT_NEEDED name without '/', requested by object L (glibc's elf/dl-load.c):
//   1. if L has no DT_RUNPATH: the DT_RPATH of L, then of the object that loaded L, and so on up to the
//      executable (an object with DT_RUNPATH has its DT_RPATH ignored);
//   2. LD_LIBRARY_PATH;  3. L's own DT_RUNPATH (never inherited);
//   4. the loader's cache (ld_cache.hpp) and 5. the default directories, both skipped when L was linked
//      with -z nodefaultlib (DF_1_NODEFLIB).
// $ORIGIN (and ${ORIGIN}) is the directory of the object holding the path (the executable's after
// symlinks); $PLATFORM is the machine's AT_PLATFORM; an element with $LIB is dropped (its value is a
// glibc build choice). A file of another ELF class or machine is passed over, as the loader does.
// Not modelled: glibc-hwcaps and legacy hwcap subdirectories (the same soname, built for a newer CPU).
#pragma once

#include <string>
#include <vector>

#include "cosched/error.hpp"
#include "ld_cache.hpp"
#include "openmp_runtimes.hpp"

namespace cosched::launcher {

// What the loader reads from an object's dynamic section.
struct DynamicInfo {
  std::vector<std::string> needed;
  std::string soname;
  std::string rpath;    // DT_RPATH, empty when absent or when DT_RUNPATH is present (the loader ignores it)
  std::string runpath;  // DT_RUNPATH
  bool nodeflib = false;  // DF_1_NODEFLIB: no cache, no default directories for its dependencies
};

// Reads the dynamic section of a 64-bit ELF object for this machine (mmap: only the pages read are paged in).
Result<DynamicInfo> read_dynamic(const std::string& path);

struct LoadedObject {
  std::string name;  // the DT_NEEDED entry that loaded it (the program: its path)
  std::string path;  // the file found
  int loader = -1;   // index of the object whose DT_NEEDED loaded it first (-1: the program)
  std::string via;   // how it was found: "RUNPATH of libx.so", "LD_LIBRARY_PATH", "ld.so.cache", …
  DynamicInfo info;
};

struct Closure {
  std::vector<LoadedObject> objects;  // [0] is the program, then breadth-first, as the loader maps them
  std::vector<std::string> missing;   // "libfoo.so.1 (needed by libbar.so)": the loader would fail to start
};

struct SearchEnv {
  std::string ld_library_path;
  std::string ld_preload;                 // the user's LD_PRELOAD: those libraries load too
  const LdCache* cache = nullptr;         // none: skip the cache step
  std::vector<std::string> default_dirs;  // default_search_dirs() outside tests
};

// The loader's built-in directories (multiarch first, then lib64 layouts, then /lib and /usr/lib).
std::vector<std::string> default_search_dirs();

Result<Closure> dependency_closure(const std::string& program, const SearchEnv& env);

// "prog → libgromacs.so.7 → libgomp.so.1": how object `index` came to be loaded.
std::string load_chain(const Closure& closure, int index);

// The OpenMP runtime a program will run with, decided from its closure.
struct RuntimeVerdict {
  OmpRuntime kind = OmpRuntime::none;  // unsteerable beats gomp beats llvm
  int index = -1;                      // the object in the closure that decided it
  const char* what = "";
};

RuntimeVerdict openmp_runtime(const Closure& closure);

}  // namespace cosched::launcher
