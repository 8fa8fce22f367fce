#include "sim/gen/generator.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <functional>
#include <set>

#include "random.hpp"

namespace cosched::swfgen {

namespace {

// Lublin & Feitelson, "The workload on parallel supercomputers: modeling the characteristics of rigid
// jobs", JPDC 63(11), 2003: the parameters fitted over all jobs (no batch/interactive split).
struct LublinParams {
  double serial_prob = 0.244;   // P(job is serial)
  double pow2_prob = 0.576;     // P(parallel job has a power-of-two size)
  double u_low = 0.8;           // two-stage uniform over log2(size): [u_low, u_med] w.p. u_prob, else
  double u_med_below_hi = 2.5;  //   [u_med, u_hi]; u_hi = log2(max_procs), u_med = u_hi - 2.5
  double u_prob = 0.86;
  double a1 = 4.2, b1 = 0.94;   // hyper-gamma over ln(run time): Gamma(a1, b1) w.p. p, else Gamma(a2, b2),
  double a2 = 312, b2 = 0.03;   //   p = pa * size + pb clamped to [0, 1] (bigger jobs run longer)
  double pa = -0.0054, pb = 0.78;
};
constexpr LublinParams kLublin{};

std::uint64_t splitmix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

struct Body {
  std::int64_t executable;
  std::int64_t procs;
  double run_s;
  [[nodiscard]] double demand() const { return static_cast<double>(procs) * run_s; }
};

// Draws job bodies (application, size, run time) from one random stream, so a body sequence does not
// change when only the arrival settings (load, duration) do.
class BodySource {
 public:
  BodySource(const Config& c, std::uint64_t seed) : c_(c), rng_(seed) {
    double total = 0;
    for (const auto& a : c.apps) cumulative_.push_back(total += a.weight);
  }

  std::size_t pick_app() {
    double u = rng_.uniform() * cumulative_.back();
    auto it = std::upper_bound(cumulative_.begin(), cumulative_.end(), u);
    return std::min(static_cast<std::size_t>(it - cumulative_.begin()), cumulative_.size() - 1);
  }

  Body draw(std::size_t app_index) {
    const AppShare& app = c_.apps[app_index];
    Body b{app.executable, app.procs > 0 ? app.procs : draw_size(), 0};
    for (int attempt = 0; attempt < 1000; ++attempt) {
      b.run_s = draw_runtime(app, b.procs);
      if (b.run_s <= c_.max_runtime_s) break;
    }
    b.run_s = std::min(b.run_s, c_.max_runtime_s);
    b.run_s = c_.integer_times ? std::max(1.0, std::round(b.run_s)) : std::max(0.001, std::round(b.run_s * 1000) / 1000);
    return b;
  }

 private:
  std::int64_t draw_size() {
    const double p = static_cast<double>(c_.max_procs);
    if (c_.model == Model::lublin) return lublin_size();
    if (c_.pow2_sizes) {
      auto k = rng_.integer(0, static_cast<std::int64_t>(std::floor(std::log2(p))));
      return std::int64_t{1} << k;
    }
    // Discrete log-uniform: P(size = k) proportional to ln((k + 1) / k), k in [1, max_procs].
    auto size = static_cast<std::int64_t>(std::floor(std::exp(rng_.uniform() * std::log(p + 1))));
    return std::clamp<std::int64_t>(size, 1, c_.max_procs);
  }

  std::int64_t lublin_size() {
    double u = rng_.uniform();
    if (u <= kLublin.serial_prob || c_.max_procs == 1) return 1;
    const double hi = std::log2(static_cast<double>(c_.max_procs));
    const double low = std::min(kLublin.u_low, hi);
    const double med = std::clamp(hi - kLublin.u_med_below_hi, low, hi);
    double lg = rng_.uniform() <= kLublin.u_prob ? rng_.uniform(low, med) : rng_.uniform(med, hi);
    if (u <= kLublin.serial_prob + kLublin.pow2_prob) lg = std::round(lg);
    auto size = static_cast<std::int64_t>(std::llround(std::exp2(lg)));
    return std::clamp<std::int64_t>(size, 1, c_.max_procs);
  }

