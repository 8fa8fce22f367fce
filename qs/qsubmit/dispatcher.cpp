#include "dispatcher.hpp"

#include <algorithm>
#include <limits>

namespace cosched::qsubmit {

Dispatcher::Dispatcher(std::vector<qs::QueuedJob> jobs, DispatcherConfig config, const std::vector<Succession>& closed)
    : config_(config), total_(static_cast<int>(jobs.size())) {
  std::stable_sort(jobs.begin(), jobs.end(), [](const auto& a, const auto& b) { return a.submit < b.submit; });
  std::map<std::int64_t, const Succession*> after;
  for (const auto& s : closed) after[s.job] = &s;
  std::map<std::int64_t, bool> present;
  for (const auto& j : jobs) present[j.id] = true;
  for (const auto& j : jobs) {
    auto it = after.find(j.id);
    // A predecessor missing from the workload (or the job itself) cannot release it: it arrives at submit.
    if (it != after.end() && it->second->after != j.id && present.count(it->second->after) != 0) {
      held_[it->second->after].push_back({j, it->second->think});
    } else {
      future_.push_back(j);
    }
  }
}

std::vector<qs::QueuedJob> Dispatcher::release_successors(std::int64_t id, double now) {
  std::vector<qs::QueuedJob> out;
  auto it = held_.find(id);
  if (it == held_.end()) return out;
  for (auto& [job, think] : it->second) {
    job.submit = now + think;
    out.push_back(job);
    auto pos = std::upper_bound(future_.begin(), future_.end(), job.submit,
                                [](double t, const qs::QueuedJob& q) { return t < q.submit; });
    future_.insert(pos, job);
  }
  held_.erase(it);
  return out;
}

void Dispatcher::advance(double now) {
  while (!future_.empty() && future_.front().submit <= now) {
    if (queue_.empty()) answer_.reset();  // an answer from before the queue emptied says nothing now
    queue_.push_back(future_.front());
    future_.pop_front();
    changed_ = true;
  }
}

int Dispatcher::starting(double now) const {
  return static_cast<int>(std::count_if(running_.begin(), running_.end(), [&](const auto& entry) {
    return !entry.second.registered && now - entry.second.started < config_.registration_grace;
  }));
}

bool Dispatcher::wants_rm_answer(double now) const {
  // An empty machine admits a job without asking (qs::may_start); so does a fixed ML.
  if (!asks_rm() || queue_.empty() || running_.empty()) return false;
  // A grace that ran out changes what the last answer counted.
  return changed_ || starting(now) != answered_starting_ || now - last_question_ >= config_.query_interval;
}

void Dispatcher::rm_answered(bool may_start, double now, int starting_asked) {
  answer_ = may_start;
  answered_starting_ = starting_asked;
  last_question_ = now;
  changed_ = false;
}

std::optional<qs::QueuedJob> Dispatcher::start_next(double now) {
  if (queue_.empty()) return std::nullopt;
  bool rm_says_yes = answer_.value_or(false) && starting(now) == answered_starting_;
  if (!qs::may_start(running(), config_.fixed_ml, rm_says_yes)) return std::nullopt;

  int index = qs::select_next(queue_, config_.selection);
  qs::QueuedJob job = queue_[static_cast<std::size_t>(index)];
  queue_.erase(queue_.begin() + index);
  running_[job.id] = Running{now, false};
  // The answer admitted this one job; the next needs a new answer, given once the RM has seen this one.
  answer_.reset();
  changed_ = true;
  return job;
}

void Dispatcher::registered(std::int64_t id) {
  auto it = running_.find(id);
  if (it == running_.end() || it->second.registered) return;
  it->second.registered = true;
  answer_.reset();
  changed_ = true;
}

void Dispatcher::ended(std::int64_t id) {
  if (running_.erase(id) == 0) return;
  ++done_;
  answer_.reset();
  changed_ = true;
}

double Dispatcher::next_deadline(double now) const {
  double next = std::numeric_limits<double>::infinity();
  if (!future_.empty()) next = future_.front().submit;
  if (!asks_rm() || queue_.empty() || running_.empty()) return next;
  for (const auto& [id, r] : running_) {
    const double grace_end = r.started + config_.registration_grace;
    if (!r.registered && grace_end > now) next = std::min(next, grace_end);
  }
  return std::min(next, changed_ ? now : last_question_ + config_.query_interval);
}

}  // namespace cosched::qsubmit
