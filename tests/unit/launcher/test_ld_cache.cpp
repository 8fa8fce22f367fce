// /etc/ld.so.cache as glibc's ldconfig writes it: synthetic caches with values worked out by hand, and
// the machine's own cache checked against the files it names.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "ld_cache.hpp"

using cosched::launcher::LdCache;

namespace {

struct Entry {
  std::int32_t flags;
  std::string key, value;
  std::uint64_t hwcap = 0;
};

template <typename T>
void put(std::string& b, std::size_t at, T v) {
  std::memcpy(&b[at], &v, sizeof v);
}

// The new format: 48-byte header, 24-byte entries, then the strings; offsets count from the header.
std::string new_cache(const std::vector<Entry>& entries) {
  std::string b(48 + 24 * entries.size(), '\0');
  std::memcpy(&b[0], "glibc-ld.so.cache1.1", 20);
  put<std::uint32_t>(b, 20, static_cast<std::uint32_t>(entries.size()));
  std::string strings;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const std::size_t e = 48 + 24 * i;
    put<std::int32_t>(b, e, entries[i].flags);
    put<std::uint32_t>(b, e + 4, static_cast<std::uint32_t>(b.size() + strings.size()));
    strings += entries[i].key + '\0';
    put<std::uint32_t>(b, e + 8, static_cast<std::uint32_t>(b.size() + strings.size()));
    strings += entries[i].value + '\0';
    put<std::uint64_t>(b, e + 16, entries[i].hwcap);
  }
  put<std::uint32_t>(b, 24, static_cast<std::uint32_t>(strings.size()));
  return b + strings;
}

constexpr std::int32_t kX8664Libc6 = 0x0303;
constexpr std::int32_t kI386Libc6 = 0x0003;  // no 64-bit flag: a 32-bit library

TEST(LdCache, FindsTheEntryOfThisAbiAndPrefersThePlainOneToAHwcapVariant) {
  const std::string bytes = new_cache({
      {kX8664Libc6, "libgomp.so.1", "/usr/lib/x86_64-linux-gnu/glibc-hwcaps/x86-64-v3/libgomp.so.1", 1ULL << 62},
      {kX8664Libc6, "libgomp.so.1", "/usr/lib/x86_64-linux-gnu/libgomp.so.1"},
      {kI386Libc6, "libm.so.6", "/usr/lib/i386-linux-gnu/libm.so.6"},
      {kX8664Libc6, "libz.so.1", "/lib/x86_64-linux-gnu/libz.so.1"},
  });
  auto cache = LdCache::parse(bytes, "test.cache");
  ASSERT_TRUE(cache.ok()) << cache.error().message;
#if defined(__x86_64__)
  EXPECT_EQ(cache->find("libgomp.so.1"), "/usr/lib/x86_64-linux-gnu/libgomp.so.1");
  EXPECT_EQ(cache->find("libz.so.1"), "/lib/x86_64-linux-gnu/libz.so.1");
  EXPECT_EQ(cache->find("libm.so.6"), "");  // the 32-bit entry is not ours
  EXPECT_EQ(cache->size(), 2U);
#endif
  EXPECT_EQ(cache->find("libabsent.so"), "");
}

TEST(LdCache, OldFormatTableIsSteppedOver) {
  // "ld.so-1.7.0", a pad byte, nlibs = 1 at 12, one 12-byte entry: 28 bytes, aligned to 32 for the new table.
  std::string old(32, '\0');
  std::memcpy(&old[0], "ld.so-1.7.0", 11);
  put<std::uint32_t>(old, 12, 1);
  const std::string fresh = new_cache({{kX8664Libc6, "libz.so.1", "/lib/libz.so.1"}});
  auto cache = LdCache::parse(old + fresh, "old.cache");
  ASSERT_TRUE(cache.ok()) << cache.error().message;
#if defined(__x86_64__)
  EXPECT_EQ(cache->find("libz.so.1"), "/lib/libz.so.1");
#endif
}

TEST(LdCache, DamagedFilesAreOneErrorNamingTheFile) {
  auto bad = LdCache::parse("not a cache at all, but long enough to hold a header............", "x.cache");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "x.cache: not a glibc ld.so cache (format 1.1)");

  std::string bytes = new_cache({{kX8664Libc6, "libz.so.1", "/lib/libz.so.1"}});
  put<std::uint32_t>(bytes, 20, 1000);  // more entries than the file holds
  auto big = LdCache::parse(bytes, "y.cache");
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.error().message, "y.cache: 1000 entries do not fit in the file");

  bytes = new_cache({{kX8664Libc6, "libz.so.1", "/lib/libz.so.1"}});
  put<std::uint32_t>(bytes, 48 + 8, 1U << 30);  // a value string far outside the file
  auto outside = LdCache::parse(bytes, "z.cache");
  ASSERT_FALSE(outside.ok());
  EXPECT_EQ(outside.error().message, "z.cache: entry 0 points outside the file");
  EXPECT_FALSE(LdCache::parse("", "e.cache").ok());
}

TEST(LdCache, TheMachinesCacheNamesFilesThatExist) {
  // Every glibc system has one, and libc.so.6 is in it (ldconfig runs when any library package installs).
  auto cache = LdCache::load("/etc/ld.so.cache");
  ASSERT_TRUE(cache.ok()) << cache.error().message;
  const std::string libc = cache->find("libc.so.6");
  ASSERT_FALSE(libc.empty());
  EXPECT_EQ(::access(libc.c_str(), R_OK), 0) << libc;
  EXPECT_GT(cache->size(), 10U);
}

}  // namespace
