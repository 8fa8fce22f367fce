#include "slurm_replay.hpp"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>

#include "jobcomp.hpp"
#include "qs/qsubmit/paths.hpp"
#include "qs/qsubmit/processes.hpp"
#include "qs/qsubmit/progress.hpp"
#include "qs/results.hpp"
#include "slurm_site.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace cosched::qsubmit {

namespace {

// How often the loop looks at the completion records, and how long a job Slurm no longer lists may go without
// one before qsubmit stops waiting for it (our choices: slurmctld writes the record when the job ends, so a
// missing one means the file is not the one slurmctld writes, e.g. qsubmit runs on another host).
constexpr double kPollS = 0.25;
constexpr double kActiveCheckS = 5.0;
constexpr double kMissingRecordS = 30.0;
constexpr double kAfterCancelS = 15.0;

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

double wall_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

struct Tracked {
  const PlannedJob* plan = nullptr;
  double arrival = -1;        // seconds into the run; -1 while its preceding job has not ended
  std::int64_t slurm_id = -1;
  double submitted = -1;      // seconds into the run, by our clock
  std::optional<CompletionRecord> record;
  double missing_since = -1;  // Slurm no longer lists it and no record came yet
  bool given_up = false;
};

class SlurmReplay {
 public:
  SlurmReplay(const Options& o, const LoadedWorkload& w, const SlurmSite& site, std::string out_dir)
      : o_(o), w_(w), site_(site), out_dir_(std::move(out_dir)), reader_(site.jobcomp_loc),
        progress_(!o.quiet && ::isatty(STDERR_FILENO) != 0, label(o)) {}

  static std::string label(const Options& o) {
    if (!o.label.empty()) return o.label;
    return o.rm_mode == RmMode::native ? "slurm-native" : "slurm-cosched";
  }

  // Writes every batch script first: a disk problem is found before anything is submitted.
  std::string write_scripts() {
    for (const auto& j : w_.jobs) {
      const std::string path = script_path(j);
      std::ofstream out(path, std::ios::trunc);
      out << batch_script(j, o_.rm_mode == RmMode::native);
      out.close();
      if (!out) return "cannot write " + path;
      fs::permissions(path, fs::perms::owner_all | fs::perms::group_read | fs::perms::others_read);
    }
    record_.open(fs::path(out_dir_) / "slurm_jobs.csv", std::ios::trunc);
    record_ << "job,slurm_job_id,submitted\n" << std::flush;
    if (!record_) return "cannot write " + out_dir_ + "/slurm_jobs.csv";
    return {};
  }

  // Returns qsubmit's exit status once every submitted job has a record (or was given up on).
  int run() {
    t0_wall_ = std::floor(wall_now());  // Slurm's records are whole seconds: the run starts on one
    t0_steady_ = steady() - (wall_now() - t0_wall_);
    for (const auto& j : w_.jobs) {
      Tracked t;
      t.plan = &j;
      const bool chained = j.preceding >= 0 && std::any_of(w_.jobs.begin(), w_.jobs.end(),
                                                            [&](const PlannedJob& p) { return p.id == j.preceding; });
      t.arrival = chained ? -1 : j.submit;
      jobs_.emplace(j.id, t);
      order_.push_back(j.id);
    }
    double next_active_check = kActiveCheckS;
    double stop_deadline = -1;
    for (;;) {
      const double now = elapsed();
      if (signals::stop_signal() != 0 && stop_deadline < 0) {
        progress_.note("interrupted (signal " + std::to_string(signals::stop_signal()) + "): cancelling the jobs");
        scancel(unfinished());
        stop_deadline = now + kAfterCancelS;
        submitting_ = false;
      }
      if (submitting_) submit_due(now);
      if (aborted_) {
        progress_.finish();
        return kExitBadInput;
      }
      read_records();
      if (now >= next_active_check) {
        check_missing(now);
        next_active_check = now + kActiveCheckS;
      }
      update_progress(now);
      if (done() || (stop_deadline >= 0 && now >= stop_deadline)) break;
      sleep(now);
    }
    return finish();
  }

 private:
  static double steady() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  }
  [[nodiscard]] double elapsed() const { return steady() - t0_steady_; }
  [[nodiscard]] std::string script_path(const PlannedJob& j) const {
    return (fs::path(out_dir_) / "jobs" / (std::to_string(j.id) + ".sh")).string();
  }

