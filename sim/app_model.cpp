#include "sim/app_model.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

#include <fmt/format.h>

namespace cosched::sim {

namespace {

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  for (;;) {
    std::size_t at = s.find(sep, start);
    out.push_back(s.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start));
    if (at == std::string_view::npos) return out;
    start = at + 1;
  }
}

bool to_double(std::string_view s, double& out) {
  auto r = std::from_chars(s.data(), s.data() + s.size(), out);
  return r.ec == std::errc() && r.ptr == s.data() + s.size() && std::isfinite(out);
}

Error bad_spec(std::string_view text, std::string_view why) {
  return make_error(Errc::invalid_argument,
                    fmt::format("default speedup '{}': {} (expected linear, amdahl:S, downey:A:SIGMA or "
                                "table:P=S,P=S,...)",
                                text, why));
}

std::string where(const catalog::Catalog& c, const catalog::App& app) {
  return fmt::format("{}:{}", c.source, app.line);
}

}  // namespace

Result<catalog::SpeedupModel> parse_speedup_spec(std::string_view text) {
  using Kind = catalog::SpeedupModel::Kind;
  catalog::SpeedupModel m;
  auto parts = split(text, ':');
  if (parts[0] == "linear" && parts.size() == 1) {
    m.kind = Kind::amdahl;  // Amdahl with no serial part is exactly S(p) = p
    m.serial_fraction = 0;
    return m;
  }
  if (parts[0] == "amdahl" && parts.size() == 2) {
    m.kind = Kind::amdahl;
    if (!to_double(parts[1], m.serial_fraction) || m.serial_fraction < 0 || m.serial_fraction > 1) {
      return bad_spec(text, "the serial fraction must be a number in [0, 1]");
    }
    return m;
  }
  if (parts[0] == "downey" && parts.size() == 3) {
    m.kind = Kind::downey;
    if (!to_double(parts[1], m.average_parallelism) || m.average_parallelism < 1) {
      return bad_spec(text, "A must be a number >= 1");
    }
    if (!to_double(parts[2], m.sigma) || m.sigma < 0) return bad_spec(text, "sigma must be a number >= 0");
    return m;
  }
  if (parts[0] == "table" && parts.size() == 2) {
    m.kind = Kind::table;
    for (std::string_view point : split(parts[1], ',')) {
      auto pq = split(point, '=');
      double p = 0;
      double s = 0;
      if (pq.size() != 2 || !to_double(pq[0], p) || !to_double(pq[1], s) || p <= 0 || s <= 0) {
        return bad_spec(text, fmt::format("'{}' is not CPUS=SPEEDUP with both > 0", point));
      }
      if (!m.points.empty() && p <= m.points.back().first) return bad_spec(text, "CPUs must increase");
      m.points.emplace_back(p, s);
    }
    return m;
  }
  return bad_spec(text, "unknown form");
}

ModelTable::ModelTable(const catalog::Catalog* catalog, const catalog::Catalog* models, AppModel fallback)
    : catalog_(catalog), models_(models), fallback_(std::move(fallback)) {}

const AppModel& ModelTable::find(std::int64_t executable) {
  auto it = cache_.find(executable);
  if (it == cache_.end()) it = cache_.emplace(executable, resolve(executable)).first;
  return it->second;
}

AppModel ModelTable::resolve(std::int64_t executable) const {
  struct Candidate {
    const catalog::Catalog* file;
    const catalog::App* app;
  };
  auto exact = [&](const catalog::Catalog* c) -> Candidate {
    if (c == nullptr) return {nullptr, nullptr};
    auto it = c->apps.find(executable);
    return {c, it == c->apps.end() ? nullptr : &it->second};
  };
  auto fallback_entry = [](const catalog::Catalog* c) -> Candidate {
    if (c == nullptr || !c->default_app) return {nullptr, nullptr};
    return {c, &*c->default_app};
  };
  // Order of precedence for the curve (see the header).
  const Candidate order[] = {exact(models_), exact(catalog_), fallback_entry(models_), fallback_entry(catalog_)};

  AppModel m = fallback_;
  const Candidate* curve = nullptr;
  for (const auto& c : order) {
    if (c.app != nullptr && c.app->speedup) {
      curve = &c;
      break;
    }
  }
  if (curve != nullptr) {
    m.speedup = *curve->app->speedup;
    m.iteration_s = curve->app->iteration_s.value_or(fallback_.iteration_s);
    m.period = curve->app->period.value_or(fallback_.period);
    m.bandwidth = curve->app->bandwidth.value_or(fallback_.bandwidth);
    m.smt_intensity = curve->app->smt_intensity.value_or(fallback_.smt_intensity);
    m.smt_sensitivity = curve->app->smt_sensitivity.value_or(fallback_.smt_sensitivity);
    m.fixed_team = curve->app->team == "fixed";
    m.source = where(*curve->file, *curve->app);
  }
  // The name and class follow the most specific entry that exists at all.
  const Candidate* label = order[0].app != nullptr ? &order[0] : order[1].app != nullptr ? &order[1] : curve;
  if (label != nullptr) {
    m.name = label->app->name;
    m.app_class = label->app->app_class;
  } else {
    m.name = executable >= 0 ? fmt::format("exe{}", executable) : std::string("unknown");
    m.app_class = "uncatalogued";
  }
  return m;
}

std::vector<JobSpec> build_jobs(const swf::Workload& workload, ModelTable& models, const JobBuildOptions& options) {
  const std::int64_t trace_procs =
      options.trace_procs > 0 ? options.trace_procs : workload.header.machine_procs().value_or(0);
  std::vector<JobSpec> out;
  out.reserve(workload.jobs.size());
  for (const auto& j : workload.jobs) {
    JobSpec spec;
    spec.number = j.number;
    spec.submit = j.submit_s * options.time_scale;
    spec.preceding = j.preceding_job;
    spec.think = std::max(j.think_time_s, 0.0) * options.time_scale;
    spec.ideal = j.run_s;
    spec.app = &models.find(j.executable);
    auto request = swf::processor_request(j);
    if (!request) {
      spec.problem = request.error().message;
    } else {
      spec.request = static_cast<int>(swf::scale_request(*request, trace_procs, options.machine_cpus));
      if (j.run_s < 0) {
        spec.problem = fmt::format("job {} (line {}): run time unknown (field 4 = -1): no work to simulate",
                                   j.number, j.line);
      } else {
        spec.work = j.run_s * catalog::speedup(spec.app->speedup, spec.request);
      }
    }
    out.push_back(std::move(spec));
  }
  return out;
}

}  // namespace cosched::sim
