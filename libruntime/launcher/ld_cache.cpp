#include "ld_cache.hpp"

#include <cstdint>
#include <cstring>

#include "file_bytes.hpp"

namespace cosched::launcher {

namespace {

// The layout glibc's ldconfig writes (glibc's elf/dl-cache.h, format "glibc-ld.so.cache1.1", the only one
// written since glibc 2.32; before that it followed an old "ld.so-1.7.0" table, which we step over).
constexpr char kOldMagic[] = "ld.so-1.7.0";
constexpr char kNewMagic[] = "glibc-ld.so.cache1.1";
constexpr std::size_t kOldNlibs = 12;   // char magic[11], then an aligned unsigned nlibs
constexpr std::size_t kOldHeader = 16;
constexpr std::size_t kOldEntry = 12;                         // flags, key, value
constexpr std::size_t kNewHeader = 48;  // magic+version (20), nlibs, len_strings, flags+pad, ext, unused[3]
constexpr std::size_t kNewEntry = 24;   // flags, key, value, osversion, hwcap (u64)

constexpr std::int32_t kTypeMask = 0x00ff;
constexpr std::int32_t kElfLibc6 = 0x0003;
#if defined(__x86_64__)
constexpr std::int32_t kArchFlags = 0x0300;  // FLAG_X8664_LIB64
#elif defined(__aarch64__)
constexpr std::int32_t kArchFlags = 0x0a00;  // FLAG_AARCH64_LIB64
#else
constexpr std::int32_t kArchFlags = -1;      // unknown here: accept every libc6 entry
#endif

std::uint32_t u32(const std::string& b, std::size_t off) {
  std::uint32_t v = 0;
  std::memcpy(&v, b.data() + off, sizeof v);
  return v;
}

}  // namespace

Result<LdCache> LdCache::parse(std::string bytes, const std::string& origin) {
  LdCache cache;
  cache.bytes_ = std::make_shared<const std::string>(std::move(bytes));
  const std::string& b = *cache.bytes_;
  std::size_t base = 0;  // where the new-format header starts; its string offsets count from there
  if (b.compare(0, sizeof kOldMagic - 1, kOldMagic) == 0) {
    if (b.size() < kOldHeader) return make_error(Errc::parse_error, origin + ": truncated header");
    const std::uint64_t n = u32(b, kOldNlibs);
    base = kOldHeader + n * kOldEntry;
    base = (base + 7) & ~std::size_t{7};  // the new table is aligned to 8 bytes
  }
  if (b.size() < base + kNewHeader || b.compare(base, sizeof kNewMagic - 1, kNewMagic) != 0) {
    return make_error(Errc::parse_error, origin + ": not a glibc ld.so cache (format 1.1)");
  }
  const std::uint64_t nlibs = u32(b, base + 20);
  if (nlibs > (b.size() - base - kNewHeader) / kNewEntry) {
    return make_error(Errc::parse_error, origin + ": " + std::to_string(nlibs) + " entries do not fit in the file");
  }
  auto string_at = [&](std::uint32_t off, std::string_view& out) {
    const std::size_t at = base + off;
    if (at >= b.size()) return false;
    const void* end = std::memchr(b.data() + at, '\0', b.size() - at);
    if (end == nullptr) return false;
    out = std::string_view(b.data() + at, static_cast<std::size_t>(static_cast<const char*>(end) - (b.data() + at)));
    return true;
  };
  cache.paths_.reserve(nlibs);
  for (std::uint64_t i = 0; i < nlibs; ++i) {
    const std::size_t e = base + kNewHeader + i * kNewEntry;
    std::int32_t flags = 0;
    std::memcpy(&flags, b.data() + e, sizeof flags);
    std::uint64_t hwcap = 0;
    std::memcpy(&hwcap, b.data() + e + 16, sizeof hwcap);
    if ((flags & kTypeMask) != kElfLibc6) continue;
    if (kArchFlags >= 0 && (flags & ~kTypeMask) != kArchFlags) continue;  // another ABI (32-bit, x32)
    std::string_view key;
    std::string_view value;
    if (!string_at(u32(b, e + 4), key) || !string_at(u32(b, e + 8), value)) {
      return make_error(Errc::parse_error, origin + ": entry " + std::to_string(i) + " points outside the file");
    }
    // A glibc-hwcaps variant (x86-64-v3 …) is the same library built for a newer CPU: the plain entry
    // names it as well as the loader's choice would.
    auto [it, fresh] = cache.paths_.try_emplace(key, Entry{value, hwcap == 0});
    if (!fresh && !it->second.plain && hwcap == 0) it->second = Entry{value, true};
  }
  return cache;
}

Result<LdCache> LdCache::load(const std::string& path) {
  auto bytes = regular_file_bytes(path);
  if (!bytes.ok()) return bytes.error();
  return parse(std::move(*bytes), path);
}

std::string LdCache::find(const std::string& soname) const {
  auto it = paths_.find(soname);
  return it == paths_.end() ? std::string() : std::string(it->second.path);
}

}  // namespace cosched::launcher
