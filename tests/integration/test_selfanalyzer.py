#!/usr/bin/python3
"""The SelfAnalyzer inside unmodified binaries: period detection, baseline, speedup reported through the
arena and shown by `cosched-ctl status --json` (PDPA paper §3.1), on 2 CPUs with the synthetic Amdahl
program whose true speedup is S(2) = 1 / (F + (1 - F) / 2) for serial fraction F. The reading is compared
with the same program's native speedup, T(1) / T(2), measured just before and just after it: the reading must
lie within 10 % of the nearer of the two (of both, when they agree; when a build running beside the test
changes what the machine delivers between them, anywhere between them is what the machine delivered). A reading outside is measured again (harness.measure_in_bounds), then the test fails with
every try's figures; it never skips because the machine is busy."""
import statistics
import unittest

from harness import RmTestCase, measure_in_bounds, native_speedup, program, wait_for

WORK = ["--iterations", "100000", "--work-ms", "30", "--quiet"]
# The Amdahl program adapts to any team size, so it says so (cosched-run --malleable): its 1-CPU baseline then
# runs one thread. Without the opt-in, cosched never gives it a team of 1 (docs/architecture.md, rule 7).
MALLEABLE = ["--malleable"]


def measured(rm, pid, reports=5):
    """Median of `reports` distinct measured speedup reports taken at 2 CPUs (each is already a median of 5; the
    SelfAnalyzer's, status's `measured_speedup`, whichever estimate the policy uses), and the last; or (None, its
    status) when the job withheld them under outside load and said why (harness)."""
    seen = {}

    def enough(j):
        m = j.get("measured_speedup")
        if m and m["cpus"] == 2 and not m["failed"] and j["phase"] == "measuring":
            seen[m["reports"]] = dict(m, period=j["period"], allocated=j["allocated"])
        return len(seen) >= reports

    if rm.wait_for_report_unless_loaded(pid, also=enough, what=f"{reports} speedup reports") is None:
        return None, rm.last_seen
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

    def check(self, binary, serial):
        def attempt():
            before = native_speedup(serial, binary)
            speedup, report = self.speedup_of(binary, serial)
            if speedup is None:  # withheld under outside load: nothing to compare
                return 1.0, (None, before, None, report)
            after = native_speedup(serial, binary)
            nearest = min(max(speedup, min(before, after)), max(before, after))
            return speedup / nearest, (speedup, before, after, report)

        ratio, (speedup, before, after, report), tries = measure_in_bounds(attempt, 0.9, 1.1, cleanup=self.stop_started)
        if speedup is None:
            print(f"{binary} F={serial}: no report under outside load; status: {report}")
            return None
        figures = f"cosched {speedup:.3f}, native {before:.3f} before and {after:.3f} after; tries {tries}"
        self.assertEqual(report["period"], 1)
        self.assertEqual(report["allocated"], 2)
        self.assertGreater(report["baseline_s"], 0)
        self.assertGreaterEqual(ratio, 0.9, figures)
        self.assertLessEqual(ratio, 1.1, figures)
        self.assertAlmostEqual(report["efficiency"], report["speedup"] / 2, places=6)
        print(f"{binary} F={serial}: {figures}")
        return speedup

    def test_perfectly_parallel(self):
        self.check("amdahl-clang", 0.0)

    def test_half_serial(self):
        self.check("amdahl-clang", 0.5)

    def test_gcc_binary_on_libomp(self):
        self.check("amdahl-gcc", 0.0)

    def test_several_regions_per_iteration(self):
        rm = self.start_rm("--baseline", "always")
        job = self.start_job([program("amdahl-clang"), "--regions", "3"] + WORK, rm, request=2,
                             launcher=MALLEABLE)
        _, report = measured(rm, job.pid, reports=1)
        self.assertEqual(report["period"], 3)  # in status with or without a report

    def test_non_iterative_program_has_no_measured_speedup(self):
        # Nothing repeats, so no iteration times are compared: no measured speedup, and after 2 s status says
        # the program has no structure. Its waiting-time efficiency needs none: its threads work all of the
        # time at 2 CPUs (the regions are register-bound and balanced), within its standard error.
        rm = self.start_rm("--baseline", "always")
        job = self.start_job([program("amdahl-nonperiodic-clang"), "--regions", "4"] + WORK, rm, request=2,
                             launcher=MALLEABLE)
        wait_for(lambda: (rm.job(job.pid) or {}).get("structure") == "none", timeout=60, what="structure none")
        j = wait_for(lambda: (lambda j: j if j and j["waiting_time"] else None)(rm.job(job.pid)), timeout=30,
                     what="a waiting-time efficiency")
        self.assertIsNone(j["measured_speedup"], j)
        self.assertEqual(j["period"], 0)
        self.assertIs(j["iterative"], False, j)
        self.assertEqual(j["estimate_kind"], "waiting_time", j)
        self.assertEqual(j["allocated"], 2)
        self.assertGreater(j["waiting_time"]["efficiency"], 0.8, j)
        self.assertLessEqual(j["speedup"], 2.0, j)

    def test_explicit_api_agrees_with_detection(self):
        def disagreement():
            speedups = {b: self.speedup_of(b, 0.25)[0] for b in ("amdahl-clang", "amdahl-clang-relinked")}
            detected, explicit = speedups["amdahl-clang"], speedups["amdahl-clang-relinked"]
            if detected is None or explicit is None:  # withheld under outside load: nothing to compare
                return 0.0, speedups
            return abs(explicit - detected) / detected, speedups

        gap, speedups, tries = measure_in_bounds(disagreement, 0.0, 0.10, cleanup=self.stop_started)
        self.assertLessEqual(gap, 0.10, (tries, speedups))



