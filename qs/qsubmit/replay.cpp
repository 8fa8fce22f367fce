#include "replay.hpp"

#include <poll.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>

#include "paths.hpp"
#include "processes.hpp"

namespace cosched::qsubmit {

namespace {

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

DispatcherConfig dispatcher_config(const ReplaySetup& setup) {
  DispatcherConfig c;
  c.selection = setup.selection;
  c.fixed_ml = setup.fixed_ml;
  c.query_interval = setup.status_interval;
  return c;
}

std::vector<Succession> successions(const LoadedWorkload& workload) {
  std::vector<Succession> out;
  for (const auto& j : workload.jobs) {
    if (j.preceding >= 0) out.push_back({j.id, j.preceding, j.think});
  }
  return out;
}

std::vector<qs::QueuedJob> queue_entries(const LoadedWorkload& workload) {
  std::vector<qs::QueuedJob> out;
  for (const auto& j : workload.jobs) out.push_back({j.id, j.submit, j.request});
  return out;
}

}  // namespace

Replay::Replay(const ReplaySetup& setup)
    : setup_(setup),
      dispatcher_(queue_entries(*setup.workload), dispatcher_config(setup), successions(*setup.workload)) {
  for (const auto& plan : setup_.workload->jobs) {
    Tracked t;
    t.plan = &plan;
    t.record.id = plan.id;
    t.record.app = plan.app;
    t.record.app_class = plan.app_class;
    t.record.submit = plan.submit;
    t.record.ideal = plan.ideal;
    t.record.requested = plan.request;
    jobs_.emplace(plan.id, std::move(t));
  }
}

void Replay::release_successors(std::int64_t id, double t) {
  for (const auto& next : dispatcher_.release_successors(id, t)) jobs_.at(next.id).record.submit = next.submit;
}

Replay::~Replay() {
  // Only reached with live jobs when something threw past run(): never leave a job behind.
  if (!live_.empty()) stop_jobs();
}

double Replay::now() const { return steady_seconds() - start_time_; }

void Replay::run() {
  start_time_ = steady_seconds();
  if (setup_.rm != nullptr) {
    if (auto st = setup_.rm->status()) rm_uptime_at_start_ = st->uptime_s;
  }
  for (;;) {
    if ((stop_signal_ = signals::stop_signal()) != 0) return;
    reap_ended();
    dispatcher_.advance(now());
    if (setup_.rm != nullptr && now() >= next_status_) sample_rm_status();
    if (setup_.rm != nullptr && !rm_lost_ && dispatcher_.wants_rm_answer(now())) ask_may_start();
    // A job that exited after the reap above was already gone for the RM that answered: reaped now, its end
    // drops the answer (the next pass asks again), so it never runs beside the successor that answer admitted.
    // Without this, ml.csv counted 3 running jobs on 2 CPUs for a moment (a clean-clone CI run).
    reap_ended();
    if (!rm_lost_) start_admitted();
    ml_.observe(now(), dispatcher_.running(), dispatcher_.queued());
    if (setup_.progress != nullptr) {
      setup_.progress->update(now(), dispatcher_.queued(), dispatcher_.running(), dispatcher_.done(),
                              dispatcher_.total());
    }
    if (dispatcher_.finished() || (rm_lost_ && dispatcher_.running() == 0)) return;
    sleep_until_next_event();
  }
}

void Replay::reap_ended() {
  for (auto it = live_.begin(); it != live_.end();) {
    auto exit_status = ended_status(it->first);  // its end, now; the reap (which may take seconds) below
    if (!exit_status) {
      ++it;
      continue;
    }
    Tracked& job = jobs_.at(it->second);
    double t = now();
    job.record.end = t;
    job.record.exit_status = *exit_status;
    job.allocation.finish(t);
    job.pid = 0;
    if (setup_.rm != nullptr && !job.seen_at_rm && ran_natively(job.record.id)) unmanaged_.push_back(job.record.id);
    last_allocation_.erase(it->first);
    dispatcher_.ended(job.record.id);
    release_successors(job.record.id, t);
    if (*exit_status != 0 && stop_signal_ == 0 && setup_.progress != nullptr) {
      setup_.progress->note("job " + std::to_string(job.record.id) + " (" + job.record.app + ") exited with status " +
                            std::to_string(*exit_status) + "; see " + setup_.jobs_dir + "/" +
                            std::to_string(job.record.id) + ".err");
    }
    reaper_.reap(it->first);
    it = live_.erase(it);
  }
}

bool Replay::ran_natively(std::int64_t id) const {
  // A job missing from every status sample either ran natively or was too short to be sampled (status
  // comes every ~100 ms); libcosched's one warning line tells them apart ("...; running natively").
  std::ifstream err(setup_.jobs_dir + "/" + std::to_string(id) + ".err");
  std::string line;
  while (std::getline(err, line)) {
    if (line.find("running natively") != std::string::npos) return true;
  }
  return false;
}

void Replay::sample_rm_status() {
  next_status_ = now() + setup_.status_interval;
  auto status = setup_.rm->status();
  if (!status) return rm_request_failed(status.error());
  rm_request_succeeded();
  double t = now();
  std::map<pid_t, const RmJobView*> by_pid;
  for (const auto& j : status->jobs) by_pid[j.pid] = &j;
  bool moved = false;
  for (const auto& [pid, id] : live_) {
    Tracked& job = jobs_.at(id);
    auto it = by_pid.find(pid);
    if (it == by_pid.end()) {
      job.allocation.observe(t, 0, {});  // not (or no longer) at the RM: nothing we can attribute
      continue;
    }
    const RmJobView& view = *it->second;
    int cpus = view.stopped ? 0 : view.allocated;
    std::vector<int> list = view.stopped ? std::vector<int>{} : view.cpus;
    job.allocation.observe(t, cpus, list);
    job.seen_at_rm = true;
    job.record.rm_id = view.id;
    dispatcher_.registered(id);
    auto& last = last_allocation_[pid];
    if (last.first != cpus || last.second != list) moved = true;
    last = {cpus, std::move(list)};
  }
  // An allocation moved (PDPA acted on a report): the may_start answer may have moved with it.
  if (moved) dispatcher_.rm_changed();
}

void Replay::ask_may_start() {
  const double asked_at = now();
  const int starting = dispatcher_.starting(asked_at);
  auto answer = setup_.rm->may_start(dispatcher_.queued(), starting);
  if (!answer) return rm_request_failed(answer.error());
  rm_request_succeeded();
  dispatcher_.rm_answered(*answer, asked_at, starting);
}

void Replay::rm_request_failed(const Error& error) {
  // One failed request is not news (a signal can interrupt a connect); a second of them is worth a line.
  double t = now();
  if (rm_failing_since_ < 0) {
    rm_failing_since_ = t;
    rm_failure_noted_ = false;
    return;
  }
  if (!rm_failure_noted_ && t - rm_failing_since_ >= 1.0) {
    rm_failure_noted_ = true;
    if (setup_.progress != nullptr) setup_.progress->note("cosched-rm does not answer: " + error.message);
  }
  if (!rm_lost_ && t - rm_failing_since_ >= setup_.rm_patience) {
    rm_lost_ = true;
    if (setup_.progress != nullptr) {
      setup_.progress->note("cosched-rm has not answered for " + std::to_string(static_cast<int>(setup_.rm_patience)) +
                            " s: no more jobs start; waiting for the running ones");
    }
  }
}

void Replay::start_admitted() {
  while (auto admitted = dispatcher_.start_next(now())) launch(jobs_.at(admitted->id));
}

void Replay::launch(Tracked& job) {
  const PlannedJob& plan = *job.plan;
  SpawnSpec spec;
  std::string program = find_executable(plan.argv.front());  // checked at load time; $PATH may not be ours later
  if (program.empty()) program = plan.argv.front();
  if (setup_.rm != nullptr) {
    spec.argv = {cosched_run_path(), "--socket", setup_.rm->socket(), "--request", std::to_string(plan.request)};
    if (plan.team == "malleable") spec.argv.emplace_back("--malleable");
    if (plan.team == "fixed") spec.argv.emplace_back("--fixed-team");
    spec.argv.insert(spec.argv.end(), {"--", program});
  } else {
    // Native: the program as it is, its team sized by the standard variable (PDPA paper §5, "IRIX" runs).
    spec.argv = {program};
    spec.env.emplace_back("OMP_NUM_THREADS", std::to_string(plan.request));
  }
  spec.argv.insert(spec.argv.end(), plan.argv.begin() + 1, plan.argv.end());
  std::string base = setup_.jobs_dir + "/" + std::to_string(plan.id);
  spec.stdout_path = base + ".out";
  spec.stderr_path = base + ".err";

  auto pid = spawn(spec);
  if (!pid) {
    job.record.exit_status = 127;  // start/end stay -1: it never ran
    dispatcher_.ended(plan.id);
    release_successors(plan.id, now());
    if (setup_.progress != nullptr) setup_.progress->note("job " + std::to_string(plan.id) + ": " + pid.error().message);
    return;
  }
  job.pid = *pid;
  job.record.pid = *pid;
  job.record.start = now();
  live_[*pid] = plan.id;
  // Without an RM the job holds its request for its whole life.
  if (setup_.rm == nullptr) job.allocation.observe(job.record.start, plan.request, {});
}

void Replay::sleep_until_next_event() {
  double t = now();
  double wake = dispatcher_.next_deadline(t);
  if (setup_.rm != nullptr) wake = std::min(wake, next_status_);
  if (setup_.progress != nullptr) wake = std::min(wake, t + 0.25);  // the elapsed clock on the progress line
  wake = std::min(wake, t + 1.0);  // a safety net: nothing waits on a lost wake-up for long
  int timeout_ms = static_cast<int>(std::ceil(std::max(0.0, wake - t) * 1000.0));
  pollfd p{signals::fd(), POLLIN, 0};
  ::poll(&p, 1, timeout_ms);
  signals::drain();
}

void Replay::stop_jobs() {
  for (const auto& [pid, id] : live_) signal_group(pid, SIGTERM);
  reap_remaining(1.0);
  for (const auto& [pid, id] : live_) signal_group(pid, SIGKILL);
  reap_remaining(2.0);
}

void Replay::reap_remaining(double seconds) {
  double deadline = now() + seconds;
  while (!live_.empty()) {
    reap_ended();
    if (live_.empty() || now() >= deadline) break;
    pollfd p{signals::fd(), POLLIN, 0};
    ::poll(&p, 1, 20);
    signals::drain();
  }
}

std::vector<results::JobRecord> Replay::job_records() const {
  std::vector<results::JobRecord> out;
  for (const auto& plan : setup_.workload->jobs) {  // SWF order
    const Tracked& t = jobs_.at(plan.id);
    results::JobRecord r = t.record;
    AllocationRecorder allocation = t.allocation;
    if (t.pid != 0) allocation.finish(now());  // still alive (could not be reaped): held CPUs until now
    r.allocation = allocation.segments();
    if (r.end < 0 && r.exit_status == 0) r.exit_status = -1;  // never started or never ended: not a success
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace cosched::qsubmit