  double draw_runtime(const AppShare& app, std::int64_t procs) {
    if (app.runtime_mean_s > 0) return rng_.lognormal_mean(app.runtime_mean_s, c_.runtime_sigma);
    if (c_.model == Model::lublin) {
      double p = std::clamp(kLublin.pa * static_cast<double>(procs) + kLublin.pb, 0.0, 1.0);
      double ln_run = rng_.uniform() <= p ? rng_.gamma(kLublin.a1, kLublin.b1) : rng_.gamma(kLublin.a2, kLublin.b2);
      return std::exp(ln_run);
    }
    return rng_.lognormal_mean(c_.runtime_mean_s, c_.runtime_sigma);
  }

  const Config& c_;
  Random rng_;
  std::vector<double> cumulative_;
};

// Adds bodies while each one brings the total demand closer to `target` (never overshooting by more than
// half a job): small PDPA workloads have only a handful of big jobs, so "stop after crossing" would be
// off by a whole job. False when the job count passes the same bound as --jobs.
constexpr std::size_t kMaxJobs = 100'000'000;

bool fill_to(std::vector<Body>& out, double target, const std::function<Body()>& next) {
  double sum = 0;
  for (;;) {
    Body b = next();
    if (sum + b.demand() / 2 >= target) return true;
    if (out.size() >= kMaxJobs) return false;
    sum += b.demand();
    out.push_back(b);
  }
}

double quantize(double t, bool integer) { return integer ? std::floor(t) : std::floor(t * 1000) / 1000; }

swf::Job to_job(const Body& b, std::int64_t number, double submit, const Config& c) {
  swf::Job j;
  j.number = number;
  j.submit_s = submit;
  j.run_s = b.run_s;
  j.allocated_procs = b.procs;  // a rigid model job runs on what it asks for
  j.requested_procs = b.procs;
  if (c.estimate_factor > 0) j.requested_time_s = std::ceil(c.estimate_factor * b.run_s);
  j.status = swf::kCompleted;
  j.executable = b.executable;
  return j;
}

std::string num(double v) { return fmt::format("{}", v); }

}  // namespace

Status validate(const Config& c) {
  auto bad = [](const std::string& what) { return Status(make_error(Errc::invalid_argument, what)); };
  if ((c.jobs > 0) == (c.duration_s > 0)) return bad("give exactly one of --jobs N and --duration SECONDS");
  if (c.jobs < 0 || c.jobs > static_cast<std::int64_t>(kMaxJobs)) return bad("--jobs must be in [1, 100000000]");
  if (!(c.duration_s >= 0) || c.duration_s > 1e10) return bad("--duration must be positive");
  if (c.max_procs < 1 || c.max_procs > (1 << 24)) return bad("--max-procs must be in [1, 16777216]");
  if (!(c.load > 0) || c.load > 1000) return bad("--load must be in (0, 1000]");
  if (!(c.mean_interarrival_s >= 0)) return bad("--mean-interarrival must not be negative");
  if (c.mean_interarrival_s > 0 && c.jobs == 0) return bad("--mean-interarrival needs --jobs (with --duration the load sets the rate)");
  if (c.mix_by == MixBy::load && c.duration_s <= 0) return bad("--mix-by load needs --duration");
  if (!(c.runtime_mean_s > 0)) return bad("--runtime-mean must be positive");
  if (!(c.runtime_sigma >= 0) || c.runtime_sigma > 10) return bad("--runtime-sigma must be in [0, 10]");
  if (!(c.max_runtime_s > 0)) return bad("--max-runtime must be positive");
  if (!(c.estimate_factor >= 0)) return bad("--estimate-factor must not be negative");
  if (c.apps.empty()) return bad("--apps needs at least one application");
  std::set<std::int64_t> seen;
  for (const auto& a : c.apps) {
    std::string who = "--apps: executable " + std::to_string(a.executable);
    if (a.executable < 0) return bad(who + ": executable numbers are >= 0");
    if (!seen.insert(a.executable).second) return bad(who + " appears twice");
    if (!(a.weight > 0)) return bad(who + ": weight must be positive");
    if (a.procs < 0 || a.procs > c.max_procs) return bad(who + ": size must be in [1, --max-procs]");
    if (!(a.runtime_mean_s >= 0)) return bad(who + ": mean run time must be positive");
  }
  return {};
}

Result<swf::Workload> generate(const Config& c) {
  if (auto s = validate(c); !s) return s.error();
  BodySource bodies(c, splitmix(c.seed));
  Random arrivals(splitmix(c.seed ^ 0x5bd1e995ULL));
  std::vector<Body> jobs;
  std::vector<double> submits;
  const double capacity = c.load * static_cast<double>(c.max_procs);

  if (c.jobs > 0) {
    jobs.reserve(static_cast<std::size_t>(c.jobs));
    double demand = 0;
    for (std::int64_t i = 0; i < c.jobs; ++i) {
      jobs.push_back(bodies.draw(bodies.pick_app()));
      demand += jobs.back().demand();
    }
    const double mean = c.mean_interarrival_s > 0 ? c.mean_interarrival_s
                                                  : demand / (static_cast<double>(c.jobs) * capacity);
    double t = 0;
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      if (i > 0) t += arrivals.exponential(mean);
      submits.push_back(quantize(t, c.integer_times));
    }
  } else {
    const double target = capacity * c.duration_s;
    bool bounded = true;
    if (c.mix_by == MixBy::jobs) {
      bounded = fill_to(jobs, target, [&] { return bodies.draw(bodies.pick_app()); });
    } else {
      double total_weight = 0;
      for (const auto& a : c.apps) total_weight += a.weight;
      for (std::size_t k = 0; k < c.apps.size(); ++k) {
        bounded = bounded && fill_to(jobs, target * c.apps[k].weight / total_weight, [&] { return bodies.draw(k); });
      }
    }
    if (!bounded) {
      return make_error(Errc::invalid_argument, "--duration x --load x --max-procs asks for more than " +
                                                    std::to_string(kMaxJobs) + " jobs");
    }
    if (c.mix_by == MixBy::load) {
      for (std::size_t i = jobs.size(); i > 1; --i) {  // Fisher-Yates: interleave the applications
        std::swap(jobs[i - 1], jobs[static_cast<std::size_t>(arrivals.integer(0, static_cast<std::int64_t>(i - 1)))]);
      }
    }
    for (std::size_t i = 0; i < jobs.size(); ++i) submits.push_back(quantize(arrivals.uniform(0, c.duration_s), c.integer_times));
    std::sort(submits.begin(), submits.end());
  }

