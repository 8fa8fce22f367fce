// cosched-ctl: inspect and steer a running cosched-rm.
//   cosched-ctl status [--json]        jobs, allocations, CPUs, measurements
//   cosched-ctl why JOB                the last decisions about JOB, with their reasons
//   cosched-ctl report JOB             what JOB's CPUs bought: efficiency per allocation, and fewer CPUs
//   cosched-ctl release JOB            give one of your jobs back to the native runtime
//   cosched-ctl policy NAME [k=v ...]  switch policy (or change parameters of the current one)
//   cosched-ctl set k=v [...]          change parameters of the current policy
//   cosched-ctl may-start              the multiprogramming-level answer the queuing system gets
//   cosched-ctl policies               list the policies this RM knows, with their parameters
//   cosched-ctl shutdown               release every job and stop the RM
//   cosched-ctl history                jobs that left the RM (accounting records; no RM needed)
//   cosched-ctl pairs                  the co-scheduling policy's learned slowdowns, worst pair first
#include <CLI/CLI.hpp>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "rm/accounting/accounting_path.hpp"
#include "rm/accounting/cpu_report.hpp"
#include "client.hpp"
#include "cosched/cli.hpp"
#include "cosched/wire.hpp"
#include "format.hpp"
#include "history.hpp"
#include "pairs.hpp"

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
  app.set_version_flag("--version", std::string("cosched-ctl ") + COSCHED_VERSION);
  app.require_subcommand(1);
  std::string socket = cosched::wire::default_socket_path();
  bool as_json = false;
  int timeout_ms = 5000;
  app.add_option("--socket,-s", socket, "RM socket (env COSCHED_SOCKET)")->capture_default_str();
  app.add_option("--timeout-ms", timeout_ms, "give up on an RM that does not answer within this many ms (exit 3)")->capture_default_str();

  auto* status = app.add_subcommand("status", "jobs, allocations, CPUs and measurements");
  status->add_flag("--json", as_json, "machine-readable output");
  cosched::ctl::StatusView view;
  std::string columns;
  status->add_option("--format,-o", columns, "the table's columns, comma-separated, e.g. job,user,state,command "
                                              "(known: " + cosched::ctl::known_columns() + ")");
  status->add_option("--user,-u", view.user, "only this user's jobs (name or uid)");
  status->add_option("--state", view.state,
                     "only jobs in this state: the policy's (e.g. INC, STABLE) or running, stopped, suspended");
  long job = 0;
  std::string history_file;
  auto* why = app.add_subcommand("why", "the last decisions about a job, with their reasons");
  why->add_option("job", job, "job id (from status)")->required();
  why->add_flag("--json", as_json, "machine-readable output");
  auto* report = app.add_subcommand("report", "what a job's CPUs bought: the efficiency measured at each allocation "
                                               "it held, its CPU·seconds, and what fewer CPUs would have given");
  report->add_option("job", job, "job id (from status or history)")->required();
  report->add_flag("--json", as_json, "machine-readable output");
  report->add_option("--file", history_file,
                     "accounting records to read for a job the RM no longer knows (default: the socket's path with "
                     ".accounting.jsonl for .sock)");
  auto* release = app.add_subcommand("release", "give one of your jobs back to the native runtime for the rest of "
                                                 "its life (its requested team, unconfined, never stopped)");
  release->add_option("job", job, "job id (from status)")->required();
  release->add_flag("--json", as_json, "machine-readable output");
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
  auto* policies = app.add_subcommand("policies", "list the policies this RM knows, each with its parameters (default, accepted values, meaning)");
  auto* shutdown = app.add_subcommand("shutdown", "release every job and stop the RM");
  long long slurm_job = -1;
  auto* expect = app.add_subcommand("expect",
                                    "a Slurm job is starting on this node (cosched-slurm-prolog): admit nothing more "
                                    "until it registers, at most 5 s (docs/slurm.md)");
  expect->add_option("slurm_job_id", slurm_job, "the Slurm job id")->required()->check(CLI::Range(0LL, 4294967295LL));
  auto* pairs = app.add_subcommand("pairs", "the co-scheduling policy's learned slowdowns (worst pair first), "
                                            "progress and rates alone");
  pairs->add_flag("--json", as_json, "machine-readable output: the pairs ranked, and what the policy reports");
  cosched::ctl::HistoryFilter history_filter;
  auto* history = app.add_subcommand("history", "jobs that left the RM, from its accounting records (no RM needed)");
  history->add_option("--file", history_file,
                      "accounting records to read (default: the socket's path with .accounting.jsonl for .sock)");
  history->add_option("--user,-u", history_filter.user, "only this user's jobs (name or uid)");
  history->add_option("--job,-j", history_filter.job, "only this RM job id");
  history->add_option("--pid", history_filter.pid, "only the job with this process id");
  history->add_option("--slurm-job", history_filter.slurm_job, "only the processes of this Slurm job (--cosched jobs)");
  history->add_option("--last,-n", history_filter.last, "only the last N jobs");
  history->add_flag("--json", as_json, "machine-readable output (one record per line, as stored)");
  COSCHED_CLI_PARSE(app, argc, argv);

  if (history->parsed()) {
    // Read from the file, not the RM: the records outlive it (and answer while it is down).
    if (history_file.empty()) history_file = cosched::rm::default_accounting_path(socket);
    std::size_t skipped = 0;
    auto records = cosched::ctl::read_history(history_file, history_filter, skipped);
    if (!records) {
      std::fprintf(stderr, "cosched-ctl: %s\n", records.error().message.c_str());
      return cosched::cli::kExitUsage;
    }
    if (skipped > 0) std::fprintf(stderr, "cosched-ctl: %zu unreadable line(s) in %s skipped\n", skipped, history_file.c_str());
    if (as_json) {
      for (const auto& r : *records) std::printf("%s\n", r.dump().c_str());
    } else {
      std::fputs(cosched::ctl::format_history(*records).c_str(), stdout);
    }
    return cosched::cli::kExitOk;
  }

  json req;
  bool ok = true;
  if (status->parsed() || pairs->parsed()) req = {{"cmd", "status"}};
  if (why->parsed()) req = {{"cmd", "why"}, {"job", job}};
  if (report->parsed()) req = {{"cmd", "report"}, {"job", job}};
  if (release->parsed()) req = {{"cmd", "release"}, {"job", job}};
  if (policy->parsed()) req = {{"cmd", "policy"}, {"name", name}, {"params", params_object(kvs, ok)}};
  if (set->parsed()) req = {{"cmd", "set"}, {"params", params_object(kvs, ok)}};
  if (may->parsed()) req = {{"cmd", "may_start"}};
  if (policies->parsed()) req = {{"cmd", "policies"}};
  if (shutdown->parsed()) req = {{"cmd", "shutdown"}};
  if (expect->parsed()) req = {{"cmd", "expect"}, {"slurm_job_id", slurm_job}};
  if (status->parsed() && !columns.empty()) {
    auto parsed = cosched::ctl::parse_columns(columns);
    if (!parsed) {
      std::fprintf(stderr, "cosched-ctl: %s\n", parsed.error().message.c_str());
      return cosched::cli::kExitUsage;
    }
    view.columns = *parsed;
  }
  if (!ok) return cosched::cli::kExitUsage;

  auto reply = cosched::ctl::request(socket, req, timeout_ms);
  if (report->parsed() && (!reply || !reply->value("ok", false))) {
    // The RM keeps the reports of its last departed jobs only, and may be down: the accounting record has it.
    if (history_file.empty()) history_file = cosched::rm::default_accounting_path(socket);
    cosched::ctl::HistoryFilter only;
    only.job = job;
    std::size_t skipped = 0;
    auto records = cosched::ctl::read_history(history_file, only, skipped);
    if (records && !records->empty() && records->back().contains("cpu_report")) {
      const json& rec = records->back();
      json out = {{"ok", true}, {"job", job}, {"running", false}, {"command", rec.value("command", std::string())},
                  {"uid", rec.value("uid", -1)}, {"report", rec["cpu_report"]},
                  {"text", cosched::rm::cpu_report_text(rec["cpu_report"])}};
      reply = std::move(out);
    }
  }
  if (!reply) {
    std::fprintf(stderr, "cosched-ctl: %s\n", reply.error().message.c_str());
    return cosched::cli::kExitNoRm;
  }
  json& r = *reply;
  if (!r.value("ok", false)) {
    std::fprintf(stderr, "cosched-ctl: %s\n", r.value("error", std::string("request failed")).c_str());
    return cosched::cli::kExitFailed;
  }
  if (status->parsed()) cosched::ctl::filter_jobs(r, view);
  if (pairs->parsed()) {
    if (as_json) {
      json out = {{"policy", r.value("policy", std::string())}, {"pairs", r["pairs"]}};
      out["ranked"] = r["pairs"].is_object() ? cosched::ctl::ranked_pairs(r["pairs"]) : json::array();
      std::printf("%s\n", out.dump(2).c_str());
    } else {
      std::fputs(cosched::ctl::format_pairs(r).c_str(), stdout);
    }
    return cosched::cli::kExitOk;
  }
  if (as_json) {
    std::printf("%s\n", r.dump(2).c_str());
  } else if (status->parsed()) {
    std::fputs(cosched::ctl::format_status(r, view).c_str(), stdout);
  } else if (policy->parsed() || set->parsed()) {
    std::fputs(cosched::ctl::format_status(r).c_str(), stdout);
  } else if (why->parsed()) {
    std::fputs(cosched::ctl::format_why(r).c_str(), stdout);
  } else if (report->parsed()) {
    std::printf("job %ld (%s)%s: %s", job, r.value("command", std::string()).c_str(),
                r.value("running", false) ? ", still running" : "", r.value("text", std::string()).c_str());
  } else if (may->parsed() || expect->parsed()) {
    std::printf("%s: %s\n", r.value("may_start", false) ? "yes" : "no", r.value("reason", std::string()).c_str());
  } else if (policies->parsed()) {
    for (const auto& p : r["policies"]) {
      std::printf("%-14s %s\n", p.value("name", "").c_str(), p.value("summary", "").c_str());
      std::string preset;
      for (const auto& [k, v] : p.value("preset", json::object()).items()) {
        preset += " " + k + "=" + v.get<std::string>();
      }
      if (!preset.empty()) std::printf("%-14s preset:%s\n", "", preset.c_str());
      for (const auto& q : p.value("params", json::array())) {
        std::printf("%-14s %s=%s (%s): %s\n", "", q.value("name", "").c_str(), q.value("default", "").c_str(),
                    q.value("accepts", "").c_str(), q.value("help", "").c_str());
      }
    }
  } else if (shutdown->parsed()) {
    std::printf("cosched-rm is shutting down\n");
  } else if (release->parsed()) {
    std::printf("job %ld released: it runs natively from now on (pid %s)\n", job, r.value("pids", json::array()).dump().c_str());
  }
  if (may->parsed()) return r.value("may_start", false) ? cosched::cli::kExitOk : cosched::cli::kExitFailed;
  return cosched::cli::kExitOk;
}
