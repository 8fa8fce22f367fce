#include "ompt_client.hpp"

#include <dlfcn.h>
#include <link.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "options.hpp"

namespace cosched::rt {

std::atomic<ompt_callback_t> g_client_callbacks[kClientEvents];

namespace {

using StartTool = ompt_start_tool_result_t* (*)(unsigned int omp_version, const char* runtime_version);

ompt_start_tool_result_t* g_client = nullptr;  // the started client's initialize, finalize and tool_data
std::string g_client_name;
bool g_client_active = false;                   // its initialize returned non-zero

// libomp's entry points, as our initialize received them.
ompt_function_lookup_t g_lookup = nullptr;
ompt_set_callback_t g_set_callback = nullptr;
ompt_get_callback_t g_get_callback = nullptr;

OwnCallback g_own[kClientEvents] = {};         // by event; own == nullptr: libcosched does not use it
bool g_client_registered[kClientEvents] = {};  // the client has a function set for the event

// Always printed, --quiet or not: a profiler that silently does not run is the failure this exists for.
void not_chained(const std::string& lib, const char* why) {
  warn(false, "OMPT tool %s is not chained behind libcosched and will not run: %s", lib.c_str(), why);
}

link_map* own_link_map() {
  Dl_info info{};
  void* lm = nullptr;
  // Any hidden symbol of libcosched names its object (ompt_start_tool itself may resolve to libomp's weak one).
  if (dladdr1(reinterpret_cast<void*>(&not_chained), &info, &lm, RTLD_DL_LINKMAP) == 0) return nullptr;
  return static_cast<link_map*>(lm);
}

// `name` is libcosched: it is in the list the user or cosched-run gave, but it is the tool, not a client.
// RTLD_NOLOAD: a name that is not loaded yet is not ours, and looking must not load it.
bool is_libcosched(const std::string& name) {
  void* h = dlopen(name.c_str(), RTLD_LAZY | RTLD_NOLOAD);
  if (h == nullptr) return false;
  link_map* lm = nullptr;
  const bool ours = dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm == own_link_map();
  dlclose(h);
  return ours;
}

// `name` as the library itself defines it: dlsym on a handle also searches the library's dependencies,
// where libomp's weak ompt_start_tool would be found in a library that has none.
void* own_symbol(void* handle, const char* name) {
  void* sym = dlsym(handle, name);
  if (sym == nullptr) return nullptr;
  Dl_info info{};
  void* sym_lm = nullptr;
  link_map* lib_lm = nullptr;
  if (dladdr1(sym, &info, &sym_lm, RTLD_DL_LINKMAP) == 0 || dlinfo(handle, RTLD_DI_LINKMAP, &lib_lm) != 0 ||
      sym_lm != lib_lm) {
    return nullptr;
  }
  return sym;
}

StartTool own_start_tool(void* handle) {
  void* sym = own_symbol(handle, "ompt_start_tool");
  StartTool fn = nullptr;
  std::memcpy(&fn, &sym, sizeof fn);
  return fn;
}

std::vector<std::string> split_paths(const char* list) {
  std::vector<std::string> out;
  std::string cur;
  for (const char* p = list; ; ++p) {
    if (*p == ':' || *p == '\0') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
      if (*p == '\0') break;
    } else {
      cur.push_back(*p);
    }
  }
  return out;
}

// The libraries to try, in order. COSCHED_CLIENT_TOOL_LIBRARIES (cosched-run moves the user's
// OMP_TOOL_LIBRARIES there) is libcosched's CLIENT_TOOL_LIBRARIES_VAR in LLVM's multiplexing convention:
// each multiplexing tool reads a variable of its own, so that a client which multiplexes in turn keeps its
// own list. Without it, OMP_TOOL_LIBRARIES: the entries after libcosched (libomp tried those before it and
// they declined), or all of them when libcosched is not listed (the program links libcosched, and libomp
// starts the tool in its address space without reading the list).
std::vector<std::string> candidates() {
  if (const char* list = std::getenv("COSCHED_CLIENT_TOOL_LIBRARIES"); list != nullptr) {
    std::vector<std::string> out;
    for (auto& name : split_paths(list)) {
      if (!is_libcosched(name)) out.push_back(name);
    }
    return out;
  }
  const char* list = std::getenv("OMP_TOOL_LIBRARIES");
  if (list == nullptr) return {};
  std::vector<std::string> out;
  for (auto& name : split_paths(list)) {
    if (is_libcosched(name)) out.clear();
    else out.push_back(name);
  }
  return out;
}

// An event number outside our tables (a newer runtime's event, or any integer a client passes) goes straight
// to the runtime. Compared as an int: a value of the enum type would let the compiler assume it in range.
bool in_table(ompt_callbacks_t event) {
  const int n = static_cast<int>(event);
  return n > 0 && n < kClientEvents;
}

ompt_set_result_t client_set_callback(ompt_callbacks_t event, ompt_callback_t callback) {
  if (!in_table(event)) return g_set_callback(event, callback);
  g_client_registered[event] = callback != nullptr;
  const OwnCallback& own = g_own[event];
  if (own.own == nullptr) return g_set_callback(event, callback);  // not ours: libomp calls the client directly
  g_client_callbacks[event].store(callback, std::memory_order_relaxed);
  return g_set_callback(event, callback != nullptr ? own.chained : own.own);
}

int client_get_callback(ompt_callbacks_t event, ompt_callback_t* callback) {
  if (in_table(event) && g_own[event].own != nullptr) {
    // libomp holds our chained function for this event; the client asked for its own.
    ompt_callback_t fn = g_client_callbacks[event].load(std::memory_order_relaxed);
    if (fn == nullptr) return 0;
    *callback = fn;
    return 1;
  }
  return g_get_callback != nullptr ? g_get_callback(event, callback) : 0;
}

ompt_interface_fn_t client_lookup(const char* name) {
  if (std::strcmp(name, "ompt_set_callback") == 0) return reinterpret_cast<ompt_interface_fn_t>(&client_set_callback);
  if (std::strcmp(name, "ompt_get_callback") == 0) return reinterpret_cast<ompt_interface_fn_t>(&client_get_callback);
  return g_lookup(name);  // everything else is libomp's, data-word queries included (ompt_client.hpp)
}

// The client turned itself off: libomp must stop calling it, and our events go back to ours alone.
void unregister_client() {
  for (int e = 1; e < kClientEvents; ++e) {
    if (!g_client_registered[e]) continue;
    client_set_callback(static_cast<ompt_callbacks_t>(e), nullptr);
  }
}

}  // namespace

