#include <gtest/gtest.h>

#include "cosched/error.hpp"

// Keeps the string table in sync with the enum: every code has its own non-"unknown" name.
TEST(Errc, EveryCodeHasAName) {
  for (int i = 0; i < static_cast<int>(cosched::Errc::count_); ++i) {
    auto name = cosched::to_string(static_cast<cosched::Errc>(i));
    EXPECT_FALSE(name.empty());
    EXPECT_NE(name, "unknown") << i;
  }
  EXPECT_EQ(cosched::to_string(cosched::Errc::parse_error), "parse_error");
}
