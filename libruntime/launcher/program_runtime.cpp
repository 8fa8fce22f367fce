#include "program_runtime.hpp"

#include <fcntl.h>
#include <unistd.h>

#include "elf_closure.hpp"
#include "ld_cache.hpp"

namespace cosched::launcher {

namespace {

bool is_script(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return false;
  char head[2] = {0, 0};
  const bool script = ::read(fd, head, 2) == 2 && head[0] == '#' && head[1] == '!';
  ::close(fd);
  return script;
}

std::string found_line(const Closure& c, int i) {
  const auto& o = c.objects[static_cast<std::size_t>(i)];
  return o.path + ", found through " + o.via + "; loaded by " + load_chain(c, i);
}

}  // namespace

std::string unreadable_program_note(const std::string& program, const std::string& why, bool libomp_preloaded) {
  const char* preload = libomp_preloaded ? "libomp is preloaded, so that those that use libgomp (gcc builds) are managed"
                                         : "libomp is not preloaded (--no-gomp): those that use libgomp run natively";
  if (is_script(program)) {
    return program + " is a script (#!): the libraries of the programs it runs cannot be read; " + preload;
  }
  return why + " (" + (libomp_preloaded ? "libomp is preloaded" : "libomp is not preloaded: --no-gomp") + ")";
}

ProgramRuntime program_runtime(const std::string& program, const std::string& ld_library_path,
                               const std::string& ld_preload) {
  ProgramRuntime out;
  auto cache = LdCache::load("/etc/ld.so.cache");
  SearchEnv env;
  env.ld_library_path = ld_library_path;
  env.ld_preload = ld_preload;
  env.default_dirs = default_search_dirs();
  if (cache.ok()) {
    env.cache = &*cache;
  } else {
    out.notes.push_back(cache.error().message + "; searching without the loader's cache, as the loader does");
  }
  auto closure = dependency_closure(program, env);
  if (!closure.ok()) return out;  // not ELF: the caller says so (unreadable_program_note)
  out.readable = true;
  for (const auto& m : closure->missing) out.notes.push_back("not found, as the loader would search: " + m);
  const RuntimeVerdict v = openmp_runtime(*closure);
  out.kind = v.kind;
  const std::size_t libs = closure->objects.size() - 1;
  switch (v.kind) {
    case OmpRuntime::none:
      out.notes.push_back("no OpenMP runtime among the " + std::to_string(libs) + " libraries it loads");
      break;
    case OmpRuntime::llvm:
      out.notes.push_back(std::string(v.what) + ": " + found_line(*closure, v.index));
      break;
    case OmpRuntime::gomp:
      out.notes.push_back(std::string(v.what) + ": " + found_line(*closure, v.index));
      break;
    case OmpRuntime::unsteerable: {
      const auto& o = closure->objects[static_cast<std::size_t>(v.index)];
      out.notes.push_back(std::string(v.what) + ": " + found_line(*closure, v.index));
      out.warning = program + " loads " + o.name + " (" + v.what + ", through " + load_chain(*closure, v.index) +
                    "), which cosched cannot steer: it runs natively";
      break;
    }
  }
  return out;
}

}  // namespace cosched::launcher
