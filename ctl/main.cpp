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

// Every option and subcommand, and where each one's value lands: the options table, and nothing else.
struct CtlArgs {
  std::string socket = cosched::wire::default_socket_path();
  bool as_json = false;
  int timeout_ms = 5000;
  cosched::ctl::StatusView view;
  std::string columns;
  long job = 0;
  std::string history_file;
  std::string name;
  std::vector<std::string> kvs;
  long long slurm_job = -1;
  cosched::ctl::HistoryFilter history_filter;
  CLI::App* status = nullptr;
  CLI::App* why = nullptr;
  CLI::App* report = nullptr;
  CLI::App* release = nullptr;
  CLI::App* policy = nullptr;
  CLI::App* set = nullptr;
  CLI::App* may = nullptr;
  CLI::App* policies = nullptr;
  CLI::App* shutdown = nullptr;
  CLI::App* expect = nullptr;
  CLI::App* pairs = nullptr;
  CLI::App* history = nullptr;
};

void add_options(CLI::App& app, CtlArgs& a) {
  app.set_version_flag("--version", std::string("cosched-ctl ") + COSCHED_VERSION);
  app.require_subcommand(1);
  app.add_option("--socket,-s", a.socket, "RM socket (env COSCHED_SOCKET)")->capture_default_str();
  app.add_option("--timeout-ms", a.timeout_ms, "give up on an RM that does not answer within this many ms (exit 3)")->capture_default_str();

  a.status = app.add_subcommand("status", "jobs, allocations, CPUs and measurements");
  a.status->add_flag("--json", a.as_json, "machine-readable output");
  a.status->add_option("--format,-o", a.columns, "the table's columns, comma-separated, e.g. job,user,state,command "
                                                 "(known: " + cosched::ctl::known_columns() + ")");
  a.status->add_option("--user,-u", a.view.user, "only this user's jobs (name or uid)");
  a.status->add_option("--state", a.view.state,
                       "only jobs in this state: the policy's (e.g. INC, STABLE) or running, stopped, suspended");
  a.why = app.add_subcommand("why", "the last decisions about a job, with their reasons");
  a.why->add_option("job", a.job, "job id (from status)")->required();
  a.why->add_flag("--json", a.as_json, "machine-readable output");
  a.report = app.add_subcommand("report", "what a job's CPUs bought: the efficiency measured at each allocation "
                                          "it held, its CPU·seconds, and what fewer CPUs would have given");
  a.report->add_option("job", a.job, "job id (from status or history)")->required();
  a.report->add_flag("--json", a.as_json, "machine-readable output");
  a.report->add_option("--file", a.history_file,
                       "accounting records to read for a job the RM no longer knows (default: the socket's path with "
                       ".accounting.jsonl for .sock)");
  a.release = app.add_subcommand("release", "give one of your jobs back to the native runtime for the rest of "
                                            "its life (its requested team, unconfined, never stopped)");
  a.release->add_option("job", a.job, "job id (from status)")->required();
  a.release->add_flag("--json", a.as_json, "machine-readable output");
  a.policy = app.add_subcommand("policy", "switch policy, or change parameters of the current one");
  a.policy->add_option("name", a.name, "policy name (see `cosched-ctl policies`)")->required();
  a.policy->add_option("params", a.kvs, "NAME=VALUE parameters");
  a.policy->add_flag("--json", a.as_json, "machine-readable output");
  a.set = app.add_subcommand("set", "change parameters of the current policy");
  a.set->add_option("params", a.kvs, "NAME=VALUE parameters")->required();
  a.set->add_flag("--json", a.as_json, "machine-readable output");
  a.may = app.add_subcommand("may-start", "may the queuing system start a job now? (exit 0 yes, 1 no)");
  a.may->add_flag("--json", a.as_json, "machine-readable output");
  a.policies = app.add_subcommand("policies", "list the policies this RM knows, each with its parameters (default, accepted values, meaning)");
  a.shutdown = app.add_subcommand("shutdown", "release every job and stop the RM");
  a.expect = app.add_subcommand("expect",
                                "a Slurm job is starting on this node (cosched-slurm-prolog): admit nothing more "
                                "until it registers, at most 5 s (docs/slurm.md)");
  a.expect->add_option("slurm_job_id", a.slurm_job, "the Slurm job id")->required()->check(CLI::Range(0LL, 4294967295LL));
  a.pairs = app.add_subcommand("pairs", "the co-scheduling policy's learned slowdowns (worst pair first), "
                                        "progress and rates alone");
  a.pairs->add_flag("--json", a.as_json, "machine-readable output: the pairs ranked, and what the policy reports");
  a.history = app.add_subcommand("history", "jobs that left the RM, from its accounting records (no RM needed)");
  a.history->add_option("--file", a.history_file,
                        "accounting records to read (default: the socket's path with .accounting.jsonl for .sock)");
  a.history->add_option("--user,-u", a.history_filter.user, "only this user's jobs (name or uid)");
  a.history->add_option("--job,-j", a.history_filter.job, "only this RM job id");
  a.history->add_option("--pid", a.history_filter.pid, "only the job with this process id");
  a.history->add_option("--slurm-job", a.history_filter.slurm_job, "only the processes of this Slurm job (--cosched jobs)");
  a.history->add_option("--last,-n", a.history_filter.last, "only the last N jobs");
  a.history->add_flag("--json", a.as_json, "machine-readable output (one record per line, as stored)");
}

