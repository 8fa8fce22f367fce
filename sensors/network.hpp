// The network sensor: BW^N of MemBUS (Koukis & Koziris §4), the MPI payload a process sent and received over
// an interval, per second of wall time. The PMPI wrappers (wrappers/mpi.c) count it exactly at the MPI
// interface into the rank's arena; the daemon (rm/daemon/sensing.cpp) hands the interval's difference over in
// Interval::net_bytes. The paper reads DMA counters it added to the NIC's firmware (§5.3), which a
// shared-memory loopback or a kernel-bypass NIC does not offer; counting what the program asks MPI to move
// needs no hardware. A process that is no MPI rank (or has not communicated yet) gets no reading.
#pragma once

#include "sensor.hpp"

namespace cosched::sensors {

class PmpiNetwork final : public Backend {
 public:
  [[nodiscard]] std::string_view name() const override { return "pmpi"; }
  [[nodiscard]] bool serves_every_job() const override { return false; }
  void sample(const std::vector<Interval>& jobs, std::vector<Reading>& out) override;
};

}  // namespace cosched::sensors
