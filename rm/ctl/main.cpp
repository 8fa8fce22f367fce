// cosched-ctl: inspect and steer a running cosched-rm.
//   cosched-ctl status [--json]        jobs, allocations, CPUs, measurements
//   cosched-ctl why JOB                the last decisions about JOB, with their reasons
//   cosched-ctl policy NAME [k=v ...]  switch policy (or change parameters of the current one)
//   cosched-ctl set k=v [...]          change parameters of the current policy
//   cosched-ctl may-start              the multiprogramming-level answer the queuing system gets
//   cosched-ctl policies               list the policies this RM knows
//   cosched-ctl shutdown               release every job and stop the RM
#include <CLI/CLI.hpp>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "client.hpp"
#include "cosched/wire.hpp"
#include "format.hpp"

using nlohmann::json;

namespace {

json params_object(const std::vector<std::string>& kvs, bool& ok) {
  json p = json::object();
  for (const auto& kv : kvs) {
    auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) {
      std::fprintf(stderr, "cosched-ctl: bad parameter '%s': expected NAME=VALUE\n", kv.c_str());
      ok = false;
      return p;
    }
    p[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return p;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"cosched-ctl: inspect and steer a running cosched-rm"};
  app.set_version_flag("--version", COSCHED_VERSION);
  app.require_subcommand(1);
  std::string socket = cosched::wire::default_socket_path();
  bool as_json = false;
  int timeout_ms = 5000;
  app.add_option("--socket,-s", socket, "RM socket (env COSCHED_SOCKET)")->capture_default_str();
  app.add_option("--timeout-ms", timeout_ms, "give up after this long")->capture_default_str();

  auto* status = app.add_subcommand("status", "jobs, allocations, CPUs and measurements");
  status->add_flag("--json", as_json, "machine-readable output");
  long job = 0;
  auto* why = app.add_subcommand("why", "the last decisions about a job, with their reasons");
  why->add_option("job", job, "job id (from status)")->required();
  why->add_flag("--json", as_json, "machine-readable output");
  std::string name;
  std::vector<std::string> kvs;
  auto* policy = app.add_subcommand("policy", "switch policy, or change parameters of the current one");
  policy->add_option("name", name, "policy name (see `cosched-ctl policies`)")->required();
  policy->add_option("params", kvs, "NAME=VALUE parameters");
  policy->add_flag("--json", as_json, "machine-readable output");
  auto* set = app.add_subcommand("set", "change parameters of the current policy");
  set->add_option("params", kvs, "NAME=VALUE parameters")->required();
  set->add_flag("--json", as_json, "machine-readable output");
  auto* may = app.add_subcommand("may-start", "may the queuing system start a job now? (exit 0 yes, 1 no)");
  may->add_flag("--json", as_json, "machine-readable output");
  auto* policies = app.add_subcommand("policies", "list the policies this RM knows");
  auto* shutdown = app.add_subcommand("shutdown", "release every job and stop the RM");
  CLI11_PARSE(app, argc, argv);

  json req;
  bool ok = true;
  if (status->parsed()) req = {{"cmd", "status"}};
  if (why->parsed()) req = {{"cmd", "why"}, {"job", job}};
  if (policy->parsed()) req = {{"cmd", "policy"}, {"name", name}, {"params", params_object(kvs, ok)}};
  if (set->parsed()) req = {{"cmd", "set"}, {"params", params_object(kvs, ok)}};
  if (may->parsed()) req = {{"cmd", "may_start"}};
  if (policies->parsed()) req = {{"cmd", "policies"}};
  if (shutdown->parsed()) req = {{"cmd", "shutdown"}};
  if (!ok) return 2;

  auto reply = cosched::ctl::request(socket, req, timeout_ms);
  if (!reply) {
    std::fprintf(stderr, "cosched-ctl: %s\n", reply.error().message.c_str());
    return 3;
  }
  const json& r = *reply;
  if (!r.value("ok", false)) {
    std::fprintf(stderr, "cosched-ctl: %s\n", r.value("error", std::string("request failed")).c_str());
    return 1;
  }
  if (as_json) {
    std::printf("%s\n", r.dump(2).c_str());
  } else if (status->parsed() || policy->parsed() || set->parsed()) {
    std::fputs(cosched::ctl::format_status(r).c_str(), stdout);
  } else if (why->parsed()) {
    std::fputs(cosched::ctl::format_why(r).c_str(), stdout);
  } else if (may->parsed()) {
    std::printf("%s: %s\n", r.value("may_start", false) ? "yes" : "no", r.value("reason", std::string()).c_str());
  } else if (policies->parsed()) {
    for (const auto& p : r["policies"]) {
      std::printf("%-12s %s\n", p.value("name", "").c_str(), p.value("summary", "").c_str());
    }
  } else if (shutdown->parsed()) {
    std::printf("cosched-rm is shutting down\n");
  }
  if (may->parsed()) return r.value("may_start", false) ? 0 : 1;
  return 0;
}
