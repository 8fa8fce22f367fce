// Logging with levels and a per-subsystem mask (STYLE habit 6). The level test happens before any
// formatting, so disabled debug lines cost one load and a compare. The decision log is separate and
// structured (JSON lines, rm/decision_log.hpp): this is for humans.
#pragma once

#include <fmt/core.h>

#include <array>
#include <string_view>

#include "cosched/error.hpp"

namespace cosched::log {

enum class Level : int { error = 0, warn, info, debug, trace };
enum class Sub : int { rm = 0, policy, arena, enforce, ctl, ompt, qs, sim, count_ };

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

}  // namespace cosched::log

#define COSCHED_ERROR(sub, ...) ::cosched::log::logf(::cosched::log::Sub::sub, ::cosched::log::Level::error, __VA_ARGS__)
#define COSCHED_WARN(sub, ...) ::cosched::log::logf(::cosched::log::Sub::sub, ::cosched::log::Level::warn, __VA_ARGS__)
#define COSCHED_INFO(sub, ...) ::cosched::log::logf(::cosched::log::Sub::sub, ::cosched::log::Level::info, __VA_ARGS__)
#define COSCHED_DEBUG(sub, ...) ::cosched::log::logf(::cosched::log::Sub::sub, ::cosched::log::Level::debug, __VA_ARGS__)
#define COSCHED_TRACE(sub, ...) ::cosched::log::logf(::cosched::log::Sub::sub, ::cosched::log::Level::trace, __VA_ARGS__)
