// A set of CPU numbers with one textual form, the kernel's list format ("0-3,8"), used in the CLI, logs,
// JSON and traces alike (STYLE habit 8).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cosched/error.hpp"

namespace cosched {

class CpuSet {
 public:
  CpuSet() = default;
  static CpuSet range(int first, int last);                  // [first, last], empty if last < first
  static CpuSet of(const std::vector<int>& cpus);
  // Parses "0-3,8" (also accepts spaces as separators, and the empty string). Errors name the bad token.
  static Result<CpuSet> parse(std::string_view text);

  // modify
  void set(int cpu);
  void clear(int cpu);
  void clear_all() { words_.clear(); }

  // query
  [[nodiscard]] bool test(int cpu) const;
  [[nodiscard]] int count() const;
  [[nodiscard]] bool empty() const { return count() == 0; }
  [[nodiscard]] int first() const;               // -1 when empty
  [[nodiscard]] int next(int after) const;       // next CPU > after, -1 at the end
  [[nodiscard]] int last() const;                // -1 when empty
  [[nodiscard]] std::vector<int> to_vector() const;
  [[nodiscard]] std::string to_string() const;   // "0-3,8"; "" when empty

  // combine
  [[nodiscard]] CpuSet operator|(const CpuSet& o) const;
  [[nodiscard]] CpuSet operator&(const CpuSet& o) const;
  [[nodiscard]] CpuSet operator-(const CpuSet& o) const;  // difference
  bool operator==(const CpuSet& o) const;

  // raw words (bit i of word w = CPU 64*w + i), for cpu_set_t and arena masks
  [[nodiscard]] const std::vector<std::uint64_t>& words() const { return words_; }

 private:
  void trim();
  std::vector<std::uint64_t> words_;
};

}  // namespace cosched
