// libFuzzer target for the RM's control path: payload bytes → parse_ctl_request → the policy change the
// daemon would make (rm/daemon/daemon_ctl.cpp). Properties beyond "no crash, no exception, no sanitizer
// report":
//  - a request is either typed (fields the command needs are present and well-formed) or one error;
//  - a parameter change is all or nothing: when with_params refuses, the live policy is unchanged.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "rm/daemon/ctl_request.hpp"
#include "policies/registry.hpp"

namespace rm = cosched::rm;
namespace policy = cosched::policy;

#define CHECK(cond)                                                           \
  do {                                                                        \
    if (!(cond)) {                                                            \
      std::fprintf(stderr, "fuzz_ctl_request: property failed: %s\n", #cond); \
      std::abort();                                                           \
    }                                                                         \
  } while (0)

namespace {

std::vector<policy::Param> params_of(const policy::Policy& p) { return p.params(); }

bool same(const std::vector<policy::Param>& a, const std::vector<policy::Param>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].name != b[i].name || a[i].value != b[i].value) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto req = rm::parse_ctl_request(text);
  if (!req.ok()) {
    CHECK(!req.error().message.empty());
    return 0;
  }
  const policy::Machine machine{16, 8, 1, 2};
  switch (req->cmd) {
    case rm::CtlCmd::policy: {
      CHECK(!req->name.empty());
      auto p = policy::make_policy(req->name, machine, req->params);
      CHECK(p.ok() || !p.error().message.empty());
      break;
    }
    case rm::CtlCmd::set:
      for (const char* name : {"pdpa", "dss", "equip"}) {
        auto live = policy::make_policy(name, machine);
        CHECK(live.ok());
        auto before = params_of(**live);
        auto next = policy::with_params(**live, req->params);
        CHECK(same(before, params_of(**live)));  // the live policy never changes, accepted or not
        if (!next.ok()) CHECK(!next.error().message.empty());
      }
      break;
    case rm::CtlCmd::why:
    case rm::CtlCmd::report:
    case rm::CtlCmd::release:
    case rm::CtlCmd::decisions:
    case rm::CtlCmd::cluster_local:
    case rm::CtlCmd::cluster_switch:
    case rm::CtlCmd::status:
    case rm::CtlCmd::may_start:
    case rm::CtlCmd::policies:
    case rm::CtlCmd::shutdown: break;
    case rm::CtlCmd::expect:
      CHECK(req->slurm_job_id >= 0 && req->slurm_job_id <= 0xffffffffLL);
      break;
  }
  return 0;
}
