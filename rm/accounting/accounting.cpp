#include "accounting.hpp"

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "accounting_path.hpp"
#include "cpu_report.hpp"
#include "cosched/log.hpp"
#include "rm/job/job.hpp"

namespace cosched::rm {

namespace {

std::string user_name(uid_t uid) {
  passwd pw{};
  passwd* found = nullptr;
  char buf[1024];
  if (::getpwuid_r(uid, &pw, buf, sizeof buf, &found) == 0 && found != nullptr) return found->pw_name;
  return std::to_string(uid);
}

nlohmann::json or_null(bool valid, double v) { return valid ? nlohmann::json(v) : nlohmann::json(nullptr); }

}  // namespace

void note_cpus(Job& j, double now, int cpus) {
  if (!j.cpu_steps.empty()) j.cpu_seconds += j.cpu_steps.back().cpus * (now - j.cpu_steps.back().t);
  if (!j.cpu_steps.empty() && j.cpu_steps.back().cpus == cpus) return;
  if (j.cpu_steps.size() >= kMaxCpuSteps) j.cpu_steps.pop_back();
  j.cpu_steps.push_back({now, cpus});
}

void note_estimate(Job& j, const policy::Perf& e) {
  if (!e.valid || e.cpus < 1) return;
  for (auto& k : j.estimate_at) {
    if (k.cpus == e.cpus) {
      k = e;
      return;
    }
  }
  j.estimate_at.push_back(e);  // at most one per allocation: bounded by the CPUs
}

nlohmann::json cpu_report_of(const Job& j, double now) {
  CpuReportInput in;
  for (std::size_t i = 0; i < j.cpu_steps.size(); ++i) {
    const double until = i + 1 < j.cpu_steps.size() ? j.cpu_steps[i + 1].t : now;
    const int cpus = j.cpu_steps[i].cpus;
    auto h = std::find_if(in.held.begin(), in.held.end(), [&](const HeldAllocation& x) { return x.cpus == cpus; });
    if (h == in.held.end()) {
      in.held.push_back({cpus, 0});
      h = in.held.end() - 1;
    }
    h->seconds += std::max(0.0, until - j.cpu_steps[i].t);
  }
  in.measured = j.estimate_at;
  in.cpu_seconds = j.cpu_seconds;
  if (!j.cpu_steps.empty()) in.cpu_seconds += j.cpu_steps.back().cpus * (now - j.cpu_steps.back().t);
  in.elapsed_s = now - j.arrival;
  return cpu_report_json(in);
}

AccountingLog::~AccountingLog() {
  if (fd_ >= 0) ::close(fd_);
}

Status AccountingLog::open(const std::string& path, bool readable_by_all) {
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
  if (fd_ < 0) return make_error(Errc::io_error, "cannot open the accounting file " + path + ": " + std::strerror(errno));
  (void)::fchmod(fd_, readable_by_all ? 0644 : 0640);  // best effort: an existing file may be someone else's
  // Only the tail: ids grow, so the newest records hold the largest; the file itself may be large.
  constexpr off_t kTail = 64 * 1024;
  const off_t size = ::lseek(fd_, 0, SEEK_END);
  const off_t from = size > kTail ? size - kTail : 0;
  std::string tail(static_cast<std::size_t>(size - from), '\0');
  if (!tail.empty() && ::pread(fd_, tail.data(), tail.size(), from) == static_cast<ssize_t>(tail.size())) {
    std::size_t pos = 0;
    if (from > 0) {  // a cut first line is not a record
      const std::size_t nl = tail.find('\n');
      pos = nl == std::string::npos ? tail.size() : nl + 1;
    }
    for (std::size_t end; (end = tail.find('\n', pos)) != std::string::npos; pos = end + 1) {
      auto rec = nlohmann::json::parse(tail.substr(pos, end - pos), nullptr, false);
      if (rec.is_object() && rec.contains("id") && rec["id"].is_number_integer()) {
        last_id_ = std::max(last_id_, rec["id"].get<long>());
      }
    }
  }
  return {};
}

std::string AccountingLog::default_path(const std::string& socket) { return default_accounting_path(socket); }

void AccountingLog::record(const Job& j, const std::string& why, double now, double wall_now,
                           const nlohmann::json& context) {
  if (fd_ < 0) return;
  double cpu_seconds = j.cpu_seconds;
  if (!j.cpu_steps.empty()) cpu_seconds += j.cpu_steps.back().cpus * (now - j.cpu_steps.back().t);
  const double elapsed = now - j.arrival;
  nlohmann::json steps = nlohmann::json::array();
  for (const CpuStep& s : j.cpu_steps) steps.push_back({s.t - j.arrival, s.cpus});
  nlohmann::json rec = {{"id", j.id},
                        {"pid", j.pid},
                        {"uid", j.uid},
                        {"user", user_name(j.uid)},
                        {"command", j.command},
                        {"requested", j.request},
                        {"start", wall_now - elapsed},
                        {"end", wall_now},
                        {"elapsed_s", elapsed},
                        {"cpus_over_time", std::move(steps)},
                        {"cpu_seconds", cpu_seconds},
                        {"mean_cpus", elapsed > 0 ? cpu_seconds / elapsed : 0.0},
                        {"speedup", or_null(j.perf.valid, j.perf.speedup)},
                        {"efficiency", or_null(j.perf.valid, j.perf.efficiency)},
                        {"measured_cpus", j.perf.valid ? nlohmann::json(j.perf.cpus) : nlohmann::json(nullptr)},
                        {"cpu_report", cpu_report_of(j, now)},
                        {"policy_state", j.policy_state},
                        {"slurm_job_id", slurm_id_json(j)},
                        {"end_reason", why}};
  rec.update(context);  // the RM: policy, rm_pid, socket
  std::string line = rec.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  // One write per record with O_APPEND: records of RMs sharing a file never interleave.
  if (::write(fd_, line.data(), line.size()) != static_cast<ssize_t>(line.size())) {
    COSCHED_WARN(rm, "accounting: cannot write the record of job {}: {}", j.id, std::strerror(errno));
  }
}

}  // namespace cosched::rm
