#include "elf_closure.hpp"
#include "mapped_file.hpp"

#include <elf.h>
#include <fcntl.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cerrno>
#include <cstring>
#include <deque>
#include <set>
#include <utility>

namespace cosched::launcher {

namespace {

#if defined(__x86_64__)
constexpr int kMachine = EM_X86_64;
#elif defined(__aarch64__)
constexpr int kMachine = EM_AARCH64;
#else
constexpr int kMachine = -1;  // any
#endif


// Splits a colon-separated path list (LD_LIBRARY_PATH also allows ';'); an empty element is the current
// directory, as the loader reads it.
std::vector<std::string> split_path(const std::string& list, const char* separators) {
  std::vector<std::string> out;
  if (list.empty()) return out;
  std::size_t pos = 0;
  for (;;) {
    const std::size_t end = list.find_first_of(separators, pos);
    std::string dir = list.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
    out.push_back(dir.empty() ? "." : dir);
    if (end == std::string::npos) break;
    pos = end + 1;
  }
  return out;
}

// Expands the loader's dynamic string tokens in one search-path element; false: the loader drops it.
bool expand_tokens(std::string& dir, const std::string& origin) {
  const char* platform = reinterpret_cast<const char*>(::getauxval(AT_PLATFORM));
  const std::pair<const char*, std::string> tokens[] = {
      {"${ORIGIN}", origin}, {"$ORIGIN", origin},
      {"${PLATFORM}", platform != nullptr ? platform : ""}, {"$PLATFORM", platform != nullptr ? platform : ""}};
  for (const auto& [token, value] : tokens) {
    for (auto at = dir.find(token); at != std::string::npos; at = dir.find(token, at + value.size())) {
      if (value.empty()) return false;
      dir.replace(at, std::strlen(token), value);
    }
  }
  return dir.find('$') == std::string::npos;  // $LIB, or a token we do not know
}

std::string dirname_of(const std::string& path) {
  const auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string basename_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// What identifies a file for the loader: the same inode loaded under two names is one object.
std::pair<dev_t, ino_t> file_id(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return {0, 0};
  return {st.st_dev, st.st_ino};
}

class Walker {
 public:
  explicit Walker(const SearchEnv& env) : env_(env) {}

  Status run(const std::string& program, Closure& out) {
    auto info = read_dynamic(program);
    if (!info.ok()) return info.error();
    LoadedObject main;
    main.name = program;
    main.path = program;
    main.via = "the program";
    main.info = std::move(*info);
    // The executable's $ORIGIN is taken after symlinks (the kernel's /proc/self/exe); a library's is the
    // directory it was found in.
    char real[PATH_MAX];
    add(out, std::move(main), dirname_of(::realpath(program.c_str(), real) != nullptr ? real : program));
    // The user's preloads load before the program's dependencies, searched as the program's own.
    for (const auto& name : split_path(env_.ld_preload, ": ")) {
      if (name != ".") need(out, name, 0);
    }
    for (std::size_t i = 0; i < out.objects.size(); ++i) {  // breadth-first: the loader's order
      const auto needed = out.objects[i].info.needed;
      for (const auto& name : needed) need(out, name, static_cast<int>(i));
    }
    return {};
  }

 private:
  void add(Closure& out, LoadedObject obj, std::string origin) {
    ids_.insert(file_id(obj.path));
    names_.insert(obj.name);
    if (!obj.info.soname.empty()) names_.insert(obj.info.soname);
    origin_.push_back(std::move(origin));
    out.objects.push_back(std::move(obj));
  }

  // Object `by` needs `name`: find it unless it is loaded already.
  void need(Closure& out, const std::string& name, int by) {
    if (names_.count(name) != 0) return;
    std::string via;
    DynamicInfo info;
    std::string path = find(out, name, by, via, info);
    if (path.empty()) {
      out.missing.push_back(name + " (needed by " + basename_of(out.objects[static_cast<std::size_t>(by)].path) + ")");
      names_.insert(name);  // say it once
      return;
    }
    if (ids_.count(file_id(path)) != 0) {  // the same file under another name
      names_.insert(name);
      return;
    }
    LoadedObject obj;
    obj.name = name;
    obj.path = std::move(path);
    obj.loader = by;
    obj.via = std::move(via);
    obj.info = std::move(info);
    std::string origin = dirname_of(obj.path);
    add(out, std::move(obj), std::move(origin));
  }

  // Whether `path` is a loadable object for us; its dynamic section in `info`.
  static bool usable(const std::string& path, DynamicInfo& info) {
    auto r = read_dynamic(path);
    if (!r.ok()) return false;
    info = std::move(*r);
    return true;
  }

  // `separators`: LD_LIBRARY_PATH may also use ';', RPATH and RUNPATH only ':'.
  static bool search_dirs(const std::string& list, const char* separators, const std::string& origin,
                          const std::string& name, std::string& found, DynamicInfo& info) {
    for (auto dir : split_path(list, separators)) {
      if (!expand_tokens(dir, origin)) continue;
      std::string cand = dir + "/" + name;
      if (usable(cand, info)) {
        found = std::move(cand);
        return true;
      }
    }
    return false;
  }

  std::string find(const Closure& out, const std::string& name, int by, std::string& via, DynamicInfo& info) {
    const auto& objs = out.objects;
    if (name.find('/') != std::string::npos) {  // a path: used as it is, relative to the current directory
      via = "the path in DT_NEEDED";
      return usable(name, info) ? name : std::string();
    }
    std::string found;
    const LoadedObject& requester = objs[static_cast<std::size_t>(by)];
    if (requester.info.runpath.empty()) {
      for (int l = by; l >= 0; l = objs[static_cast<std::size_t>(l)].loader) {
        const auto& o = objs[static_cast<std::size_t>(l)];
        if (!o.info.rpath.empty() &&
            search_dirs(o.info.rpath, ":", origin_[static_cast<std::size_t>(l)], name, found, info)) {
          via = "RPATH of " + basename_of(o.path);
          return found;
        }
        if (l == 0) break;  // every chain ends at the executable, whose RPATH thus serves all of them
      }
    }
    if (search_dirs(env_.ld_library_path, ":;", origin_[0], name, found, info)) {
      via = "LD_LIBRARY_PATH";
      return found;
    }
    if (!requester.info.runpath.empty() &&
        search_dirs(requester.info.runpath, ":", origin_[static_cast<std::size_t>(by)], name, found, info)) {
      via = "RUNPATH of " + basename_of(requester.path);
      return found;
    }
    if (requester.info.nodeflib) return {};
    if (env_.cache != nullptr) {
      std::string cached = env_.cache->find(name);
      if (!cached.empty() && usable(cached, info)) {
        via = "ld.so.cache";
        return cached;
      }
    }
    for (const auto& dir : env_.default_dirs) {
      std::string cand = dir + "/" + name;
      if (usable(cand, info)) {
        via = "default directory " + dir;
        return cand;
      }
    }
    return {};
  }

  const SearchEnv& env_;
  std::vector<std::string> origin_;  // per object: what $ORIGIN means in its paths
  std::set<std::string> names_;      // names the loaded objects answer to (DT_NEEDED names, sonames)
  std::set<std::pair<dev_t, ino_t>> ids_;
};

}  // namespace

Result<DynamicInfo> read_dynamic(const std::string& path) {
  MappedFile m;
  if (std::string why = m.open(path); !why.empty()) return make_error(Errc::io_error, path + ": " + why);
  Elf64_Ehdr eh{};
  if (!m.read(0, eh) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) {
    return make_error(Errc::parse_error, path + ": not an ELF file");
  }
  if (eh.e_ident[EI_CLASS] != ELFCLASS64) return make_error(Errc::unsupported, path + ": not a 64-bit ELF file");
  if (kMachine >= 0 && eh.e_machine != kMachine) {
    return make_error(Errc::unsupported, path + ": built for another machine (e_machine " +
                                             std::to_string(eh.e_machine) + ")");
  }
  if (eh.e_phentsize != sizeof(Elf64_Phdr)) return make_error(Errc::parse_error, path + ": bad program header size");
  DynamicInfo info;
  for (int i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph{};
    if (!m.read(eh.e_phoff + static_cast<std::uint64_t>(i) * eh.e_phentsize, ph)) {
      return make_error(Errc::parse_error, path + ": program header " + std::to_string(i) + " outside the file");
    }
    if (ph.p_type != PT_DYNAMIC) continue;
    std::vector<std::uint64_t> needed;
    std::uint64_t strtab_vaddr = 0;
    std::uint64_t soname = 0, rpath = 0, runpath = 0;
    bool has_soname = false, has_rpath = false, has_runpath = false;
    for (std::uint64_t off = ph.p_offset; off + sizeof(Elf64_Dyn) <= ph.p_offset + ph.p_filesz; off += sizeof(Elf64_Dyn)) {
      Elf64_Dyn d{};
      if (!m.read(off, d) || d.d_tag == DT_NULL) break;
      switch (d.d_tag) {
        case DT_NEEDED: needed.push_back(d.d_un.d_val); break;
        case DT_STRTAB: strtab_vaddr = d.d_un.d_ptr; break;
        case DT_SONAME: soname = d.d_un.d_val, has_soname = true; break;
        case DT_RPATH: rpath = d.d_un.d_val, has_rpath = true; break;
        case DT_RUNPATH: runpath = d.d_un.d_val, has_runpath = true; break;
        case DT_FLAGS_1: info.nodeflib = (d.d_un.d_val & DF_1_NODEFLIB) != 0; break;
        default: break;
      }
    }
    std::uint64_t strtab = 0;
    if (!elf_vaddr_to_offset(m, eh, strtab_vaddr, strtab)) {
      return make_error(Errc::parse_error, path + ": dynamic string table not found");
    }
    bool ok = true;
    auto str = [&](std::uint64_t o, std::string& out) { ok = m.string_at(strtab + o, out) && ok; };
    for (auto o : needed) str(o, info.needed.emplace_back());
    if (has_soname) str(soname, info.soname);
    if (has_runpath) str(runpath, info.runpath);
    if (has_rpath && !has_runpath) str(rpath, info.rpath);  // the loader ignores RPATH next to RUNPATH
    if (!ok) return make_error(Errc::parse_error, path + ": a dynamic string runs outside the file");
  }
  return info;
}

std::vector<std::string> default_search_dirs() {
#if defined(__x86_64__)
  return {"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib"};
#elif defined(__aarch64__)
  return {"/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib"};
#else
  return {"/lib", "/usr/lib"};
#endif
}

Result<Closure> dependency_closure(const std::string& program, const SearchEnv& env) {
  Closure out;
  Walker walker(env);
  if (Status st = walker.run(program, out); !st.ok()) return st.error();
  return out;
}

std::string load_chain(const Closure& closure, int index) {
  std::vector<std::string> names;
  for (int i = index; i >= 0; i = closure.objects[static_cast<std::size_t>(i)].loader) {
    names.push_back(i == 0 ? basename_of(closure.objects[0].path) : closure.objects[static_cast<std::size_t>(i)].name);
  }
  std::string out;
  for (auto it = names.rbegin(); it != names.rend(); ++it) out += (out.empty() ? "" : " → ") + *it;
  return out;
}

RuntimeVerdict openmp_runtime(const Closure& closure) {
  RuntimeVerdict v;
  auto rank = [](OmpRuntime k) {
    switch (k) {
      case OmpRuntime::unsteerable: return 3;
      case OmpRuntime::gomp: return 2;
      case OmpRuntime::llvm: return 1;
      case OmpRuntime::none: break;
    }
    return 0;
  };
  for (std::size_t i = 1; i < closure.objects.size(); ++i) {
    const KnownRuntime* r = known_runtime(basename_of(closure.objects[i].name).c_str());
    if (r == nullptr || rank(r->kind) <= rank(v.kind)) continue;
    v.kind = r->kind;
    v.index = static_cast<int>(i);
    v.what = r->what;
  }
  return v;
}

}  // namespace cosched::launcher
