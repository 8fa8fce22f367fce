// Logging with levels and a per-subsystem mask (STYLE habit 6). The level test happens before any
// formatting, so disabled debug lines cost one load and a compare. The decision log is separate and
// structured (JSON lines, rm/accounting/decision_log.hpp): this is for humans.
#pragma once

#include <fmt/core.h>

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "cosched/error.hpp"

namespace cosched::log {

enum class Level : int { error = 0, warn, info, debug, trace };
enum class Sub : int { rm = 0, policy, arena, enforce, ctl, ompt, qs, sim, sensor, count_ };

std::string_view to_string(Sub s) noexcept;
std::string_view to_string(Level l) noexcept;

// Per-subsystem thresholds; defaults to info everywhere.
extern std::array<Level, static_cast<int>(Sub::count_)> g_threshold;

inline bool enabled(Sub s, Level l) noexcept { return l <= g_threshold[static_cast<int>(s)]; }

// Parses "info", "debug", or "rm=debug,policy=trace" (a bare level sets all subsystems first).
Status configure(std::string_view spec);

// The program name printed before each line ("cosched-rm").
void set_program(std::string_view name);

void write(Sub s, Level l, std::string_view msg);

template <typename... Args>
void logf(Sub s, Level l, fmt::format_string<Args...> f, Args&&... args) {
  if (!enabled(s, l)) return;
  write(s, l, fmt::format(f, std::forward<Args>(args)...));
}

// Holds back repeated lines from one call site: at most `burst` lines per `period_s`. What it holds back is
// counted and reported with the next line it lets through. For lines a peer can trigger at will (a flood
// of bad connections, accept() failing for lack of fds) so that no peer can turn the log into a disk filler.
class Throttle {
 public:
  Throttle(int burst, double period_s) : burst_(burst), period_(period_s) {}
  // Whether a line may be written at `now_s` (monotonic seconds); `suppressed` is set to how many lines
  // were held back since the last one let through.
  bool allow(double now_s, std::uint64_t& suppressed);

 private:
  int burst_;
  double period_;
  double window_start_ = 0;
  int used_ = 0;
  bool started_ = false;
  std::uint64_t held_ = 0;
};

// CLOCK_MONOTONIC in seconds (for Throttle).
double monotonic_seconds() noexcept;

// `msg`, with " (N similar lines suppressed)" appended when N > 0.
std::string with_suppressed(std::string msg, std::uint64_t suppressed);

}  // namespace cosched::log

#define COSCHED_ERROR(sub, ...) ::cosched::log::logf(::cosched::log::Sub::sub, ::cosched::log::Level::error, __VA_ARGS__)
#define COSCHED_WARN(sub, ...) ::cosched::log::logf(::cosched::log::Sub::sub, ::cosched::log::Level::warn, __VA_ARGS__)
#define COSCHED_INFO(sub, ...) ::cosched::log::logf(::cosched::log::Sub::sub, ::cosched::log::Level::info, __VA_ARGS__)
#define COSCHED_DEBUG(sub, ...) ::cosched::log::logf(::cosched::log::Sub::sub, ::cosched::log::Level::debug, __VA_ARGS__)
#define COSCHED_TRACE(sub, ...) ::cosched::log::logf(::cosched::log::Sub::sub, ::cosched::log::Level::trace, __VA_ARGS__)

// A log line through a Throttle: COSCHED_THROTTLED(throttle, rm, warn, "accept: {}", why).
#define COSCHED_THROTTLED(throttle, sub, lvl, ...)                                                                \
  do {                                                                                                            \
    std::uint64_t cosched_held_ = 0;                                                                              \
    if (::cosched::log::enabled(::cosched::log::Sub::sub, ::cosched::log::Level::lvl) &&                          \
        (throttle).allow(::cosched::log::monotonic_seconds(), cosched_held_)) {                                   \
      ::cosched::log::write(::cosched::log::Sub::sub, ::cosched::log::Level::lvl,                                 \
                            ::cosched::log::with_suppressed(fmt::format(__VA_ARGS__), cosched_held_));            \
    }                                                                                                             \
  } while (0)
