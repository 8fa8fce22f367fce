// Catalog YAML → Catalog. yaml-cpp gives the tree and line marks; every value is converted here (not with
// Node::as<T>) so that each message names file, line, key path and the offending text in one format.
#include "cosched/rate.hpp"
#include "qs/catalog.hpp"

#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <initializer_list>
#include <limits>

#include "qs/swf.hpp"

namespace cosched::catalog {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// Bound on Downey's A and sigma: far beyond any machine, and small enough that S(n) cannot overflow.
constexpr double kMaxParameter = 1e9;

// Conversion context: the file name for messages.
struct Ctx {
  std::string name;

  [[nodiscard]] Error fail(const YAML::Node& at, const std::string& path, const std::string& what) const {
    // Missing keys come back as undefined nodes, which have no mark (and throw when asked for one).
    std::string where = name;
    if (at.IsDefined() && at.Mark().line >= 0) where += ":" + std::to_string(at.Mark().line + 1);
    return make_error(Errc::parse_error, where + ": " + path + ": " + what);
  }
};

std::string number(double v) {
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

std::string quoted(const YAML::Node& n) {
  return "'" + (n.IsDefined() && n.IsScalar() ? n.Scalar() : std::string("...")) + "'";
}

// Rejects keys that are not in `allowed`, so a typo cannot silently drop a setting.
Status check_keys(const Ctx& ctx, const YAML::Node& map, const std::string& path,
                  std::initializer_list<std::string_view> allowed) {
  for (auto it = map.begin(); it != map.end(); ++it) {
    std::string key = it->first.IsScalar() ? it->first.Scalar() : "?";
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      std::string list;
      for (auto a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
      return ctx.fail(it->first, path, "unknown key '" + key + "' (expected " + list + ")");
    }
  }
  return {};
}

Result<double> to_number(const Ctx& ctx, const YAML::Node& n, const std::string& path) {
  double v = 0;
  if (n.IsDefined() && n.IsScalar()) {
    const std::string& s = n.Scalar();
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec == std::errc{} && end == s.data() + s.size() && std::isfinite(v)) return v;
  }
  return ctx.fail(n, path, quoted(n) + " is not a number");
}

Result<double> to_number_in(const Ctx& ctx, const YAML::Node& n, const std::string& path, double lo,
                            double hi) {
  auto v = to_number(ctx, n, path);
  if (v && (*v < lo || *v > hi)) {
    return ctx.fail(n, path, quoted(n) + " is not in [" + number(lo) + ", " + number(hi) + "]");
  }
  return v;
}

Result<std::string> to_text(const Ctx& ctx, const YAML::Node& n, const std::string& path) {
  if (!n.IsDefined() || !n.IsScalar() || n.Scalar().empty()) return ctx.fail(n, path, "expected a non-empty string");
  return n.Scalar();
}

Result<SpeedupModel> to_speedup(const Ctx& ctx, const YAML::Node& n, const std::string& path) {
  if (!n.IsMap()) return ctx.fail(n, path, "expected a map such as {model: amdahl, serial_fraction: 0.1}");
  auto model = to_text(ctx, n["model"], path + ".model");
  if (!model) return ctx.fail(n, path, "needs 'model' (amdahl, downey or table)");
  SpeedupModel m;
  if (*model == "amdahl") {
    if (auto s = check_keys(ctx, n, path, {"model", "serial_fraction", "parallel_fraction"}); !s) return s.error();
    bool has_serial = static_cast<bool>(n["serial_fraction"]);
    if (has_serial == static_cast<bool>(n["parallel_fraction"])) {
      return ctx.fail(n, path, "amdahl needs exactly one of serial_fraction and parallel_fraction");
    }
    std::string key = has_serial ? "serial_fraction" : "parallel_fraction";
    auto f = to_number_in(ctx, n[key], path + "." + key, 0, 1);
    if (!f) return f.error();
    m.kind = SpeedupModel::Kind::amdahl;
    m.serial_fraction = has_serial ? *f : 1 - *f;
  } else if (*model == "downey") {
    if (auto s = check_keys(ctx, n, path, {"model", "A", "sigma"}); !s) return s.error();
    if (!n["A"] || !n["sigma"]) return ctx.fail(n, path, "downey needs A (average parallelism) and sigma");
    auto a = to_number_in(ctx, n["A"], path + ".A", 1, kMaxParameter);
    if (!a) return a.error();
    auto sigma = to_number_in(ctx, n["sigma"], path + ".sigma", 0, kMaxParameter);
    if (!sigma) return sigma.error();
    m.kind = SpeedupModel::Kind::downey;
    m.average_parallelism = *a;
    m.sigma = *sigma;
  } else if (*model == "table") {
    if (auto s = check_keys(ctx, n, path, {"model", "points"}); !s) return s.error();
    const YAML::Node pts = n["points"];
    if (!pts.IsSequence() || pts.size() == 0) {
      return ctx.fail(pts ? pts : n, path + ".points", "expected a list of [cpus, speedup] pairs");
    }
    m.kind = SpeedupModel::Kind::table;
    for (std::size_t i = 0; i < pts.size(); ++i) {
      std::string p = path + ".points[" + std::to_string(i) + "]";
      const YAML::Node pt = pts[i];
      if (!pt.IsSequence() || pt.size() != 2) return ctx.fail(pt, p, "expected [cpus, speedup]");
      auto cpus = to_number_in(ctx, pt[0], p + ".cpus", 1, kInf);
      if (!cpus) return cpus.error();
      auto s = to_number(ctx, pt[1], p + ".speedup");
      if (!s) return s.error();
      if (*s <= 0) return ctx.fail(pt[1], p + ".speedup", quoted(pt[1]) + " is not positive");
      if (!m.points.empty() && *cpus <= m.points.back().first) {
        return ctx.fail(pt[0], p + ".cpus", quoted(pt[0]) + " does not increase over the previous point");
      }
      m.points.emplace_back(*cpus, *s);
    }
  } else {
    return ctx.fail(n["model"], path + ".model", quoted(n["model"]) + " is not amdahl, downey or table");
  }
  return m;
}

// An app's command: a list of arguments, or one string split as a shell would (no expansion); never empty.
Result<std::vector<std::string>> to_command(const Ctx& ctx, const YAML::Node& cmd, const std::string& path) {
  std::vector<std::string> argv;
  if (cmd.IsSequence()) {
    for (std::size_t i = 0; i < cmd.size(); ++i) {
      if (!cmd[i].IsScalar()) return ctx.fail(cmd[i], path, "expected a string");
      argv.push_back(cmd[i].Scalar());
    }
  } else if (cmd.IsScalar()) {
    auto split = split_command(cmd.Scalar());
    if (!split) return ctx.fail(cmd, path, split.error().message);
    argv = std::move(*split);
  }
  if (argv.empty()) return ctx.fail(cmd, path, "expected a string or a list of arguments");
  return argv;
}

// An app's `smt` map: its intensity and sensitivity, each in [0, 10].
Status read_smt(const Ctx& ctx, const YAML::Node& smt, const std::string& path, App& app) {
  if (!smt.IsMap()) return ctx.fail(smt, path, "expected a map with intensity and sensitivity");
  if (auto st = check_keys(ctx, smt, path, {"intensity", "sensitivity"}); !st) return st.error();
  for (const char* key : {"intensity", "sensitivity"}) {
    if (const YAML::Node v = smt[key]) {
      auto x = to_number_in(ctx, v, path + "." + key, 0, 10);
      if (!x) return x.error();
      (std::string(key) == "intensity" ? app.smt_intensity : app.smt_sensitivity) = *x;
    }
  }
  return {};
}

Result<App> to_app(const Ctx& ctx, const YAML::Node& n, const std::string& path, std::int64_t executable) {
  if (!n.IsMap()) return ctx.fail(n, path, "expected a map with name, command, ...");
  if (auto s = check_keys(ctx, n, path, {"name", "command", "class", "speedup", "iteration_s", "period", "team", "bandwidth", "smt"});
      !s) {
    return s.error();
  }
  App app;
  app.executable = executable;
  app.line = n.Mark().line + 1;
  auto name = to_text(ctx, n["name"], path + ".name");
  if (!name) return n["name"] ? name.error() : ctx.fail(n, path, "needs a name");
  app.name = *name;
  if (const YAML::Node cmd = n["command"]) {
    auto argv = to_command(ctx, cmd, path + ".command");
    if (!argv) return argv.error();
    app.command = std::move(*argv);
  }
  if (const YAML::Node c = n["class"]) {
    auto label = to_text(ctx, c, path + ".class");
    if (!label) return label.error();
    app.app_class = *label;
  }
  if (const YAML::Node s = n["speedup"]) {
    auto model = to_speedup(ctx, s, path + ".speedup");
    if (!model) return model.error();
    app.speedup = std::move(*model);
  }
  if (const YAML::Node it = n["iteration_s"]) {
    auto v = to_number(ctx, it, path + ".iteration_s");
    if (!v) return v.error();
    if (*v <= 0) return ctx.fail(it, path + ".iteration_s", quoted(it) + " is not positive");
    app.iteration_s = *v;
  }
  if (const YAML::Node pr = n["period"]) {
    auto v = to_number_in(ctx, pr, path + ".period", 0, 1e6);
    if (!v) return v.error();
    if (*v != static_cast<double>(static_cast<int>(*v))) {
      return ctx.fail(pr, path + ".period", quoted(pr) + " is not a whole number of regions");
    }
    app.period = static_cast<int>(*v);
  }
  if (const YAML::Node bw = n["bandwidth"]) {
    auto v = bw.IsScalar() ? parse_rate(bw.Scalar()) : Result<double>(make_error(Errc::parse_error, "expected a rate"));
    if (!v) return ctx.fail(bw, path + ".bandwidth", quoted(bw) + " is not a rate in bytes/s (e.g. 750M, 2.5G, 7.5e8)");
    app.bandwidth = *v;
  }
  if (const YAML::Node smt = n["smt"]) {
    if (auto st = read_smt(ctx, smt, path + ".smt", app); !st) return st.error();
  }
  if (const YAML::Node t = n["team"]) {
    // Who decides the team sizes of real runs (docs/usage.md): a program known to adapt to any team size
    // may be declared malleable; one that caches sizes in ways cosched cannot see, fixed.
    auto mode = to_text(ctx, t, path + ".team");
    if (!mode) return mode.error();
    if (*mode != "automatic" && *mode != "malleable" && *mode != "fixed") {
      return ctx.fail(t, path + ".team", quoted(t) + " is not one of automatic, malleable, fixed");
    }
    app.team = *mode == "automatic" ? "" : *mode;
  }
  if (app.command.empty() && !app.speedup) {
    return ctx.fail(n, path, "needs a command (real runs) or a speedup model (simulation)");
  }
  return app;
}

Result<Catalog> to_catalog(const Ctx& ctx, const YAML::Node& root) {
  if (!root.IsMap()) return ctx.fail(root, "catalog", "expected a map with 'apps' and/or 'default'");
  if (auto s = check_keys(ctx, root, "catalog", {"apps", "default"}); !s) return s.error();
  Catalog cat;
  cat.source = ctx.name;
  if (const YAML::Node d = root["default"]) {
    auto app = to_app(ctx, d, "default", -1);
    if (!app) return app.error();
    cat.default_app = std::move(*app);
  }
  if (const YAML::Node apps = root["apps"]) {
    if (!apps.IsMap()) return ctx.fail(apps, "apps", "expected a map from executable number to application");
    for (auto it = apps.begin(); it != apps.end(); ++it) {
      const std::string key = it->first.IsScalar() ? it->first.Scalar() : "?";
      std::int64_t exe = -1;
      auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), exe);
      if (ec != std::errc{} || end != key.data() + key.size() || exe < 0) {
        return ctx.fail(it->first, "apps", "'" + key + "' is not an executable number (SWF field 14, >= 0)");
      }
      std::string path = "apps." + key;
      if (auto dup = cat.apps.find(exe); dup != cat.apps.end()) {
        return ctx.fail(it->first, path, "executable " + std::to_string(exe) + " is already defined on line " +
                                             std::to_string(dup->second.line));
      }
      auto app = to_app(ctx, it->second, path, exe);
      if (!app) return app.error();
      cat.apps.emplace(exe, std::move(*app));
    }
  }
  if (cat.apps.empty() && !cat.default_app) {
    return ctx.fail(root, "catalog", "defines no application (expected 'apps' and/or 'default')");
  }
  return cat;
}

}  // namespace

