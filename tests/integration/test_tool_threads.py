#!/usr/bin/python3
"""libcosched's own threads start in every program (libruntime/tool_thread.hpp): the RM watcher, the
efficiency sampler and the parked roots' keeper, read by name from /proc/<pid>/task/*/comm. glibc places the
static TLS of the libraries a program loads at start-up inside each new thread's stack; OpenBLAS has 60 KiB
of it (Debian's GROMACS loads it at start-up), and libcosched's 64 KiB stacks did not fit: it printed "cannot start
the RM watcher thread; running natively" and left the job to itself while the RM still confined it. The job
here links a library with 256 KiB of TLS (examples/correctness/tls_heavy_lib.c); on the previous build this
test fails (no cosched-watcher thread, the warning on stderr)."""
import unittest

from harness import RmTestCase, program, thread_names, wait_for

TOOL_THREADS = {"cosched-watcher", "cosched-sampler", "cosched-keeper"}


class ToolThreads(RmTestCase):
    def test_a_job_with_large_static_tls_is_managed_with_every_tool_thread(self):
        rm = self.start_rm(policy="equip")
        # --malleable: its regions may follow the grant down to 1 thread, which only a libcosched that
        # follows the RM does (one running natively keeps the team of 2).
        job = self.start_job([program("tls-heavy-clang"), "--iterations", "100000"], rm, request=2,
                             launcher=["--malleable"])
        wait_for(lambda: rm.job(job.pid), what="the job registered")
        names = wait_for(lambda: (lambda n: n if TOOL_THREADS <= n else None)(set(thread_names(job.pid))), timeout=10,
                         what=f"libcosched's threads {sorted(TOOL_THREADS)} in the job")
        self.assertNotIn("natively", job.stderr(), job.stderr())
        # The sampler works: a waiting-time efficiency is published. Its value depends on what else runs (this
        # test runs beside others: ALONGSIDE), so only that it is one.
        j = wait_for(lambda: (lambda s: s if s and s["efficiency"] is not None else None)(rm.job(job.pid)),
                     timeout=20, what="a waiting-time efficiency in status")
        self.assertEqual(j["estimate_kind"], "waiting_time", j)
        self.assertTrue(0 < j["efficiency"] <= 1, j)
        # The RM is followed: a second job takes a CPU, and this job's regions shrink with its grant.
        other = self.start_job([program("amdahl-clang"), "--iterations", "100000", "--work-ms", "20", "--quiet"],
                               rm, request=2)
        wait_for(lambda: (rm.job(job.pid) or {}).get("allocated") == 1 and rm.job(other.pid), timeout=10,
                 what="one CPU each")
        n = len(job.teams())
        wait_for(lambda: "1" in job.teams()[n:], timeout=20, what="a region of 1 thread under the smaller grant")
        self.assertTrue({"cosched-watcher", "cosched-sampler"} <= set(thread_names(job.pid)), names)
        other.kill()
        job.kill()

    def test_its_results_equal_native(self):
        """Every region's team equals what omp_get_max_threads() said before it, and the sums are the
        serial reference's: the program checks both and prints verified."""
        rm = self.start_rm(policy="equip")
        job = self.start_job([program("tls-heavy-clang"), "--iterations", "200"], rm, request=2)
        self.assertEqual(job.wait(), 0, job.stderr()[-2000:])
        self.assertEqual(job.lines()[-1], "verified")
        self.assertNotIn("natively", job.stderr(), job.stderr())


if __name__ == "__main__":
    unittest.main(verbosity=2)
