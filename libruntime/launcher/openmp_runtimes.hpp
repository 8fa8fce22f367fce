// The OpenMP runtimes cosched knows by file name: which one a program loads decides how cosched-run
// launches it (elf_closure.cpp) and what libcosched says at exit when the program never registered
// (libruntime/exit/exit_report.cpp). Header-only: both sides include it, neither links the other.
#pragma once

#include <cstring>

namespace cosched::launcher {

enum class OmpRuntime {
  none,
  llvm,         // LLVM libomp: loads libcosched through OMPT
  gomp,         // GNU libgomp: no OMPT; cosched-run preloads libomp, which serves its GOMP_* entry points
  unsteerable,  // a runtime cosched does not drive: the program runs natively
};

struct KnownRuntime {
  const char* prefix;  // a file name starting with it (a soname, or a wheel's renamed copy "libgomp-ab12.so")
  OmpRuntime kind;
  const char* what;
};

// Intel's libiomp5 shares libomp's code base, but cosched's interposers and team control are tested only
// against LLVM libomp and libgomp; the others below implement OpenMP their own way (no OMPT tool interface
// cosched uses, or a different one).
inline constexpr KnownRuntime kKnownRuntimes[] = {
    {"libgomp.so", OmpRuntime::gomp, "GNU libgomp"},
    {"libgomp-", OmpRuntime::gomp, "GNU libgomp (a bundled copy)"},
    {"libomp.so", OmpRuntime::llvm, "LLVM libomp"},
    {"libiomp5", OmpRuntime::unsteerable, "Intel's OpenMP runtime"},
    {"libguide.so", OmpRuntime::unsteerable, "Intel's old OpenMP runtime"},
    {"libnvomp.so", OmpRuntime::unsteerable, "NVIDIA HPC SDK's OpenMP runtime"},
    {"libpgmp.so", OmpRuntime::unsteerable, "PGI's OpenMP runtime"},
    {"libxlsmp.so", OmpRuntime::unsteerable, "IBM XL's OpenMP runtime"},
    {"libmtsk.so", OmpRuntime::unsteerable, "Oracle Developer Studio's OpenMP runtime"},
    {"libcraymp.so", OmpRuntime::unsteerable, "Cray's OpenMP runtime"},
};

// The known runtime a file name (without directory) names, or nullptr.
inline const KnownRuntime* known_runtime(const char* file_name) {
  for (const auto& r : kKnownRuntimes) {
    if (std::strncmp(file_name, r.prefix, std::strlen(r.prefix)) == 0) return &r;
  }
  return nullptr;
}

}  // namespace cosched::launcher
