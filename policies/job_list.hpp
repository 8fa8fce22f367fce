// Two small helpers that several policies use: whether a list of job ids holds an id, and the seeded
// generator behind their reproducible random choices (one definition each, so that the files that use them
// can also be compiled together: cmake/CoschedCompileTime.cmake).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "policies/snapshot.hpp"

namespace cosched::policy {

inline bool contains(const std::vector<JobId>& ids, JobId id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

// SplitMix64 (Steele, Lea and Flood, OOPSLA 2014): a fixed seed gives the same sequence on every machine,
// which std::uniform_int_distribution does not promise.
inline std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace cosched::policy