  void submit_due(double now) {
    std::vector<Tracked*> due;
    for (auto id : order_) {
      Tracked& t = jobs_.at(id);
      if (t.slurm_id < 0 && t.arrival >= 0 && t.arrival <= now) due.push_back(&t);
    }
    std::stable_sort(due.begin(), due.end(), [](const Tracked* a, const Tracked* b) { return a->arrival < b->arrival; });
    for (Tracked* t : due) {
      auto id = sbatch(sbatch_options(*t->plan, o_, (fs::path(out_dir_) / "jobs").string(), site_.partition,
                                      site_.has_cosched_option),
                       script_path(*t->plan));
      if (!id) {
        submit_error_ = "job " + std::to_string(t->plan->id) + " (" + t->plan->app + "): " + id.error().message;
        submitting_ = false;
        if (submitted_ == 0) {
          aborted_ = true;  // nothing went to Slurm: bad input, reported once by the caller
          return;
        }
        progress_.note("cannot submit " + submit_error_ + "; no further job is submitted (" + out_dir_ +
                       "/slurm_jobs.csv lists what was)");
        return;
      }
      t->slurm_id = *id;
      t->submitted = elapsed();
      by_slurm_id_[*id] = t->plan->id;
      ++submitted_;
      record_ << t->plan->id << ',' << *id << ',' << t->submitted << '\n' << std::flush;
    }
  }

  void read_records() {
    auto fresh = reader_.read_new();
    if (!fresh) {
      if (!read_error_noted_) progress_.note(fresh.error().message);
      read_error_noted_ = true;
      return;
    }
    for (auto& [sid, rec] : *fresh) {
      auto it = by_slurm_id_.find(sid);
      if (it == by_slurm_id_.end()) continue;  // someone else's job
      Tracked& t = jobs_.at(it->second);
      t.record = rec;
      // Closed workloads: the jobs that follow this one arrive when it ends, plus their think time.
      for (auto& [other, u] : jobs_) {
        if (u.plan->preceding == t.plan->id && u.arrival < 0) {
          u.arrival = std::max(0.0, (rec.end >= 0 ? rec.end - t0_wall_ : elapsed()) + u.plan->think);
        }
      }
    }
  }

  std::set<std::int64_t> unfinished() const {
    std::set<std::int64_t> out;
    for (const auto& [id, t] : jobs_) {
      if (t.slurm_id >= 0 && !t.record && !t.given_up) out.insert(t.slurm_id);
    }
    return out;
  }

  void check_missing(double now) {
    const auto waiting = unfinished();
    if (waiting.empty()) return;
    auto active = active_jobs(waiting);
    if (!active) return;  // slurmctld busy or down: look again later
    for (auto& [id, t] : jobs_) {
      if (t.slurm_id < 0 || t.record || t.given_up) continue;
      if (active->count(t.slurm_id) != 0) {
        t.missing_since = -1;
      } else if (t.missing_since < 0) {
        t.missing_since = now;
      } else if (now - t.missing_since > kMissingRecordS) {
        t.given_up = true;
        progress_.note("Slurm job " + std::to_string(t.slurm_id) + " (job " + std::to_string(id) + ") ended but " +
                       site_.jobcomp_loc + " has no record of it (is qsubmit on slurmctld's host?)");
      }
    }
  }

  [[nodiscard]] bool done() const {
    for (const auto& [id, t] : jobs_) {
      if (t.slurm_id >= 0 && !t.record && !t.given_up) return false;                 // still running
      if (t.slurm_id < 0 && submitting_ && !never_arrives(t)) return false;           // still to submit
    }
    return true;
  }

  // A job of a closed workload whose preceding job never completed never arrives.
  [[nodiscard]] bool never_arrives(const Tracked& t) const {
    if (t.arrival >= 0) return false;
    const Tracked& p = jobs_.at(t.plan->preceding);
    return p.given_up || (p.slurm_id < 0 && never_arrives(p));
  }

