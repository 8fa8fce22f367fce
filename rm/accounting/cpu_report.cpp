#include "cpu_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace cosched::rm {

double parallel_fraction(double speedup, int cpus) {
  // Amdahl: 1/S = (1 − f) + f/p, so f = (1 − 1/S) / (1 − 1/p). At one CPU nothing is known of scaling.
  if (cpus <= 1 || speedup <= 1) return 0;
  const double f = (1 - 1 / speedup) / (1 - 1.0 / cpus);
  return std::clamp(f, 0.0, 1.0);
}

double kept_speed(double f, int q, int p) {
  auto s = [f](int n) { return 1 / ((1 - f) + f / n); };
  return s(q) / s(p);
}

FewerCpus fewer_cpus(const policy::Perf& e) {
  FewerCpus out;
  if (!e.valid || e.cpus < 1) return out;
  out.known = true;
  out.at_cpus = e.cpus;
  out.efficiency = e.efficiency;
  // The measured speedup's own two-point fit where it has one; else the fraction the estimate implies.
  const double f = e.amdahl_f >= 0 && e.amdahl_f <= 1 ? e.amdahl_f : parallel_fraction(e.speedup, e.cpus);
  out.cpus = e.cpus;
  out.kept = 1;
  for (int q = 1; q < e.cpus; ++q) {
    const double k = kept_speed(f, q, e.cpus);
    if (k >= kKeptSpeed) {
      out.cpus = q;
      out.kept = k;
      break;
    }
  }
  return out;
}

const policy::Perf* main_estimate(const CpuReportInput& in) {
  const policy::Perf* best = nullptr;
  for (const auto& m : in.measured) {
    if (best == nullptr || m.cpus > best->cpus) best = &m;
  }
  return best;
}

nlohmann::json cpu_report_json(const CpuReportInput& in) {
  using nlohmann::json;
  json allocations = json::array();
  std::vector<HeldAllocation> held = in.held;
  for (const auto& m : in.measured) {  // an allocation measured but held for no recorded time still shows
    if (std::none_of(held.begin(), held.end(), [&](const HeldAllocation& h) { return h.cpus == m.cpus; })) {
      held.push_back({m.cpus, 0});
    }
  }
  std::sort(held.begin(), held.end(), [](const auto& a, const auto& b) { return a.cpus > b.cpus; });
  for (const auto& h : held) {
    if (h.cpus <= 0) continue;
    json a = {{"cpus", h.cpus}, {"held_s", h.seconds}};
    auto m = std::find_if(in.measured.begin(), in.measured.end(), [&](const policy::Perf& p) { return p.cpus == h.cpus; });
    if (m != in.measured.end()) {
      a.update({{"efficiency", m->efficiency}, {"speedup", m->speedup}, {"kind", policy::to_string(m->kind)},
                {"confidence", m->confidence}});
    } else {
      a.update({{"efficiency", nullptr}, {"speedup", nullptr}, {"kind", "not measured"}, {"confidence", nullptr}});
    }
    allocations.push_back(std::move(a));
  }
  json report = {{"cpu_seconds", in.cpu_seconds},
                 {"elapsed_s", in.elapsed_s},
                 {"mean_cpus", in.elapsed_s > 0 ? in.cpu_seconds / in.elapsed_s : 0.0},
                 {"allocations", std::move(allocations)},
                 {"advice", nullptr}};
  const policy::Perf* e = main_estimate(in);
  const FewerCpus f = e != nullptr ? fewer_cpus(*e) : FewerCpus{};
  std::string summary;
  if (!f.known) {
    summary = fmt::format("{:.1f} CPU·s over {:.1f} s; efficiency not measured (no estimate reached the RM)",
                          in.cpu_seconds, in.elapsed_s);
  } else {
    const double af = e->amdahl_f >= 0 && e->amdahl_f <= 1 ? e->amdahl_f : parallel_fraction(e->speedup, e->cpus);
    report["advice"] = {{"at_cpus", f.at_cpus}, {"efficiency", f.efficiency}, {"cpus", f.cpus},
                        {"kept_speed", f.kept}, {"amdahl_f", af}, {"kind", policy::to_string(e->kind)},
                        {"confidence", e->confidence}};
    summary = fmt::format("{} CPU{} at efficiency {:.2f} ({}, confidence {:.2f}); ", f.at_cpus,
                          f.at_cpus == 1 ? "" : "s", f.efficiency, policy::to_string(e->kind), e->confidence);
    if (f.at_cpus == 1) {
      summary += "nothing is known of fewer CPUs";
    } else if (f.cpus < f.at_cpus) {
      summary += fmt::format("{} CPU{} would have kept {:.0f} % of its speed", f.cpus, f.cpus == 1 ? "" : "s",
                             std::floor(f.kept * 100));
    } else {
      summary += fmt::format("fewer CPUs would have cost more than {:.0f} % of its speed", (1 - kKeptSpeed) * 100);
    }
  }
  report["summary"] = summary;
  return report;
}

std::string cpu_report_text(const nlohmann::json& r) {
  std::string out = r.value("summary", std::string()) + "\n";
  out += fmt::format("  {:.1f} CPU·s held over {:.1f} s ({:.2f} CPUs on average)\n", r.value("cpu_seconds", 0.0),
                     r.value("elapsed_s", 0.0), r.value("mean_cpus", 0.0));
  if (r.contains("allocations") && r["allocations"].is_array()) {
    for (const auto& a : r["allocations"]) {
      if (a["efficiency"].is_number()) {
        out += fmt::format("  {:>4} CPUs for {:8.1f} s: efficiency {:.2f}, speedup {:.2f} ({}, confidence {:.2f})\n",
                           a.value("cpus", 0), a.value("held_s", 0.0), a["efficiency"].get<double>(),
                           a["speedup"].get<double>(), a.value("kind", std::string()),
                           a["confidence"].get<double>());
      } else {
        out += fmt::format("  {:>4} CPUs for {:8.1f} s: not measured\n", a.value("cpus", 0), a.value("held_s", 0.0));
      }
    }
  }
  if (r.contains("advice") && r["advice"].is_object()) {
    out += "  (fewer CPUs: Amdahl's law fitted to that estimate; where work grows with the CPUs, fewer keep more)\n";
  }
  return out;
}

}  // namespace cosched::rm