Result<Catalog> parse(std::string_view yaml_text, std::string_view name) {
  Ctx ctx{std::string(name)};
  try {
    YAML::Node root = YAML::Load(std::string(yaml_text));
    if (!root || root.IsNull()) return make_error(Errc::parse_error, ctx.name + ": empty catalog");
    return to_catalog(ctx, root);
  } catch (const YAML::Exception& e) {
    // Syntax errors: yaml-cpp's message carries its own position; report ours in the common format.
    std::string where = ctx.name;
    if (e.mark.line >= 0) where += ":" + std::to_string(e.mark.line + 1);
    return make_error(Errc::parse_error, where + ": YAML: " + e.msg);
  }
}

Result<Catalog> load_file(const std::string& path) {
  auto text = swf::read_text(path);
  if (!text) return text.error();
  return parse(*text, path);
}

const App* Catalog::find(std::int64_t executable) const {
  if (auto it = apps.find(executable); it != apps.end()) return &it->second;
  return default_app ? &*default_app : nullptr;
}

Result<const App*> Catalog::resolve(std::int64_t executable) const {
  if (const App* app = find(executable)) return app;
  return make_error(Errc::not_found, source + ": no application for executable number " +
                                         std::to_string(executable) + " and no default entry");
}


double speedup(const SpeedupModel& m, double cpus) {
  if (cpus <= 0) return 0;
  if (cpus < 1) return cpus * speedup(m, 1.0);
  switch (m.kind) {
    case SpeedupModel::Kind::amdahl:
      return 1.0 / (m.serial_fraction + (1.0 - m.serial_fraction) / cpus);
    case SpeedupModel::Kind::downey: {
      // Downey 1997, eqs. for S(n) with average parallelism A and variance sigma; both branches agree at
      // sigma = 1 and every piece joins its neighbour continuously.
      const double a = m.average_parallelism;
      const double s = m.sigma;
      const double n = cpus;
      if (s <= 1) {
        if (n <= a) return a * n / (a + s * (n - 1) / 2);
        if (n <= 2 * a - 1) return a * n / (s * (a - 0.5) + n * (1 - s / 2));
        return a;
      }
      if (n <= a + a * s - s) return n * a * (s + 1) / (s * (n + a - 1) + a);
      return a;
    }
    case SpeedupModel::Kind::table: {
      double prev_c = 1;
      double prev_s = 1;  // S(1) = 1 by definition, unless the table says otherwise
      for (const auto& [c, sp] : m.points) {
        if (cpus <= c) {
          if (c == prev_c) return sp;
          return prev_s + (sp - prev_s) * ((cpus - prev_c) / (c - prev_c));  // ratio first: no overflow
        }
        prev_c = c;
        prev_s = sp;
      }
      return prev_s;
    }
  }
  return cpus;
}