  void update_progress(double now) {
    int queued = 0;
    int running = 0;
    int finished = 0;
    for (const auto& [id, t] : jobs_) {
      if (t.record || t.given_up) {
        ++finished;
      } else if (t.slurm_id >= 0) {
        ++running;  // submitted: pending or running, Slurm knows which
      } else if (t.arrival >= 0 && t.arrival <= now) {
        ++queued;
      }
    }
    progress_.update(now, queued, running, finished, static_cast<int>(jobs_.size()));
  }

  void sleep(double now) {
    double wait = kPollS;
    for (const auto& [id, t] : jobs_) {
      if (submitting_ && t.slurm_id < 0 && t.arrival >= 0) wait = std::min(wait, std::max(0.0, t.arrival - now));
    }
    pollfd p{signals::fd(), POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(wait * 1000)) > 0) signals::drain();
  }

  results::JobRecord job_record(const Tracked& t) const {
    results::JobRecord r;
    r.id = t.plan->id;
    r.app = t.plan->app;
    r.app_class = t.plan->app_class;
    r.requested = t.plan->request;
    r.ideal = t.plan->ideal;
    r.submit = t.arrival >= 0 ? t.arrival : t.plan->submit;
    r.exit_status = -1;
    if (!t.record) return r;
    const CompletionRecord& c = *t.record;
    auto rel = [&](double epoch) { return epoch >= 0 ? epoch - t0_wall_ : -1.0; };
    r.submit = rel(c.submit);
    r.start = rel(c.start);
    r.end = c.start >= 0 ? rel(c.end) : -1.0;  // a job cancelled while pending never ran
    if (r.start >= 0) r.exit_status = c.exit_status;
    if (r.start >= 0 && r.end >= r.start) {
      results::CpuSegment seg;
      seg.t0 = r.start;
      seg.t1 = r.end;
      seg.cpus = c.cpus > 0 ? c.cpus : t.plan->request;
      r.allocation.push_back(seg);
    }
    return r;
  }

  int finish() {
    progress_.finish();
    record_.close();
    results::Run run;
    run.name = label(o_);
    const bool native = o_.rm_mode == RmMode::native;
    run.mode = native ? "native" : "real";
    run.policy = native ? "" : "cosched (the node's cosched-rm)";
    run.params["backend"] = "slurm";
    run.params["partition"] = site_.partition;
    run.params["cosched"] = !native;
    run.params["sbatch_options"] = o_.sbatch_options;
    run.params["jobcomp"] = site_.jobcomp_loc;
    run.params["slurm_jobs"] = "slurm_jobs.csv";
    run.params["ml"] = "slurm";
    run.params["trace_procs"] = w_.trace_procs;
    run.params["catalog"] = w_.catalog_path;
    run.machine_cpus = site_.total_cpus;
    run.workload = o_.workload;
    run.time_scale = o_.time_scale;
    run.skipped_lines = w_.skipped_lines;
    for (auto id : order_) run.jobs.push_back(job_record(jobs_.at(id)));
    auto written = results::write_run(out_dir_, run);
    std::ofstream((fs::path(out_dir_) / "decisions.jsonl").string(), std::ios::trunc);  // the same set of files
    if (!written) std::fprintf(stderr, "qsubmit: %s\n", written.error().message.c_str());
    if (!o_.quiet) std::printf("%s", summary_table(run).c_str());
    if (signals::stop_signal() != 0) return 128 + signals::stop_signal();
    int failed = 0;
    std::string list;
    for (const auto& j : run.jobs) {
      if (j.exit_status == 0 && j.end >= 0) continue;
      if (failed++ < 20) {
        list += (list.empty() ? "" : ", ") + std::string("job ") + std::to_string(j.id) +
                (j.start < 0 ? " (never started)" : j.end < 0 ? " (never ended)" : " (exit " + std::to_string(j.exit_status) + ")");
      }
    }
    if (!submit_error_.empty()) std::fprintf(stderr, "qsubmit: submission stopped at %s\n", submit_error_.c_str());
    if (failed > 0) std::fprintf(stderr, "qsubmit: %d job(s) failed: %s\n", failed, list.c_str());
    if (!o_.quiet) std::printf("results: %s\n", out_dir_.c_str());
    return failed == 0 && written ? kExitOk : kExitJobFailed;
  }

 public:
  [[nodiscard]] int submitted() const { return submitted_; }
  [[nodiscard]] const std::string& submit_error() const { return submit_error_; }

 private:
  const Options& o_;
  const LoadedWorkload& w_;
  const SlurmSite& site_;
  std::string out_dir_;
  JobcompReader reader_;
  ProgressLine progress_;
  std::ofstream record_;
  std::map<std::int64_t, Tracked> jobs_;          // by SWF job number
  std::vector<std::int64_t> order_;               // SWF order
  std::map<std::int64_t, std::int64_t> by_slurm_id_;
  double t0_wall_ = 0;
  double t0_steady_ = 0;
  bool submitting_ = true;
  bool read_error_noted_ = false;
  bool aborted_ = false;
  int submitted_ = 0;
  std::string submit_error_;
};

}  // namespace

