#include "calibration_file.hpp"

#include <cmath>
#include <fstream>
#include <sstream>

namespace cosched::sensors {

namespace {

Error bad(const std::string& name, const std::string& what) {
  return make_error(Errc::parse_error, name + ": " + what);
}

}  // namespace

std::optional<double> contention_from(double b, double B, double pair) {
  if (!(b > 0) || !(B > 0) || !(pair > 0)) return std::nullopt;
  const double s = b / pair;
  const double excess = 2 * b / B - 1;
  if (!(excess > 0.05)) return std::nullopt;
  const double k = (s - 1) / excess;
  // Below the least --contention accepts, the pair did not measurably slow down: no constant (as the script).
  return k >= 0.01 && std::isfinite(k) ? std::optional<double>(k) : std::nullopt;
}

Result<Measured> parse_calibration(const std::string& text, const std::string& name) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    return bad(name, std::string("not JSON (") + e.what() + ")");
  }
  if (!j.is_object()) return bad(name, "not a JSON object");
  if (!j.contains("cosched_calibration") || j["cosched_calibration"] != 1) {
    return bad(name, "field cosched_calibration must be 1 (a file written by scripts/calibrate-bandwidth --output)");
  }
  Measured m;
  auto rate = [&](const char* field, double& out) -> Status {
    if (!j.contains(field) || !j[field].is_number()) return bad(name, std::string("field ") + field + " missing or not a number");
    out = j[field].get<double>();
    if (!(out > 0) || !std::isfinite(out)) {
      return bad(name, std::string("field ") + field + "=" + j[field].dump() + " must be a positive number of bytes/s");
    }
    return {};
  };
  if (auto st = rate("thread_bandwidth", m.thread_bytes_per_s); !st) return st.error();
  if (auto st = rate("mem_bandwidth", m.machine_bytes_per_s); !st) return st.error();
  if (j.contains("contention") && !j["contention"].is_null()) {
    if (!j["contention"].is_number()) return bad(name, "field contention is not a number or null");
    const double k = j["contention"].get<double>();
    if (!(k >= 0.01 && k <= 100)) return bad(name, "field contention=" + j["contention"].dump() + " out of range [0.01, 100]");
    m.contention = k;
  }
  if (j.contains("pair_bandwidth") && j["pair_bandwidth"].is_number()) m.pair_bytes_per_s = j["pair_bandwidth"].get<double>();
  return m;
}

Result<Measured> load_calibration(const std::string& path) {
  std::ifstream in(path);
  if (!in) return make_error(Errc::io_error, "cannot read the calibration file " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_calibration(ss.str(), path);
}

nlohmann::json calibration_json(const Measured& m, const nlohmann::json& extra) {
  nlohmann::json j = {{"cosched_calibration", 1},
                      {"thread_bandwidth", m.thread_bytes_per_s},
                      {"mem_bandwidth", m.machine_bytes_per_s},
                      {"contention", m.contention ? nlohmann::json(*m.contention) : nlohmann::json(nullptr)},
                      {"pair_bandwidth", m.pair_bytes_per_s ? nlohmann::json(*m.pair_bytes_per_s) : nlohmann::json(nullptr)}};
  for (const auto& [k, v] : extra.items()) j[k] = v;
  return j;
}

}  // namespace cosched::sensors