  swf::Workload w;
  w.jobs.reserve(jobs.size());
  double demand = 0;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    w.jobs.push_back(to_job(jobs[i], static_cast<std::int64_t>(i + 1), submits[i], c));
    demand += jobs[i].demand();
  }
  const double span = c.duration_s > 0 ? c.duration_s : (submits.empty() ? 0 : submits.back());
  auto& h = w.header;
  h.set("Version", "2.2");
  h.set("Computer", "synthetic machine with " + std::to_string(c.max_procs) + " CPUs");
  h.set("Installation", "cosched-swfgen");
  h.set("Information", "synthetic workload; see cosched docs/workloads.md");
  h.set("Preemption", "No");
  h.set("MaxJobs", std::to_string(w.jobs.size()));
  h.set("MaxRecords", std::to_string(w.jobs.size()));
  h.set("MaxProcs", std::to_string(c.max_procs));
  h.set("MaxNodes", std::to_string(c.max_procs));
  h.set("Note", "generated by: " + command_line(c));
  if (!c.preset.empty()) {
    h.entries.push_back({"Note", "preset " + c.preset + ": after PDPA (Corbalan, Martorell, Labarta), section 5, Table 1", 0});
  }
  h.entries.push_back({"Note", fmt::format("offered load {:.3f} = requested CPU-seconds / (MaxProcs x {} s of arrivals)",
                                           span > 0 ? demand / (static_cast<double>(c.max_procs) * span) : 0.0, num(span)), 0});
  return w;
}

