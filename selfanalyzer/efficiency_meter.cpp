#include "selfanalyzer/efficiency_meter.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

namespace cosched::sa {

namespace {

constexpr std::uint64_t kUnknown = ~std::uint64_t{0};

EfficiencyConfig sanitized(EfficiencyConfig c) noexcept {
  c.min_interval_ticks = std::clamp(c.min_interval_ticks, 1, 1 << 20);
  c.aperiodic_interval_ticks = std::clamp(c.aperiodic_interval_ticks, 1, 1 << 20);
  c.max_interval_ticks = std::clamp(c.max_interval_ticks, std::max(c.min_interval_ticks, c.aperiodic_interval_ticks), 1 << 24);
  c.window = std::clamp(c.window, 1, kMaxEfficiencyWindow);
  c.min_intervals = std::clamp(c.min_intervals, 1, c.window);
  if (!(c.max_wait_fraction > 0)) c.max_wait_fraction = 0.1;
  c.load_shift_confirm = std::clamp(c.load_shift_confirm, 1, 64);
  return c;
}

}  // namespace

EfficiencyMeter::EfficiencyMeter(const EfficiencyConfig& config) : cfg_(sanitized(config)) {}

void EfficiencyMeter::Window::push(const Interval& x, int capacity) noexcept {
  if (count < capacity) {
    items[static_cast<std::size_t>((head + count) % kMaxEfficiencyWindow)] = x;
    ++count;
  } else {
    items[static_cast<std::size_t>(head)] = x;
    head = (head + 1) % kMaxEfficiencyWindow;
  }
  // The level: the mean run-queue share of the intervals that know theirs.
  double sum = 0;
  int known = 0;
  for (int i = 0; i < count; ++i) {
    if (at(i).wait >= 0) sum += at(i).wait, ++known;
  }
  level = known > 0 ? sum / known : -1;
}

const EfficiencyMeter::Interval& EfficiencyMeter::Window::at(int i) const noexcept {
  return items[static_cast<std::size_t>((head + i) % kMaxEfficiencyWindow)];
}

void EfficiencyMeter::start_interval(int cpus) noexcept {
  cur_.cpus = cpus;
  cur_.busy = 0;
  cur_.cap = 0;
  cur_.ticks = 0;
  dirty_ = false;
}

bool EfficiencyMeter::tick(std::uint64_t t_ns, int working, int cpus, std::uint64_t iterations,
                           bool periodic) noexcept {
  if (cpus <= 0) {  // no team yet (or gone): nothing to measure against
    cur_.cpus = 0;
    started_ = false;
    return false;
  }
  if (cpus != cur_.cpus) {
    // Another CPU count: its own window. The one just left is kept as `before_`; coming back to it (the end
    // of a baseline, a short excursion) resumes its intervals, which still describe the job at those CPUs.
    if (before_.cpus == cpus) {
      std::swap(now_, before_);
    } else {
      before_ = now_;
      now_.clear();
      now_.load_changed = false;
      now_.cpus = cpus;
    }
    start_interval(cpus);
    cur_.warmup = true;  // threads wake, migrate and warm their caches: the first interval is not kept
    started_ = false;
    if (now_.count >= cfg_.min_intervals) publish(now_);
  }
  if (!started_) {
    cur_.start_ns = t_ns;
    cur_.start_iterations = iterations;
    cur_.start_wait = kUnknown;
    started_ = true;
  }
  cur_.busy += static_cast<std::uint64_t>(std::clamp(working, 0, cpus));
  cur_.cap += static_cast<std::uint64_t>(cpus);
  ++cur_.ticks;
  if (cur_.ticks >= cfg_.max_interval_ticks) return true;
  // The warm-up interval is never kept: it need not span whole iterations.
  if (cur_.warmup) return cur_.ticks >= cfg_.min_interval_ticks;
  if (!periodic) return cur_.ticks >= cfg_.aperiodic_interval_ticks;
  // With a period, an interval ends at the first sample after an iteration boundary that came once it held
  // min_interval_ticks samples: it then spans whole iterations (within one tick at either end).
  if (cur_.ticks == cfg_.min_interval_ticks) cur_.start_iterations = iterations;
  return cur_.ticks > cfg_.min_interval_ticks && iterations != cur_.start_iterations;
}

void EfficiencyMeter::close_interval(std::uint64_t t_ns, std::uint64_t wait_ns) noexcept {
  if (!started_ || cur_.cpus <= 0) return;
  Interval x;
  x.busy = cur_.busy;
  x.cap = cur_.cap;
  x.seconds = t_ns > cur_.start_ns ? static_cast<double>(t_ns - cur_.start_ns) * 1e-9 : 0;
  if (cur_.start_wait != kUnknown && wait_ns != kUnknown && wait_ns >= cur_.start_wait && x.seconds > 0) {
    x.wait = static_cast<double>(wait_ns - cur_.start_wait) * 1e-9 / (x.seconds * cur_.cpus);
  }
  if (!cur_.warmup && !dirty_ && x.cap > 0) admit(x);
  // The next interval starts where this one ended.
  start_interval(cur_.cpus);
  cur_.warmup = false;
  cur_.start_ns = t_ns;
  cur_.start_wait = wait_ns;
}

void EfficiencyMeter::admit(const Interval& x) noexcept {
  Window& w = now_;
  if (x.wait >= 0 && w.level >= 0 && std::fabs(x.wait - w.level) > cfg_.max_wait_fraction) {
    const int dir = x.wait > w.level ? 1 : -1;
    w.shift = dir == w.shift_dir ? w.shift + 1 : 1;
    w.shift_dir = dir;
    if (w.shift < cfg_.load_shift_confirm) {  // a burst: this interval ran under another load
      ++contaminated_;
      return;
    }
    // The load changed for good: the window starts over at the new level, never mixing the two.
    const int cpus = w.cpus;
    w.clear();
    w.cpus = cpus;
    w.load_changed = true;
  } else {
    w.shift = 0;
  }
  w.push(x, cfg_.window);
  if (w.count >= cfg_.min_intervals) {
    w.load_changed = false;
    publish(w);
  }
}

void EfficiencyMeter::publish(const Window& w) noexcept {
  std::uint64_t busy = 0;
  std::uint64_t cap = 0;
  double seconds = 0;
  double sum = 0;
  double sum_sq = 0;
  for (int i = 0; i < w.count; ++i) {
    const Interval& x = w.at(i);
    busy += x.busy;
    cap += x.cap;
    seconds += x.seconds;
    const double e = static_cast<double>(x.busy) / static_cast<double>(x.cap);
    sum += e;
    sum_sq += e * e;
  }
  if (cap == 0) return;
  const double n = w.count;
  const double mean = sum / n;
  const double var = n > 1 ? std::max(0.0, (sum_sq - n * mean * mean) / (n - 1)) : 0;
  estimate_.efficiency = static_cast<double>(busy) / static_cast<double>(cap);
  estimate_.std_error = n > 1 ? std::sqrt(var / n) : 0;
  estimate_.cpu_wait = w.level;
  estimate_.window_s = seconds;
  estimate_.cpus = w.cpus;
  estimate_.intervals = w.count;
  ++estimate_.seq;
}

proto::EfficiencyPending EfficiencyMeter::pending() const noexcept {
  if (cur_.cpus <= 0) return proto::EfficiencyPending::no_team;
  if (now_.load_changed) return proto::EfficiencyPending::load_changing;  // the estimate is of the old load
  if (estimate_.seq > 0 && estimate_.cpus == cur_.cpus) return proto::EfficiencyPending::none;
  return proto::EfficiencyPending::warming;
}

}  // namespace cosched::sa
