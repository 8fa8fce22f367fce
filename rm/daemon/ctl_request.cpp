#include "ctl_request.hpp"

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>

namespace cosched::rm {

namespace {

using nlohmann::json;

Error bad(const std::string& msg) { return make_error(Errc::invalid_argument, msg); }

// Reads {"params": {"k": "v" or number}} into a ParamList; errors name the key.
Status read_params(const json& req, bool required, policy::ParamList& out) {
  auto it = req.find("params");
  if (it == req.end()) {
    return required ? Status(bad("field 'params' (an object of NAME: VALUE) is required")) : Status();
  }
  if (!it->is_object()) return bad("field 'params' must be an object");
  for (const auto& [k, v] : it->items()) {
    if (v.is_string()) {
      out.emplace_back(k, v.get_ref<const std::string&>());
    } else if (v.is_number()) {
      out.emplace_back(k, v.dump());
    } else {
      return bad("parameter '" + k + "' must be a string or a number");
    }
  }
  return {};
}

// An optional job count of may_start; errors name the field.
Status read_count(const json& req, const char* field, const char* meaning, int& out) {
  auto it = req.find(field);
  if (it == req.end()) return {};
  if (!it->is_number_integer() || it->get<std::int64_t>() < 0 || it->get<std::int64_t>() > 1000000) {
    return bad(std::string("field '") + field + "' must be an integer in [0, 1000000] (" + meaning + ")");
  }
  out = it->get<int>();
  return {};
}

Result<CtlRequest> parse_object(const json& req) {
  auto cmd_it = req.find("cmd");
  if (cmd_it == req.end() || !cmd_it->is_string()) return bad("missing string field 'cmd'");
  const auto& cmd = cmd_it->get_ref<const std::string&>();
  CtlRequest r;
  if (cmd == "status") {
    r.cmd = CtlCmd::status;
  } else if (cmd == "may_start") {
    r.cmd = CtlCmd::may_start;
    if (auto st = read_count(req, "queued", "jobs waiting", r.queued); !st) return st.error();
    if (auto st = read_count(req, "starting", "jobs started, not registered yet", r.starting); !st) return st.error();
  } else if (cmd == "shutdown") {
    r.cmd = CtlCmd::shutdown;
  } else if (cmd == "policies") {
    r.cmd = CtlCmd::policies;
  } else if (cmd == "decisions") {
    r.cmd = CtlCmd::decisions;
    if (auto it = req.find("since"); it != req.end()) {
      if (!it->is_number()) return bad("field 'since' must be a number (seconds)");
      r.since = it->get<double>();
    }
  } else if (cmd == "why" || cmd == "release" || cmd == "report") {
    r.cmd = cmd == "why" ? CtlCmd::why : cmd == "release" ? CtlCmd::release : CtlCmd::report;
    auto it = req.find("job");
    if (it == req.end() || !it->is_number_integer()) return bad("field 'job' must be an integer");
    // An unsigned JSON integer above int64's range would wrap into some other job's id.
    if (it->is_number_unsigned() &&
        it->get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<policy::JobId>::max())) {
      return bad("field 'job' is out of range");
    }
    r.job = it->get<policy::JobId>();
  } else if (cmd == "policy") {
    r.cmd = CtlCmd::policy;
    auto it = req.find("name");
    if (it == req.end() || !it->is_string() || it->get_ref<const std::string&>().empty()) {
      return bad("field 'name' (the policy) must be a non-empty string");
    }
    r.name = it->get_ref<const std::string&>();
    if (auto st = read_params(req, false, r.params); !st) return st.error();
  } else if (cmd == "set") {
    r.cmd = CtlCmd::set;
    if (auto st = read_params(req, true, r.params); !st) return st.error();
  } else if (cmd == "cluster_local") {
    r.cmd = CtlCmd::cluster_local;
  } else if (cmd == "cluster_switch") {
    r.cmd = CtlCmd::cluster_switch;
    auto it = req.find("order");
    if (it == req.end() || !it->is_array()) return bad("field 'order' (an array of job ids) is required");
    if (it->size() > 65536) return bad("field 'order' has more than 65536 entries");
    for (const auto& v : *it) {
      if (!v.is_number_integer() || v.get<std::int64_t>() < 0) return bad("field 'order' must hold job ids (integers >= 0)");
      r.order.push_back(v.get<policy::JobId>());
    }
  } else if (cmd == "expect") {
    r.cmd = CtlCmd::expect;
    auto it = req.find("slurm_job_id");
    if (it == req.end() || !it->is_number_integer() || it->get<std::int64_t>() < 0 ||
        (it->is_number_unsigned() && it->get<std::uint64_t>() > 0xffffffffULL) || it->get<std::int64_t>() > 0xffffffffLL) {
      return bad("field 'slurm_job_id' must be a Slurm job id (an integer in [0, 4294967295])");
    }
    r.slurm_job_id = it->get<std::int64_t>();
  } else {
    return bad("unknown command '" + cmd + "' (" + std::string(kCtlCommands) + ")");
  }
  return r;
}

}  // namespace

Result<CtlRequest> parse_ctl_request(std::string_view payload) {
  json req = json::parse(payload, nullptr, false);
  if (req.is_discarded() || !req.is_object()) return bad("request is not a JSON object");
  // Every access above is checked first, so nothing should throw; if a library corner does, it is still
  // one error for this request and never the RM's end.
  try {
    return parse_object(req);
  } catch (const json::exception& e) {
    return bad(std::string("malformed request: ") + e.what());
  }
}

}  // namespace cosched::rm
