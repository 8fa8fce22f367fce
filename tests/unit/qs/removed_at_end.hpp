// A file a test writes under testing::TempDir() (/tmp unless TEST_TMPDIR says otherwise), removed when the
// test's scope ends, whether its assertions held or not: the suite leaves nothing behind.
#pragma once

#include <cstdio>
#include <string>
#include <utility>

struct RemovedAtEnd {
  std::string path;
  explicit RemovedAtEnd(std::string p) : path(std::move(p)) {}
  RemovedAtEnd(const RemovedAtEnd&) = delete;
  RemovedAtEnd& operator=(const RemovedAtEnd&) = delete;
  ~RemovedAtEnd() { std::remove(path.c_str()); }
};
