#include "papi.hpp"

#include <unistd.h>

#ifdef COSCHED_HAVE_PAPI
#include <papi.h>
#endif

namespace cosched::sensors {

PapiSpec Papi::cache_misses(const std::string& event) {
  PapiSpec s;
  if (event.empty()) s.events = {"PAPI_L3_TCM", "PAPI_L2_TCM"};
  else s.events = {event};
  const long line = ::sysconf(_SC_LEVEL3_CACHE_LINESIZE);
  s.bytes_per_count = line > 0 ? static_cast<double>(line) : 64.0;
  return s;
}

#ifdef COSCHED_HAVE_PAPI

namespace {

std::string papi_error(int rc) { return PAPI_strerror(rc) != nullptr ? PAPI_strerror(rc) : std::to_string(rc); }

// An event set counting `code` in thread `tid` (0: the calling thread), started; or PAPI's error code.
int start_set(int code, int component, pid_t tid, int& set) {
  set = PAPI_NULL;
  int rc = PAPI_create_eventset(&set);
  if (rc != PAPI_OK) return rc;
  if ((rc = PAPI_assign_eventset_component(set, component)) == PAPI_OK &&
      (tid == 0 || (rc = PAPI_attach(set, static_cast<unsigned long>(tid))) == PAPI_OK) &&
      (rc = PAPI_add_event(set, code)) == PAPI_OK && (rc = PAPI_start(set)) == PAPI_OK) {
    return PAPI_OK;
  }
  PAPI_cleanup_eventset(set);
  PAPI_destroy_eventset(&set);
  return rc;
}

void stop_set(int set) {
  long long v = 0;
  PAPI_stop(set, &v);
  PAPI_cleanup_eventset(set);
  PAPI_destroy_eventset(&set);
}

}  // namespace

Result<std::unique_ptr<Papi>> Papi::probe(const PapiSpec& spec) {
  if (PAPI_is_initialized() == PAPI_NOT_INITED) {
    const int v = PAPI_library_init(PAPI_VER_CURRENT);
    if (v != PAPI_VER_CURRENT) {
      return make_error(Errc::unsupported, "PAPI_library_init failed: " + papi_error(v));
    }
  }
  std::string tried;
  for (const auto& name : spec.events) {
    int code = 0;
    int rc = PAPI_event_name_to_code(name.c_str(), &code);
    if (rc == PAPI_OK) rc = PAPI_query_event(code);
    int set = PAPI_NULL;
    const int component = rc == PAPI_OK ? PAPI_get_event_component(code) : -1;
    if (rc == PAPI_OK) rc = component >= 0 ? start_set(code, component, 0, set) : PAPI_ENOCMP;
    if (rc == PAPI_OK) {
      stop_set(set);
      return std::unique_ptr<Papi>(new Papi(code, name, component, spec.bytes_per_count));
    }
    tried += (tried.empty() ? "" : ", ") + name + ": " + papi_error(rc);
  }
  std::string why = spec.events.size() == 1 ? "event " + tried : "no event counts memory traffic here (" + tried + ")";
  if (const PAPI_component_info_t* c = PAPI_get_component_info(0); c != nullptr) {
    why += "; component " + std::string(c->name) + " lists " + std::to_string(c->num_cntrs) + " counters";
    if (c->disabled != 0) why += std::string(" but is disabled: ") + c->disabled_reason;
    else why += " but none of its presets maps to a hardware event (no PMU)";
  }
  return make_error(Errc::unsupported, why);
}

Papi::~Papi() { stop_all(); }

Result<long> Papi::start_thread(pid_t tid) {
  int set = PAPI_NULL;
  const int rc = start_set(code_, component_, tid, set);
  if (rc != PAPI_OK) {
    return make_error(Errc::io_error, "PAPI " + event_ + " on tid " + std::to_string(tid) + ": " + papi_error(rc));
  }
  return static_cast<long>(set);
}

std::optional<std::uint64_t> Papi::read_thread(long handle) {
  long long v = 0;
  if (PAPI_read(static_cast<int>(handle), &v) != PAPI_OK || v < 0) return std::nullopt;
  return static_cast<std::uint64_t>(v);
}

void Papi::stop_thread(long handle) { stop_set(static_cast<int>(handle)); }

#else  // no libpapi at build time

Result<std::unique_ptr<Papi>> Papi::probe(const PapiSpec& spec) {
  std::string events;
  for (const auto& e : spec.events) events += (events.empty() ? "" : ", ") + e;
  return make_error(Errc::unsupported,
                    "cosched was built without libpapi, so it cannot count " + events + " (install libpapi-dev and rebuild)");
}
Papi::~Papi() = default;
Result<long> Papi::start_thread(pid_t) { return make_error(Errc::unsupported, "no PAPI"); }
std::optional<std::uint64_t> Papi::read_thread(long) { return std::nullopt; }
void Papi::stop_thread(long) {}

#endif

}  // namespace cosched::sensors
