#include "cpu_sharing.hpp"

namespace cosched::rm {

std::vector<char> sharing_a_cpu(const std::vector<const CpuSet*>& sets) {
  // One pass collects the CPUs held by two or more sets, a second asks each set whether it holds one of them.
  CpuSet seen;
  CpuSet twice;
  for (const CpuSet* s : sets) {
    twice = twice | (seen & *s);
    seen = seen | *s;
  }
  std::vector<char> shared(sets.size(), 0);
  if (twice.empty()) return shared;
  for (std::size_t i = 0; i < sets.size(); ++i) shared[i] = !(*sets[i] & twice).empty() ? 1 : 0;
  return shared;
}

}  // namespace cosched::rm
