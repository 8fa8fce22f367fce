// Closed workloads (Polychronopoulos et al. §4.2.1, "closed system mode"): M instances of each benchmark
// start together; when an instance completes, another instance of the same benchmark takes its place at
// once. In SWF each instance's successor names it in field 17 (preceding job) with field 18 (think time)
// 0; qsubmit and cosched-sim release a job when its predecessor ends, plus the think time.
#pragma once

#include "generator.hpp"

namespace cosched::swfgen {

// Every application of `apps` needs PROCS and RUNTIME_S (its dedicated run time at that request, written
// as field 4). Each of the `copies` chains per application holds ceil(duration_s / RUNTIME_S) jobs (at
// least 1). Field 2 of a successor is its predecessor's submit plus RUNTIME_S: the time it would be
// released on a dedicated machine (files stay sorted by submit time; the release itself follows field 17).
Result<swf::Workload> generate_closed(const Config& config, int copies);

}  // namespace cosched::swfgen
