#include "sim/cli/progress.hpp"

#include <unistd.h>

#include <cstdio>

namespace cosched::sim {

ProgressLine::ProgressLine(bool wanted)
    : enabled_(wanted && ::isatty(STDERR_FILENO) == 1),
      start_(std::chrono::steady_clock::now()),
      last_(start_) {}

void ProgressLine::update(double sim_time, std::size_t finished, std::size_t total) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (drawn_ && now - last_ < std::chrono::milliseconds(250)) return;
  last_ = now;
  drawn_ = true;
  const double wall = std::chrono::duration<double>(now - start_).count();
  const double pct = total > 0 ? 100.0 * static_cast<double>(finished) / static_cast<double>(total) : 100.0;
  std::fprintf(stderr, "\rcosched-sim: t=%.0f s  %zu/%zu jobs done (%.1f%%)  %.1f s wall   ", sim_time, finished,
               total, pct, wall);
  std::fflush(stderr);
}

void ProgressLine::finish() {
  if (!drawn_) return;
  std::fprintf(stderr, "\r%80s\r", "");
  std::fflush(stderr);
  drawn_ = false;
}

}  // namespace cosched::sim