std::string accounting_file(const CtlArgs& a) {
  return a.history_file.empty() ? cosched::rm::default_accounting_path(a.socket) : a.history_file;
}

int show_history(const CtlArgs& a) {
  // Read from the file, not the RM: the records outlive it (and answer while it is down).
  const std::string file = accounting_file(a);
  std::size_t skipped = 0;
  auto records = cosched::ctl::read_history(file, a.history_filter, skipped);
  if (!records) {
    std::fprintf(stderr, "cosched-ctl: %s\n", records.error().message.c_str());
    return cosched::cli::kExitUsage;
  }
  if (skipped > 0) std::fprintf(stderr, "cosched-ctl: %zu unreadable line(s) in %s skipped\n", skipped, file.c_str());
  if (a.as_json) {
    for (const auto& r : *records) std::printf("%s\n", r.dump().c_str());
  } else {
    std::fputs(cosched::ctl::format_history(*records).c_str(), stdout);
  }
  return cosched::cli::kExitOk;
}

// The one request the parsed subcommand sends; ok turns false on a malformed NAME=VALUE.
json request_of(const CtlArgs& a, bool& ok) {
  if (a.status->parsed() || a.pairs->parsed()) return {{"cmd", "status"}};
  if (a.why->parsed()) return {{"cmd", "why"}, {"job", a.job}};
  if (a.report->parsed()) return {{"cmd", "report"}, {"job", a.job}};
  if (a.release->parsed()) return {{"cmd", "release"}, {"job", a.job}};
  if (a.policy->parsed()) return {{"cmd", "policy"}, {"name", a.name}, {"params", params_object(a.kvs, ok)}};
  if (a.set->parsed()) return {{"cmd", "set"}, {"params", params_object(a.kvs, ok)}};
  if (a.may->parsed()) return {{"cmd", "may_start"}};
  if (a.policies->parsed()) return {{"cmd", "policies"}};
  if (a.shutdown->parsed()) return {{"cmd", "shutdown"}};
  if (a.expect->parsed()) return {{"cmd", "expect"}, {"slurm_job_id", a.slurm_job}};
  return json();
}

// The RM keeps the reports of its last departed jobs only, and may be down: the accounting record has it.
void report_from_history(const CtlArgs& a, cosched::Result<json>& reply) {
  cosched::ctl::HistoryFilter only;
  only.job = a.job;
  std::size_t skipped = 0;
  auto records = cosched::ctl::read_history(accounting_file(a), only, skipped);
  if (!records || records->empty() || !records->back().contains("cpu_report")) return;
  const json& rec = records->back();
  reply = json{{"ok", true}, {"job", a.job}, {"running", false}, {"command", rec.value("command", std::string())},
               {"uid", rec.value("uid", -1)}, {"report", rec["cpu_report"]},
               {"text", cosched::rm::cpu_report_text(rec["cpu_report"])}};
}

