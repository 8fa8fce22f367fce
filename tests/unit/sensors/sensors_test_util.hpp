// The calibration the sensor tests share: a machine of 29 GB/s whose single thread streams 25 GB/s and whose
// contended threads slow by 1.7x (round numbers, so that expected values can be worked out by hand).
#pragma once

#include "sensors/contention_model.hpp"

namespace cosched::sensors::test_util {

inline Calibration machine() {
  Calibration c;
  c.machine_bytes_per_s = 29e9;
  c.thread_bytes_per_s = 25e9;
  c.contention = 1.7;
  return c;
}

}  // namespace cosched::sensors::test_util
