#include "per_thread.hpp"

#include <dirent.h>

#include <cmath>
#include <set>
#include <vector>

namespace cosched::sensors {

namespace {

std::set<pid_t> tasks_of(pid_t pid) {
  std::set<pid_t> out;
  const std::string dir = "/proc/" + std::to_string(pid) + "/task";
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return out;
  while (dirent* e = ::readdir(d)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    out.insert(static_cast<pid_t>(std::atol(e->d_name)));
  }
  ::closedir(d);
  return out;
}

}  // namespace

Status PerThreadCounting::attach(policy::JobId id, pid_t pid) {
  Job j;
  j.pid = pid;
  const std::set<pid_t> tids = tasks_of(pid);
  if (tids.empty()) return make_error(Errc::not_found, "no threads in /proc/" + std::to_string(pid) + "/task");
  for (pid_t tid : tids) {
    auto h = start_thread(tid);
    if (!h) {
      for (auto& [t, handle] : j.threads) stop_thread(handle);
      return h.error();
    }
    j.threads[tid] = *h;
  }
  jobs_[id] = std::move(j);
  return {};
}

void PerThreadCounting::forget(policy::JobId id) {
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return;
  for (auto& [tid, h] : it->second.threads) stop_thread(h);
  jobs_.erase(it);
}

void PerThreadCounting::stop_all() {
  for (auto& [id, j] : jobs_) {
    for (auto& [tid, h] : j.threads) stop_thread(h);
  }
  jobs_.clear();
}

std::uint64_t PerThreadCounting::total(Job& j) {
  const std::set<pid_t> now = tasks_of(j.pid);
  // Threads that ended: their last count stays in the total.
  for (auto it = j.threads.begin(); it != j.threads.end();) {
    if (now.count(it->first) != 0) {
      ++it;
      continue;
    }
    if (auto v = read_thread(it->second)) j.last[it->first] = *v;
    j.retired += j.last[it->first];
    j.last.erase(it->first);
    stop_thread(it->second);
    it = j.threads.erase(it);
  }
  for (pid_t tid : now) {
    if (j.threads.count(tid) != 0) continue;
    if (auto h = start_thread(tid)) j.threads[tid] = *h;  // a thread that cannot be counted is skipped
  }
  std::uint64_t sum = j.retired;
  for (auto& [tid, h] : j.threads) {
    if (auto v = read_thread(h)) j.last[tid] = *v;
    sum += j.last[tid];
  }
  return sum;
}

void PerThreadCounting::open(policy::JobId id, double now) {
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return;
  it->second.opened_at = total(it->second);
  it->second.opened_t = now;
}

void PerThreadCounting::sample(const std::vector<Interval>& jobs, std::vector<Reading>& out) {
  for (const auto& iv : jobs) {
    auto it = jobs_.find(iv.id);
    if (it == jobs_.end()) continue;
    Job& j = it->second;
    const std::uint64_t now = total(j);
    // Only an interval this backend saw open (the job may have been stopped and resumed since).
    const bool same = j.opened_at && std::fabs(j.opened_t - iv.start) < 1e-6 && now >= *j.opened_at;
    if (same && iv.length() > 0) {
      out.push_back(Reading::rate(iv.id, static_cast<double>(now - *j.opened_at) * bytes_per_count_ / iv.length()));
    }
    j.opened_at.reset();
  }
}

}  // namespace cosched::sensors
