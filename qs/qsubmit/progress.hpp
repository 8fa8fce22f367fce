// What the user sees: one updating status line on a terminal while the run goes (stderr), notes that must not
// be garbled by it, and the summary table at the end (stdout).
#pragma once

#include <string>

#include "qs/results.hpp"

namespace cosched::qsubmit {

class ProgressLine {
 public:
  // `enabled`: draw the line at all (a terminal, and not --quiet). `label` starts the line ("pdpa").
  ProgressLine(bool enabled, std::string label);

  // Redraws the line, at most a few times per second (a terminal is slow, the loop is not).
  void update(double elapsed_s, int queued, int running, int done, int total);
  // Prints a message on its own line (stderr), with the progress line moved out of the way.
  void note(const std::string& message);
  // Erases the line for good (before the summary).
  void finish();

 private:
  void erase();
  bool enabled_;
  std::string label_;
  double last_draw_ = -1;
  bool drawn_ = false;
  std::string last_text_;
  std::string last_counts_;
};

// Per application class: jobs, failed, mean response and mean execution time, mean CPUs; then all jobs.
// Jobs that never ended count as failed and stay out of the means.
std::string summary_table(const results::Run& run);

}  // namespace cosched::qsubmit
