#include "cosched/cpuset.hpp"

#include <algorithm>
#include <bit>
#include <charconv>

namespace cosched {

namespace {
constexpr int kMaxCpu = 1 << 16;  // sanity bound for parsed text

bool parse_int(std::string_view s, int& out) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc{} && p == s.data() + s.size() && out >= 0 && out < kMaxCpu;
}
}  // namespace

CpuSet CpuSet::range(int first, int last) {
  CpuSet s;
  for (int c = std::max(first, 0); c <= last; ++c) s.set(c);
  return s;
}

CpuSet CpuSet::of(const std::vector<int>& cpus) {
  CpuSet s;
  for (int c : cpus) s.set(c);
  return s;
}

Result<CpuSet> CpuSet::parse(std::string_view text) {
  CpuSet s;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t end = text.find_first_of(", \t\n", pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view tok = text.substr(pos, end - pos);
    pos = end + 1;
    if (tok.empty()) {
      if (end >= text.size()) break;
      continue;
    }
    int a = 0;
    int b = 0;
    auto dash = tok.find('-');
    bool good = dash == std::string_view::npos
                    ? (parse_int(tok, a) && (b = a, true))
                    : (parse_int(tok.substr(0, dash), a) && parse_int(tok.substr(dash + 1), b) && a <= b);
    if (!good) {
      return make_error(Errc::parse_error,
                        "bad CPU list token '" + std::string(tok) + "' in '" + std::string(text) +
                            "' (expected e.g. 0-3,8)");
    }
    for (int c = a; c <= b; ++c) s.set(c);
  }
  return s;
}

void CpuSet::set(int cpu) {
  if (cpu < 0) return;
  auto w = static_cast<std::size_t>(cpu / 64);
  if (words_.size() <= w) words_.resize(w + 1, 0);
  words_[w] |= std::uint64_t{1} << (cpu % 64);
}

void CpuSet::clear(int cpu) {
  if (cpu < 0) return;
  auto w = static_cast<std::size_t>(cpu / 64);
  if (w < words_.size()) words_[w] &= ~(std::uint64_t{1} << (cpu % 64));
  trim();
}

bool CpuSet::test(int cpu) const {
  if (cpu < 0) return false;
  auto w = static_cast<std::size_t>(cpu / 64);
  return w < words_.size() && ((words_[w] >> (cpu % 64)) & 1U) != 0;
}

int CpuSet::count() const {
  int n = 0;
  for (auto w : words_) n += std::popcount(w);
  return n;
}

int CpuSet::first() const { return next(-1); }

int CpuSet::next(int after) const {
  int c = after + 1;
  auto w = static_cast<std::size_t>(c / 64);
  if (w >= words_.size()) return -1;
  std::uint64_t bits = words_[w] & (~std::uint64_t{0} << (c % 64));
  while (true) {
    if (bits != 0) return static_cast<int>(w * 64) + std::countr_zero(bits);
    if (++w >= words_.size()) return -1;
    bits = words_[w];
  }
}

int CpuSet::last() const {
  for (auto w = words_.size(); w-- > 0;) {
    if (words_[w] != 0) return static_cast<int>(w * 64) + 63 - std::countl_zero(words_[w]);
  }
  return -1;
}

std::vector<int> CpuSet::to_vector() const {
  std::vector<int> v;
  for (int c = first(); c >= 0; c = next(c)) v.push_back(c);
  return v;
}

std::string CpuSet::to_string() const {
  std::string out;
  int c = first();
  while (c >= 0) {
    int end = c;
    while (test(end + 1)) ++end;
    if (!out.empty()) out += ',';
    out += std::to_string(c);
    if (end > c) out += '-' + std::to_string(end);
    c = next(end);
  }
  return out;
}

CpuSet CpuSet::operator|(const CpuSet& o) const {
  CpuSet r = *this;
  if (r.words_.size() < o.words_.size()) r.words_.resize(o.words_.size(), 0);
  for (std::size_t i = 0; i < o.words_.size(); ++i) r.words_[i] |= o.words_[i];
  return r;
}

CpuSet CpuSet::operator&(const CpuSet& o) const {
  CpuSet r;
  r.words_.resize(std::min(words_.size(), o.words_.size()));
  for (std::size_t i = 0; i < r.words_.size(); ++i) r.words_[i] = words_[i] & o.words_[i];
  r.trim();
  return r;
}

CpuSet CpuSet::operator-(const CpuSet& o) const {
  CpuSet r = *this;
  for (std::size_t i = 0; i < std::min(r.words_.size(), o.words_.size()); ++i) r.words_[i] &= ~o.words_[i];
  r.trim();
  return r;
}

bool CpuSet::operator==(const CpuSet& o) const {
  std::size_t n = std::max(words_.size(), o.words_.size());
  for (std::size_t i = 0; i < n; ++i) {
    std::uint64_t a = i < words_.size() ? words_[i] : 0;
    std::uint64_t b = i < o.words_.size() ? o.words_[i] : 0;
    if (a != b) return false;
  }
  return true;
}

void CpuSet::trim() {
  while (!words_.empty() && words_.back() == 0) words_.pop_back();
}

}  // namespace cosched
