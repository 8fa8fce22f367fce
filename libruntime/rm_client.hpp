// libcosched's side of the RM connection: register, map the arena, watch for the RM's death.
#pragma once

#include "options.hpp"

namespace cosched::rt {

// Connects to the RM, registers this process and maps its arena into g_tool. On any failure the job stays
// native: one warning line (unless quiet) and false. Called from the OMPT initialize callback and from the MPI
// wrappers' MPI_Init (mpi_bridge.cpp); only the first call registers, later ones return its outcome.
bool rm_register(const Options& opt, bool explicit_api);

// What became of registration so far: never tried (no OpenMP runtime started the tool, no MPI_Init),
// registered, or failed (and said so in its one warning line). For exit/exit_report.cpp.
enum class Registration { never_tried, registered, failed };
Registration rm_registration();

// Starts the watcher thread that blocks on the RM socket; when the RM closes it (shutdown or death), the
// job returns to native behaviour (rule 3): full team, original CPU mask.
void rm_start_watcher();

// Applies the arena's CPU mask to the calling thread when the RM enforces by affinity (rm_apply_mask).
// One syscall; called when a thread begins, never on the region hot path.
void apply_arena_mask_to_self();

// Closes the connection at program end (the RM sees the departure at once).
// At exit, where COSCHED_REPORT asks for it: the job's CPU report from the RM (exit/cpu_report_at_exit.cpp).
// Before rm_disconnect, while the RM still has the job; once per process.
void write_cpu_report();
void rm_disconnect();

}  // namespace cosched::rt