bool client_start(unsigned int omp_version, const char* runtime_version) {
  for (const auto& name : candidates()) {
    void* h = dlopen(name.c_str(), RTLD_LAZY);
    if (h == nullptr) {
      const char* err = dlerror();
      not_chained(name, err != nullptr ? err : "dlopen failed");
      continue;
    }
    // Another copy of libcosched (an installed one behind a build tree's, say) would register the job
    // with the RM a second time and steer the same teams.
    if (own_symbol(h, "cosched_team_interposed") != nullptr) {
      not_chained(name, "it is another copy of libcosched");
      continue;
    }
    StartTool start = own_start_tool(h);
    if (start == nullptr) {
      not_chained(name, "the library has no ompt_start_tool");
      dlclose(h);
      continue;
    }
    // A tool that declines stays loaded: it may have started threads or registered destructors.
    ompt_start_tool_result_t* result = start(omp_version, runtime_version);
    if (result == nullptr) {
      not_chained(name, "its ompt_start_tool returned NULL (the tool declined to start)");
      continue;
    }
    if (result->initialize == nullptr) {
      not_chained(name, "its ompt_start_tool returned no initialize function");
      continue;
    }
    g_client = result;
    g_client_name = name;
    return true;  // one client, as libomp starts one tool: later entries are not tried
  }
  return false;
}

bool client_initialize(ompt_function_lookup_t lookup, int initial_device_num, std::span<const OwnCallback> own) {
  if (g_client == nullptr) return false;
  g_lookup = lookup;
  g_set_callback = reinterpret_cast<ompt_set_callback_t>(lookup("ompt_set_callback"));
  g_get_callback = reinterpret_cast<ompt_get_callback_t>(lookup("ompt_get_callback"));
  if (g_set_callback == nullptr) {
    not_chained(g_client_name, "the OpenMP runtime offers no ompt_set_callback");
    return false;
  }
  for (const auto& o : own) {
    if (in_table(o.event)) g_own[o.event] = o;
  }
  if (g_client->initialize(&client_lookup, initial_device_num, &g_client->tool_data) == 0) {
    unregister_client();
    not_chained(g_client_name, "its initialize returned 0 (the tool turned itself off)");
    return false;
  }
  g_client_active = true;
  return true;
}

void client_finalize() {
  if (!g_client_active) return;
  g_client_active = false;
  if (g_client->finalize != nullptr) g_client->finalize(&g_client->tool_data);
}

}  // namespace cosched::rt
