// The baseline each job measures (rm/daemon/config.hpp, baseline_cpus_for): --baseline-cpus N for every job,
// or auto, a quarter of the job's request, at least one CPU.
#include <gtest/gtest.h>

#include "rm/daemon/config.hpp"

namespace cosched::rm {
namespace {

TEST(BaselineCpus, AutoIsAQuarterOfTheRequestAtLeastOne) {
  Config cfg;  // default: auto
  EXPECT_EQ(baseline_cpus_for(cfg, 1), 1);
  EXPECT_EQ(baseline_cpus_for(cfg, 2), 1);
  EXPECT_EQ(baseline_cpus_for(cfg, 7), 1);
  EXPECT_EQ(baseline_cpus_for(cfg, 8), 2);
  EXPECT_EQ(baseline_cpus_for(cfg, 16), 4);  // the 16-CPU jobs of the burst: 4, not 1
  EXPECT_EQ(baseline_cpus_for(cfg, 30), 7);
}

TEST(BaselineCpus, AFixedValueAppliesToEveryJob) {
  Config cfg;
  cfg.baseline_cpus = 2;
  EXPECT_EQ(baseline_cpus_for(cfg, 1), 2);
  EXPECT_EQ(baseline_cpus_for(cfg, 16), 2);
}

}  // namespace
}  // namespace cosched::rm
