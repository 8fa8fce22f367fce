// The dynamic loader's cache (/etc/ld.so.cache, written by ldconfig): soname → path, as ld.so reads it.
//
// Why the cache file and not `ldconfig -p` or /etc/ld.so.conf: the loader itself consults this file, so
// reading it gives the loader's answer even when ld.so.conf changed since ldconfig last ran, and it needs
// no subprocess (cosched-run's start-up is paid by every job). Without a readable cache the loader goes on
// to its default directories, and so do we (an empty cache).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "cosched/error.hpp"

namespace cosched::launcher {

class LdCache {
 public:
  LdCache() = default;
  // Parses `bytes` (the whole cache file). An unknown or damaged format is an error naming `origin`.
  static Result<LdCache> parse(std::string bytes, const std::string& origin);
  // Reads and parses a cache file (normally /etc/ld.so.cache).
  static Result<LdCache> load(const std::string& path);
  // The path recorded for `soname` (64-bit x86-64 libc6 entries, the plain one before a glibc-hwcaps
  // variant), or empty.
  [[nodiscard]] std::string find(const std::string& soname) const;
  [[nodiscard]] std::size_t size() const { return paths_.size(); }

 private:
  // Keys and paths are views into the file's bytes, which copies of the cache share: the table has one
  // entry per library on the system (thousands), and cosched-run builds it for every job it starts, so
  // it copies no string (our choice; it took half a millisecond of each job's start-up with copies).
  struct Entry {
    std::string_view path;
    bool plain = false;  // a plain entry, not a glibc-hwcaps variant
  };
  std::shared_ptr<const std::string> bytes_;
  std::unordered_map<std::string_view, Entry> paths_;
};

}  // namespace cosched::launcher