std::string batch_script(const PlannedJob& job, bool native) {
  std::string s = "#!/bin/sh\n";
  s += "# qsubmit: job " + std::to_string(job.id) + " (" + job.app + "), " + std::to_string(job.request) + " CPU(s)\n";
  if (native) s += "export OMP_NUM_THREADS=" + std::to_string(job.request) + "\n";
  s += "exec";
  for (const auto& a : job.argv) s += " " + shell_quote(a);
  return s + "\n";
}

std::vector<std::string> sbatch_options(const PlannedJob& job, const Options& options, const std::string& jobs_dir,
                                        const std::string& partition, bool plugin) {
  const std::string base = (fs::path(jobs_dir) / std::to_string(job.id)).string();
  std::vector<std::string> out = {"--job-name=qsubmit-" + std::to_string(job.id),
                                  "--output=" + base + ".out",
                                  "--error=" + base + ".err",
                                  "--partition=" + partition,
                                  "--nodes=1",
                                  "--ntasks=1",
                                  "--cpus-per-task=" + std::to_string(job.request)};
  if (options.rm_mode == RmMode::native) {
    if (plugin) out.emplace_back("--no-cosched");  // a site may turn cosched on for every job
  } else if (job.team == "malleable") {
    out.emplace_back("--cosched=malleable");
  } else if (job.team == "fixed") {
    out.emplace_back("--cosched=fixed-team");
  } else {
    out.emplace_back("--cosched");
  }
  out.insert(out.end(), options.sbatch_options.begin(), options.sbatch_options.end());
  return out;
}

int run_slurm_backend(const Options& options) {
  signals::install();
  auto workload = load_workload(options);
  if (!workload) return bad_input(workload.error().message);

  auto site = read_slurm_site(options.partition);
  if (!site) return bad_input("--backend slurm: " + site.error().message);
  if (site->jobcomp_type != "jobcomp/filetxt") {
    return bad_input("--backend slurm reads Slurm's job-completion records, but JobCompType is '" +
                     site->jobcomp_type + "', not jobcomp/filetxt (docs/slurm.md, \"Reading the results\")");
  }
  if (options.rm_mode != RmMode::native && !site->has_cosched_option) {
    // The --no-cosched of native runs needs the plugin too, but a site without it runs natively anyway.
    return bad_input("sbatch has no --cosched option: spank_cosched.so is not in Slurm's plugstack.conf "
                     "(docs/slurm.md); --native replays without cosched");
  }
  scale_requests(*workload, site->node_cpus);

  std::string out_dir = options.out_dir.empty() ? default_out_dir(SlurmReplay::label(options)) : options.out_dir;
  const bool dir_existed = fs::exists(out_dir);
  if (auto msg = claim_out_dir(out_dir); !msg.empty()) return bad_input(msg);
  out_dir = fs::absolute(out_dir).string();  // slurmd writes the jobs' output there, from the job's directory
  auto discard = [&] {
    std::error_code ec;
    if (!dir_existed) fs::remove_all(out_dir, ec);
  };

  SlurmReplay replay(options, *workload, *site, out_dir);
  if (auto msg = replay.write_scripts(); !msg.empty()) {
    discard();
    return bad_input(msg);
  }
  const int status = replay.run();
  if (replay.submitted() == 0 && !replay.submit_error().empty()) {
    // The first submission failed: nothing went to Slurm, so it is bad input (an sbatch option, say).
    discard();
    return bad_input("cannot submit " + replay.submit_error() + "; nothing was submitted");
  }
  return status;
}

}  // namespace cosched::qsubmit
