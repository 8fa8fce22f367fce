#!/usr/bin/python3
"""The SelfAnalyzer inside unmodified binaries: period detection, baseline, speedup reported through the
arena and shown by `cosched-ctl status --json` (PDPA paper §3.1), on 2 CPUs with the synthetic Amdahl
program whose true speedup is known: S(2) = 1 / (F + (1 - F) / 2) for serial fraction F. Bounds as in the
SelfAnalyzer issue: [1.6, 2.1] for F = 0 and [1.15, 1.5] for F = 0.5. Here 12 measurements of F = 0 read
1.93 to 2.10 (median 2.0); a reading outside is measured again (see harness.measure_in_bounds)."""
import statistics
import unittest

from harness import RmTestCase, measure_in_bounds, program, require_quiet_machine, wait_for

WORK = ["--iterations", "100000", "--work-ms", "30", "--quiet"]
# The Amdahl program adapts to any team size, so it says so (cosched-run --malleable): its 1-CPU baseline then
# runs one thread. Without the opt-in, cosched never gives it a team of 1 (docs/architecture.md, rule 7).
MALLEABLE = ["--malleable"]


def measured(rm, pid, reports=5):
    """Median of `reports` distinct speedup reports taken at 2 CPUs (each is already a median of 5)."""
    seen = {}

    def enough():
        j = rm.job(pid)
        if j and j.get("speedup") is not None and j.get("measured_cpus") == 2 and j["phase"] == "measuring":
            seen[j["reports"]] = j
        return len(seen) >= reports

    wait_for(enough, timeout=60, interval=0.1, what=f"{reports} speedup reports")
    last = seen[max(seen)]
    return statistics.median(j["speedup"] for j in seen.values()), last


class SpeedupOfUnmodifiedBinaries(RmTestCase):
    def speedup_of(self, binary, serial):
        """One measurement with a fresh RM and job: the median speedup of 5 reports at 2 CPUs."""
        rm = self.start_rm("--baseline", "always")
        job = self.start_job([program(binary), "--serial-fraction", str(serial)] + WORK, rm, request=2,
                             launcher=MALLEABLE)
        speedup, report = measured(rm, job.pid)
        job.kill()
        rm.stop()
        return speedup, report

    def check(self, binary, serial, low, high):
        require_quiet_machine(self, serial, low)
        speedup, report, tries = measure_in_bounds(lambda: self.speedup_of(binary, serial), low, high,
                                                   still_quiet=lambda: require_quiet_machine(self, serial, low, samples=3))
        self.assertEqual(report["period"], 1)
        self.assertEqual(report["allocated"], 2)
        self.assertGreater(report["baseline_s"], 0)
        self.assertGreaterEqual(speedup, low, (tries, report))
        self.assertLessEqual(speedup, high, (tries, report))
        self.assertAlmostEqual(report["efficiency"], report["speedup"] / 2, places=6)
        return speedup

    def test_perfectly_parallel(self):
        self.check("amdahl-clang", 0.0, 1.6, 2.1)

    def test_half_serial(self):
        self.check("amdahl-clang", 0.5, 1.15, 1.5)

    def test_gcc_binary_on_libomp(self):
        self.check("amdahl-gcc", 0.0, 1.6, 2.1)

    def test_several_regions_per_iteration(self):
        rm = self.start_rm("--baseline", "always")
        job = self.start_job([program("amdahl-clang"), "--regions", "3"] + WORK, rm, request=2,
                             launcher=MALLEABLE)
        _, report = measured(rm, job.pid, reports=1)
        self.assertEqual(report["period"], 3)

    def test_non_iterative_program_reports_nothing(self):
        rm = self.start_rm("--baseline", "always")
        job = self.start_job([program("amdahl-nonperiodic-clang"), "--regions", "4"] + WORK, rm, request=2,
                             launcher=MALLEABLE)
        wait_for(lambda: (rm.job(job.pid) or {}).get("regions", 0) >= 200, timeout=60, what="200 regions")
        j = rm.job(job.pid)
        self.assertIsNone(j["speedup"], j)
        self.assertEqual(j["period"], 0)
        self.assertEqual(j["allocated"], 2)

    def test_explicit_api_agrees_with_detection(self):
        require_quiet_machine(self, 0.25, 1.4)

        def disagreement():
            speedups = {b: self.speedup_of(b, 0.25)[0] for b in ("amdahl-clang", "amdahl-clang-relinked")}
            detected, explicit = speedups["amdahl-clang"], speedups["amdahl-clang-relinked"]
            return abs(explicit - detected) / detected, speedups

        gap, speedups, tries = measure_in_bounds(disagreement, 0.0, 0.10,
                                                 still_quiet=lambda: require_quiet_machine(self, 0.25, 1.4, samples=3))
        self.assertLessEqual(gap, 0.10, (tries, speedups))


if __name__ == "__main__":
    unittest.main(verbosity=2)