void print_policies(const json& r) {
  for (const auto& p : r["policies"]) {
    std::printf("%-14s %s\n", p.value("name", "").c_str(), p.value("summary", "").c_str());
    std::string preset;
    for (const auto& [k, v] : p.value("preset", json::object()).items()) preset += " " + k + "=" + v.get<std::string>();
    if (!preset.empty()) std::printf("%-14s preset:%s\n", "", preset.c_str());
    for (const auto& q : p.value("params", json::array())) {
      std::printf("%-14s %s=%s (%s): %s\n", "", q.value("name", "").c_str(), q.value("default", "").c_str(),
                  q.value("accepts", "").c_str(), q.value("help", "").c_str());
    }
  }
}

void print_pairs(const CtlArgs& a, json& r) {
  if (a.as_json) {
    json out = {{"policy", r.value("policy", std::string())}, {"pairs", r["pairs"]}};
    out["ranked"] = r["pairs"].is_object() ? cosched::ctl::ranked_pairs(r["pairs"]) : json::array();
    std::printf("%s\n", out.dump(2).c_str());
  } else {
    std::fputs(cosched::ctl::format_pairs(r).c_str(), stdout);
  }
}

// A successful reply, as the subcommand's text (or the reply itself with --json).
void print_reply(const CtlArgs& a, json& r) {
  if (a.status->parsed()) cosched::ctl::filter_jobs(r, a.view);
  if (a.pairs->parsed()) return print_pairs(a, r);
  if (a.as_json) {
    std::printf("%s\n", r.dump(2).c_str());
  } else if (a.status->parsed()) {
    std::fputs(cosched::ctl::format_status(r, a.view).c_str(), stdout);
  } else if (a.policy->parsed() || a.set->parsed()) {
    std::fputs(cosched::ctl::format_status(r).c_str(), stdout);
  } else if (a.why->parsed()) {
    std::fputs(cosched::ctl::format_why(r).c_str(), stdout);
  } else if (a.report->parsed()) {
    std::printf("job %ld (%s)%s: %s", a.job, r.value("command", std::string()).c_str(),
                r.value("running", false) ? ", still running" : "", r.value("text", std::string()).c_str());
  } else if (a.may->parsed() || a.expect->parsed()) {
    std::printf("%s: %s\n", r.value("may_start", false) ? "yes" : "no", r.value("reason", std::string()).c_str());
  } else if (a.policies->parsed()) {
    print_policies(r);
  } else if (a.shutdown->parsed()) {
    std::printf("cosched-rm is shutting down\n");
  } else if (a.release->parsed()) {
    std::printf("job %ld released: it runs natively from now on (pid %s)\n", a.job,
                r.value("pids", json::array()).dump().c_str());
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"cosched-ctl: inspect and steer a running cosched-rm"};
  CtlArgs a;
  add_options(app, a);
  COSCHED_CLI_PARSE(app, argc, argv);
  if (a.history->parsed()) return show_history(a);

  bool ok = true;
  const json req = request_of(a, ok);
  if (a.status->parsed() && !a.columns.empty()) {
    auto parsed = cosched::ctl::parse_columns(a.columns);
    if (!parsed) {
      std::fprintf(stderr, "cosched-ctl: %s\n", parsed.error().message.c_str());
      return cosched::cli::kExitUsage;
    }
    a.view.columns = *parsed;
  }
  if (!ok) return cosched::cli::kExitUsage;

  auto reply = cosched::ctl::request(a.socket, req, a.timeout_ms);
  if (a.report->parsed() && (!reply || !reply->value("ok", false))) report_from_history(a, reply);
  if (!reply) {
    std::fprintf(stderr, "cosched-ctl: %s\n", reply.error().message.c_str());
    return cosched::cli::kExitNoRm;
  }
  json& r = *reply;
  if (!r.value("ok", false)) {
    std::fprintf(stderr, "cosched-ctl: %s\n", r.value("error", std::string("request failed")).c_str());
    return cosched::cli::kExitFailed;
  }
  print_reply(a, r);
  if (a.may->parsed()) return r.value("may_start", false) ? cosched::cli::kExitOk : cosched::cli::kExitFailed;
  return cosched::cli::kExitOk;
}
