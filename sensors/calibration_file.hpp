// The contention model's constants measured on a machine (contention_model.hpp): what scripts/calibrate-bandwidth
// writes with --output and cosched-rm reads with --calibration FILE (or writes, with --calibrate), so that
// nobody copies numbers by hand. One JSON object:
//
//   {"cosched_calibration": 1,               format version
//    "thread_bandwidth": 33.4e9,             b: BBMA alone on one CPU, bytes per CPU second
//    "mem_bandwidth": 46.55e9,               B: a stream-copy per CPU side by side, in all
//    "contention": 0.70,                     k = (s − 1)/(2b/B − 1), or null when two BBMAs showed no excess
//    "pair_bandwidth": 25.6e9,               what each of two BBMAs side by side moved (null with one CPU)
//    "cpus": "0-1", "seconds": 3, "repeat": 5, "measured_at": "2026-11-24T09:00:00Z", "host": "vm"}
//
// Only the first four are read; the rest say where the numbers come from.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "contention_model.hpp"
#include "cosched/error.hpp"

namespace cosched::sensors {

// What a calibration run measured (the three constants' inputs and results).
struct Measured {
  double thread_bytes_per_s = 0;           // b
  double machine_bytes_per_s = 0;          // B
  std::optional<double> pair_bytes_per_s;  // each of two BBMAs side by side
  std::optional<double> contention;        // k, when the pair shows an excess
};

// k from the three measurements, as scripts/calibrate-bandwidth computes it: the pair's slowdown
// s = b / pair, the model's excess 2b/B − 1; k = (s − 1)/excess when the excess is above 0.05 and k > 0
// (below that two streams do not exceed B and the pair says nothing about k), else nullopt.
std::optional<double> contention_from(double b, double B, double pair);

// Errc::io_error when unreadable; Errc::parse_error naming the file and the field for a malformed one
// (not JSON, another version, a missing or non-positive bandwidth, k outside [0.01, 100]).
Result<Measured> load_calibration(const std::string& path);
Result<Measured> parse_calibration(const std::string& text, const std::string& name);

// The object above, with `extra` (cpus, seconds, ...) merged in.
nlohmann::json calibration_json(const Measured& m, const nlohmann::json& extra);

}  // namespace cosched::sensors
