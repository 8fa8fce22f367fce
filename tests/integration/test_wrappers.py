#!/usr/bin/python3
"""num_threads clauses are the program's own request (docs/architecture.md, "Team sizes a program can
observe", rule 3): libcosched_wrap (preloaded by cosched-run) sees them, for clang (__kmpc_push_num_threads) and
gcc (GOMP_parallel*) binaries, forwards them unchanged, and the job's team becomes the program's while the RM
still narrows its CPUs. Only a job that opted in to dynamic adjustment (--malleable) has them lowered."""
import time
import unittest

from harness import RmTestCase, program, wait_for

BUSY = ["--iterations", "100000", "--work-ms", "20", "--quiet"]


class NumThreadsClause(RmTestCase):
    def run_clause(self, rm, binary, launcher=(), iterations=30):
        job = self.start_job([program(binary), "--threads", "2", "--iterations", str(iterations)], rm, request=2,
                             launcher=launcher)
        states = []
        while job.proc.poll() is None:
            j = rm.job(job.pid)
            if j and j["regions"] > 0:
                states.append((j["allocated"], j["team_mode"]))
            time.sleep(0.05)
        self.assertEqual(job.wait(), 0, job.stderr())
        teams = [line.split()[3:6] for line in job.lines() if line.startswith("iter ")]
        self.assertEqual(len(teams), iterations)
        return teams, states

    def start_neighbour(self, rm):
        other = self.start_job([program("amdahl-clang")] + BUSY, rm, request=2, launcher=["--malleable"])
        wait_for(lambda: (rm.job(other.pid) or {}).get("allocated") == 2, what="the first job")

    def test_clauses_get_exactly_what_they_ask_on_one_cpu(self):
        rm = self.start_rm()
        self.start_neighbour(rm)
        for binary in ("clause-clang", "clause-gcc"):
            teams, states = self.run_clause(rm, binary, iterations=60)
            # Every region kind runs with the 2 threads its clause asks for, while the job holds 1 of the 2 CPUs.
            self.assertEqual({t for row in teams for t in row}, {"2"}, f"{binary}: {teams}")
            self.assertIn((1, "fixed: num_threads clause"), states, f"{binary}: {states}")

    def test_a_malleable_job_has_its_clauses_lowered_to_the_grant(self):
        rm = self.start_rm()
        self.start_neighbour(rm)
        for binary in ("clause-clang", "clause-gcc"):
            teams, _ = self.run_clause(rm, binary, launcher=["--malleable"])
            # After the very first region (which may begin before the RM's reply is read), one thread.
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
        job = self.start_job([program("amdahl-gcc"), "--regions", "3"] + BUSY, rm, request=2, launcher=["--malleable"])
        j = rm.wait_for_report_unless_loaded(job.pid) or rm.last_seen  # the period shows either way
        self.assertEqual(j["period"], 3, j)


if __name__ == "__main__":
    unittest.main(verbosity=2)