Result<std::vector<std::string>> split_command(std::string_view text) {
  std::vector<std::string> argv;
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (char c : text) {
    if (quote != 0) {
      if (c == quote) {
        quote = 0;
      } else {
        word += c;
      }
    } else if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;  // '' is an empty argument
    } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      if (in_word) argv.push_back(std::move(word));
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (quote != 0) return make_error(Errc::parse_error, std::string("unclosed ") + quote + " in command");
  if (in_word) argv.push_back(std::move(word));
  return argv;
}

Result<std::vector<std::string>> expand_programs(const std::vector<std::string>& argv,
                                                 const ProgramLookup& lookup) {
  std::vector<std::string> out;
  out.reserve(argv.size());
  for (const auto& arg : argv) {
    if (arg.size() >= 2 && arg[0] == '@' && arg[1] == '@') {
      out.push_back(arg.substr(1));
    } else if (!arg.empty() && arg[0] == '@') {
      std::optional<std::string> path;
      if (arg.size() > 1 && lookup) path = lookup(std::string_view(arg).substr(1));
      if (!path) return make_error(Errc::not_found, "program '" + arg + "' not found (a program shipped with cosched)");
      out.push_back(std::move(*path));
    } else {
      out.push_back(arg);
    }
  }
  return out;
}

ProgramLookup lookup_in_directories(std::vector<std::string> directories) {
  return [dirs = std::move(directories)](std::string_view name) -> std::optional<std::string> {
    // A name with a slash could escape the directory: placeholders name programs, not paths.
    if (name.empty() || name.find('/') != std::string_view::npos || name == "." || name == "..") return std::nullopt;
    for (const auto& d : dirs) {
      std::filesystem::path p = std::filesystem::path(d) / std::string(name);
      std::error_code ec;
      if (std::filesystem::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0) return p.string();
    }
    return std::nullopt;
  };
}

}  // namespace cosched::catalog
