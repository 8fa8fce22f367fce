#!/usr/bin/python3
"""num_threads clauses override what libcosched sets through OMPT; libcosched_wrap (preloaded by cosched-run)
caps them at the granted team size, for clang (__kmpc_push_num_threads) and gcc (GOMP_parallel*) binaries."""
import unittest

from harness import RmTestCase, program, wait_for

BUSY = ["--iterations", "100000", "--work-ms", "20", "--quiet"]


class NumThreadsClause(RmTestCase):
    def run_clause(self, rm, binary):
        job = self.start_job([program(binary), "--threads", "2", "--iterations", "30"], rm, request=2)
        self.assertEqual(job.wait(), 0, job.stderr())
        teams = [line.split()[3:6] for line in job.lines() if line.startswith("iter ")]
        self.assertEqual(len(teams), 30)
        return teams

    def test_clauses_are_capped_at_the_allocation(self):
        rm = self.start_rm()
        other = self.start_job([program("amdahl-clang")] + BUSY, rm, request=2)
        wait_for(lambda: (rm.job(other.pid) or {}).get("allocated") == 2, what="the first job")
        for binary in ("clause-clang", "clause-gcc"):
            teams = self.run_clause(rm, binary)
            # The clause job gets 1 of the 2 CPUs: every region kind runs with one thread (after the very
            # first region, which may begin before the RM's reply is read).
            self.assertEqual({t for row in teams[1:] for t in row}, {"1"}, f"{binary}: {teams}")

    def test_without_a_resource_manager_the_clause_is_honoured(self):
        for binary in ("clause-clang", "clause-gcc"):
            job = self.start_job([program(binary), "--threads", "2", "--iterations", "5"],
                                 socket_path="/nonexistent/cosched.sock", quiet=True)
            self.assertEqual(job.wait(), 0, job.stderr())
            rows = [line.split()[3:6] for line in job.lines() if line.startswith("iter ")]
            self.assertEqual({t for row in rows for t in row}, {"2"}, f"{binary}: {rows}")


class RegionIdentity(RmTestCase):
    def test_gcc_regions_keep_their_call_sites_through_the_wrapper(self):
        # Every GOMP_parallel of a gcc binary passes through libcosched_wrap. libomp names a region by its
        # caller's return address, so the forwarder must jump, not call: otherwise three distinct regions
        # per iteration would look like one region and the SelfAnalyzer would report period 1, not 3.
        rm = self.start_rm("--baseline", "always")
        job = self.start_job([program("amdahl-gcc"), "--regions", "3"] + BUSY, rm, request=2)
        j = rm.wait_for_report(job.pid)
        self.assertEqual(j["period"], 3, j)


if __name__ == "__main__":
    unittest.main(verbosity=2)
