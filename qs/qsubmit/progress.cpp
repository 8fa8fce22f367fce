#include "progress.hpp"

#include <fmt/core.h>

#include <cstdio>
#include <map>

namespace cosched::qsubmit {

ProgressLine::ProgressLine(bool enabled, std::string label) : enabled_(enabled), label_(std::move(label)) {}

void ProgressLine::update(double elapsed_s, int queued, int running, int done, int total) {
  if (!enabled_) return;
  std::string counts = fmt::format("queued {}  running {}  done {}/{}", queued, running, done, total);
  // Counts are shown at once; the clock alone ticks 5 times a second.
  if (counts == last_counts_ && elapsed_s - last_draw_ < 0.2) return;
  std::string text = fmt::format("qsubmit [{}] {:7.1f}s  {}", label_, elapsed_s, counts);
  std::fprintf(stderr, "\r%s\x1b[K", text.c_str());
  std::fflush(stderr);
  last_draw_ = elapsed_s;
  last_text_ = std::move(text);
  last_counts_ = std::move(counts);
  drawn_ = true;
}

void ProgressLine::erase() {
  if (!drawn_) return;
  std::fprintf(stderr, "\r\x1b[K");
  drawn_ = false;
}

void ProgressLine::note(const std::string& message) {
  erase();
  std::fprintf(stderr, "qsubmit: %s\n", message.c_str());
  if (enabled_ && !last_text_.empty()) {
    std::fprintf(stderr, "%s", last_text_.c_str());
    drawn_ = true;
  }
  std::fflush(stderr);
}

void ProgressLine::finish() {
  erase();
  std::fflush(stderr);
}

std::string summary_table(const results::Run& run) {
  struct ClassTotals {
    int jobs = 0;
    int failed = 0;
    int ended = 0;
    double response = 0;
    double execution = 0;
    double cpus = 0;
  };
  std::map<std::string, ClassTotals> by_class;
  ClassTotals all;
  for (const auto& job : run.jobs) {
    for (ClassTotals* t : {&by_class[job.app_class], &all}) {
      ++t->jobs;
      if (job.end < 0 || job.exit_status != 0) ++t->failed;
      if (job.end < 0) continue;
      ++t->ended;
      t->response += job.response();
      t->execution += job.execution();
      t->cpus += job.mean_cpus();
    }
  }
  auto row = [](const std::string& name, const ClassTotals& t) {
    auto mean = [&](double sum) { return t.ended > 0 ? fmt::format("{:.2f}", sum / t.ended) : std::string("-"); };
    return fmt::format("{:<16} {:>5} {:>7} {:>14} {:>15} {:>10}\n", name, t.jobs, t.failed, mean(t.response),
                       mean(t.execution), mean(t.cpus));
  };
  std::string out = fmt::format("{:<16} {:>5} {:>7} {:>14} {:>15} {:>10}\n", "class", "jobs", "failed",
                                "response (s)", "execution (s)", "mean cpus");
  for (const auto& [name, totals] : by_class) out += row(name, totals);
  if (by_class.size() > 1) out += row("all", all);
  return out;
}

}  // namespace cosched::qsubmit
