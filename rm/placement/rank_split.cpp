#include "rank_split.hpp"

#include <algorithm>

namespace cosched::rm {

std::vector<int> rank_shares(int allocation, int processes) {
  const int n = std::max(processes, 1);
  const int a = std::max(allocation, 0);
  std::vector<int> shares(static_cast<std::size_t>(n), a / n);
  for (int r = 0; r < a % n; ++r) ++shares[static_cast<std::size_t>(r)];
  for (int& s : shares) s = std::max(s, 1);
  return shares;
}

std::vector<CpuSet> split_cpus(const CpuSet& cpus, const std::vector<int>& shares) {
  const std::vector<int> list = cpus.to_vector();
  std::vector<CpuSet> out(shares.size());
  if (list.empty()) return out;
  std::size_t next = 0;
  for (std::size_t r = 0; r < shares.size(); ++r) {
    const int take = std::min<int>(std::max(shares[r], 1), static_cast<int>(list.size()));
    for (int k = 0; k < take; ++k) {
      out[r].set(list[next]);
      next = (next + 1) % list.size();
    }
  }
  return out;
}

}  // namespace cosched::rm