Result<std::vector<AppShare>> parse_apps(std::string_view spec) {
  std::vector<AppShare> out;
  auto bad = [&](std::string_view item, const std::string& why) {
    return make_error(Errc::invalid_argument, "--apps '" + std::string(item) + "': " + why +
                                                  " (expected EXE:WEIGHT[:PROCS[:RUNTIME_S]],...)");
  };
  while (!spec.empty()) {
    std::size_t comma = spec.find(',');
    std::string_view item = spec.substr(0, comma);
    spec = comma == std::string_view::npos ? std::string_view{} : spec.substr(comma + 1);
    std::vector<std::string_view> parts;
    for (std::string_view rest = item;;) {
      std::size_t colon = rest.find(':');
      parts.push_back(rest.substr(0, colon));
      if (colon == std::string_view::npos) break;
      rest = rest.substr(colon + 1);
    }
    if (parts.size() < 2 || parts.size() > 4) return bad(item, "needs 2 to 4 ':'-separated parts");
    AppShare a;
    auto int_of = [](std::string_view s, std::int64_t& v) {
      auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
      return ec == std::errc{} && end == s.data() + s.size();
    };
    auto real_of = [](std::string_view s, double& v) {
      auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
      return ec == std::errc{} && end == s.data() + s.size() && std::isfinite(v);
    };
    if (!int_of(parts[0], a.executable) || a.executable < 0) return bad(item, "executable is not a number >= 0");
    if (!real_of(parts[1], a.weight) || !(a.weight > 0)) return bad(item, "weight is not a positive number");
    if (parts.size() > 2 && (!int_of(parts[2], a.procs) || a.procs < 1)) return bad(item, "size is not a positive integer");
    if (parts.size() > 3 && (!real_of(parts[3], a.runtime_mean_s) || !(a.runtime_mean_s > 0))) {
      return bad(item, "run time is not a positive number");
    }
    out.push_back(a);
  }
  if (out.empty()) return make_error(Errc::invalid_argument, "--apps is empty");
  return out;
}

std::string format_apps(const std::vector<AppShare>& apps) {
  std::string s;
  for (const auto& a : apps) {
    if (!s.empty()) s += ',';
    s += std::to_string(a.executable) + ":" + num(a.weight);
    if (a.procs > 0 || a.runtime_mean_s > 0) s += ":" + std::to_string(a.procs);
    if (a.runtime_mean_s > 0) s += ":" + num(a.runtime_mean_s);
  }
  return s;
}

std::vector<std::string> preset_names() { return {"pdpa-w1", "pdpa-w2", "pdpa-w3", "pdpa-w4"}; }

Result<Config> preset(std::string_view name) {
  // PDPA section 5: swim, bt.A, hydro2d request 30 CPUs, apsi 2; run times from Table 4 (Equipartition).
  const AppShare swim{1, 0, 30, 6}, bt{2, 0, 30, 100}, hydro2d{3, 0, 30, 32}, apsi{4, 0, 2, 100};
  auto with = [](AppShare a, double w) { a.weight = w; return a; };
  Config c;
  c.preset = std::string(name);
  c.max_procs = 60;
  c.duration_s = 300;
  c.load = 0.8;
  c.mix_by = MixBy::load;
  c.runtime_sigma = 0;  // one program, one run time
  if (name == "pdpa-w1") {
    c.apps = {with(swim, 0.5), with(bt, 0.5)};
  } else if (name == "pdpa-w2") {
    c.apps = {with(bt, 0.5), with(hydro2d, 0.5)};
  } else if (name == "pdpa-w3") {
    c.apps = {with(bt, 0.5), with(apsi, 0.5)};
  } else if (name == "pdpa-w4") {
    c.apps = {with(swim, 0.25), with(bt, 0.25), with(hydro2d, 0.25), with(apsi, 0.25)};
  } else {
    return make_error(Errc::not_found, "no preset '" + std::string(name) + "' (pdpa-w1..pdpa-w4)");
  }
  return c;
}

std::string command_line(const Config& c) {
  std::string s = "cosched-swfgen";
  if (c.jobs > 0) s += " --jobs " + std::to_string(c.jobs);
  if (c.duration_s > 0) s += " --duration " + num(c.duration_s);
  s += " --max-procs " + std::to_string(c.max_procs);
  s += c.mean_interarrival_s > 0 ? " --mean-interarrival " + num(c.mean_interarrival_s) : " --load " + num(c.load);
  s += " --seed " + std::to_string(c.seed);
  s += " --apps " + format_apps(c.apps);
  if (c.mix_by == MixBy::load) s += " --mix-by load";
  s += c.model == Model::lublin ? " --model lublin" : " --model lognormal";
  if (c.pow2_sizes) s += " --pow2-sizes";
  s += " --runtime-mean " + num(c.runtime_mean_s) + " --runtime-sigma " + num(c.runtime_sigma);
  if (c.max_runtime_s != Config{}.max_runtime_s) s += " --max-runtime " + num(c.max_runtime_s);
  if (c.estimate_factor > 0) s += " --estimate-factor " + num(c.estimate_factor);
  if (!c.integer_times) s += " --fractional-times";
  return s;
}

}  // namespace cosched::swfgen
