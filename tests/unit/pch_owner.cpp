// Owner of the precompiled header every unit-test binary reuses (tests/CMakeLists.txt): it includes the
// same headers, so it is built with them; it holds no test.
#include <gtest/gtest.h>
