#include "cosched/log.hpp"

#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <mutex>
#include <string>

namespace cosched::log {

std::array<Level, static_cast<int>(Sub::count_)> g_threshold = [] {
  std::array<Level, static_cast<int>(Sub::count_)> a{};
  a.fill(Level::info);
  return a;
}();

namespace {
constexpr std::array<std::string_view, static_cast<int>(Sub::count_)> kSubNames = {
    "rm", "policy", "arena", "enforce", "ctl", "ompt", "qs", "sim", "sensor"};
constexpr std::array<std::string_view, 5> kLevelNames = {"error", "warn", "info", "debug", "trace"};

std::string g_program = "cosched";
std::mutex g_mutex;

bool parse_level(std::string_view s, Level& out) {
  for (std::size_t i = 0; i < kLevelNames.size(); ++i) {
    if (kLevelNames[i] == s) {
      out = static_cast<Level>(i);
      return true;
    }
  }
  return false;
}
}  // namespace

std::string_view to_string(Sub s) noexcept { return kSubNames.at(static_cast<std::size_t>(s)); }
std::string_view to_string(Level l) noexcept { return kLevelNames.at(static_cast<std::size_t>(l)); }

Status configure(std::string_view spec) {
  std::size_t pos = 0;
  while (pos < spec.size()) {
    auto end = spec.find(',', pos);
    if (end == std::string_view::npos) end = spec.size();
    auto item = spec.substr(pos, end - pos);
    pos = end + 1;
    if (item.empty()) continue;
    auto eq = item.find('=');
    Level lvl{};
    if (eq == std::string_view::npos) {
      if (!parse_level(item, lvl)) {
        return make_error(Errc::invalid_argument, fmt::format("unknown log level '{}' (error|warn|info|debug|trace)", item));
      }
      g_threshold.fill(lvl);
      continue;
    }
    auto name = item.substr(0, eq);
    if (!parse_level(item.substr(eq + 1), lvl)) {
      return make_error(Errc::invalid_argument, fmt::format("unknown log level in '{}'", item));
    }
    bool found = false;
    for (std::size_t i = 0; i < kSubNames.size(); ++i) {
      if (kSubNames[i] == name) {
        g_threshold[i] = lvl;
        found = true;
      }
    }
    if (!found) return make_error(Errc::invalid_argument, fmt::format("unknown log subsystem '{}'", name));
  }
  return {};
}

void set_program(std::string_view name) { g_program = name; }

void write(Sub s, Level l, std::string_view msg) {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  tm tmv{};
  localtime_r(&ts.tv_sec, &tmv);
  char stamp[32];
  strftime(stamp, sizeof stamp, "%H:%M:%S", &tmv);
  std::lock_guard lock(g_mutex);
  fmt::print(stderr, "{}.{:03d} {}[{}] {} {}: {}\n", stamp, ts.tv_nsec / 1000000, g_program, getpid(),
             to_string(l), to_string(s), msg);
  std::fflush(stderr);
}

bool Throttle::allow(double now_s, std::uint64_t& suppressed) {
  if (!started_ || now_s - window_start_ >= period_) {
    started_ = true;
    window_start_ = now_s;
    used_ = 0;
  }
  if (used_ >= burst_) {
    ++held_;
    suppressed = 0;
    return false;
  }
  ++used_;
  suppressed = held_;
  held_ = 0;
  return true;
}

double monotonic_seconds() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

std::string with_suppressed(std::string msg, std::uint64_t suppressed) {
  if (suppressed > 0) msg += fmt::format(" ({} similar line{} suppressed)", suppressed, suppressed == 1 ? "" : "s");
  return msg;
}

}  // namespace cosched::log