class AmdahlNormalisation(RmTestCase):
    """The Amdahl normalisation end to end (PDPA paper §3.1; docs/selfanalyzer.md): a 2-CPU baseline, then
    measurements at 1 CPU, and the parallel fraction f fitted through both points, T(p) = T1((1 - f) + f/p),
    against the fraction the machine delivers natively, f = 2(1 - 1/S(2)), measured just before and after (the
    nearer of the two, as above)."""

    def fit(self, serial):
        rm = self.start_rm("--baseline", "always", "--baseline-cpus", "2", policy="equip")
        job = self.start_job([program("amdahl-clang"), "--serial-fraction", str(serial)] + WORK, rm, request=2,
                             launcher=MALLEABLE)
        # A baseline at the allocation is no lower point: an iteration time at 2 CPUs, without a speedup.
        wait_for(lambda: (rm.job(job.pid) or {}).get("unreported_cpus") == 2, timeout=60, interval=0.1,
                 what="an iteration time at the 2-CPU baseline size")
        # A neighbour that takes a CPU under Equipartition but hardly uses it (1 ms of work, then 50 ms asleep):
        # the job goes to 1 CPU while the CPU wait it sees stays what it was at the baseline.
        neighbour = self.start_job([program("amdahl-clang"), "--iterations", "100000", "--work-ms", "1",
                                    "--sleep-ms", "50", "--quiet"], rm, request=2, launcher=MALLEABLE)
        seen = {}

        def enough(j):
            m = j.get("measured_speedup")
            if m and m["cpus"] == 1 and m["amdahl_f"] is not None:
                seen[m["reports"]] = dict(m, team=j["team"])
            return len(seen) >= 3

        withheld = rm.wait_for_report_unless_loaded(job.pid, also=enough, timeout=90,
                                                    what="3 reports at 1 CPU with a fitted fraction") is None
        neighbour.kill()
        job.kill()
        rm.stop()
        if withheld:  # under outside load (the job said why): nothing to fit
            return None, None
        return statistics.median(j["amdahl_f"] for j in seen.values()), seen[max(seen)]

    def test_amdahl_fit_from_a_two_cpu_baseline(self):
        serial = 0.3  # true parallel fraction 0.7

        def attempt():
            native = [native_speedup(serial)]
            f, report = self.fit(serial)
            if f is None:
                return 0.0, (None, None, native, None)
            native.append(native_speedup(serial))
            # The nearer of the fractions the two native readings give (f grows with S(2)).
            f_native = min(max(f, 2 * (1 - 1 / min(native))), 2 * (1 - 1 / max(native)))
            return f - f_native, (f, f_native, native, report)

        diff, (f, f_native, native, report), tries = measure_in_bounds(attempt, -0.1, 0.1, cleanup=self.stop_started)
        if f is None:
            print("Amdahl fit from a 2-CPU baseline: no reports under outside load")
            return
        figures = f"fitted f {f:.3f}, native f {f_native:.3f} (S(2) {native}); tries {[round(t, 3) if isinstance(t, float) else t for t in tries]}"
        self.assertEqual(report["team"], 1, report)
        self.assertLessEqual(abs(diff), 0.1, figures)
        # At 1 CPU the Amdahl-normalised speedup against one CPU is 1 (PDPA paper §3.1).
        self.assertAlmostEqual(report["speedup"], 1.0, delta=0.1, msg=figures)
        print(f"Amdahl fit from a 2-CPU baseline: {figures}")

if __name__ == "__main__":
    unittest.main(verbosity=2)
