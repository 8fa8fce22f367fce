// Random variates for the workload generator, implemented here on top of std::mt19937_64 (whose output
// sequence the C++ standard fixes) rather than with <random>'s distributions, whose algorithms differ
// between standard libraries: the same seed must give the same workload on every build.
#pragma once

#include <cmath>
#include <cstdint>
#include <numbers>
#include <random>

namespace cosched::swfgen {

class Random {
 public:
  explicit Random(std::uint64_t seed) : engine_(seed) {}

  // Uniform in the open interval (0, 1): safe under log().
  double uniform() { return (static_cast<double>(engine_() >> 11) + 0.5) * 0x1.0p-53; }
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  // Integer in [lo, hi].
  std::int64_t integer(std::int64_t lo, std::int64_t hi) {
    auto span = static_cast<std::uint64_t>(hi - lo) + 1;
    return lo + static_cast<std::int64_t>(static_cast<std::uint64_t>(uniform() * static_cast<double>(span)) % span);
  }

  double exponential(double mean) { return -mean * std::log(uniform()); }

  // Standard normal by Box-Muller; the second value of each pair is kept for the next call.
  double normal() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    double r = std::sqrt(-2.0 * std::log(uniform()));
    double t = 2.0 * std::numbers::pi * uniform();
    spare_ = r * std::sin(t);
    has_spare_ = true;
    return r * std::cos(t);
  }

  // Lognormal with the given mean and log-space standard deviation sigma (sigma 0: always the mean).
  double lognormal_mean(double mean, double sigma) {
    if (sigma <= 0) return mean;
    double mu = std::log(mean) - sigma * sigma / 2;
    return std::exp(mu + sigma * normal());
  }

  // Gamma(shape, scale) by Marsaglia & Tsang (2000); shape < 1 through the u^(1/shape) boost.
  double gamma(double shape, double scale) {
    if (shape < 1) return gamma(shape + 1, scale) * std::pow(uniform(), 1.0 / shape);
    const double d = shape - 1.0 / 3.0;
    const double c = 1.0 / std::sqrt(9.0 * d);
    for (;;) {
      double x = normal();
      double v = 1 + c * x;
      if (v <= 0) continue;
      v = v * v * v;
      double u = uniform();
      if (std::log(u) < 0.5 * x * x + d - d * v + d * std::log(v)) return d * v * scale;
    }
  }

 private:
  std::mt19937_64 engine_;
  double spare_ = 0;
  bool has_spare_ = false;
};

}  // namespace cosched::swfgen
