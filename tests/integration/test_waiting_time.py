#!/usr/bin/python3
"""The waiting-time efficiency (docs/selfanalyzer.md, "Where the iterations are", "Waiting-time efficiency" and
"Two estimates"): the codes the regions' detector cannot measure, a one-region time loop and a task graph that
repeats, each report an efficiency and PDPA acts on it; a job that slows down with more threads is given fewer
CPUs (its masks, read from /proc, hold one CPU); a serial job beside outside load that comes and goes is never
reported above speedup 1.3, in 20 rounds; no speedup above the CPUs is ever published. Every job's result is
compared with its native run."""
import os
import subprocess
import time
import unittest

from harness import RmTestCase, cpus_allowed, program, wait_for
from test_measurement_integrity import OutsideLoad


def native(args, threads):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), KMP_AFFINITY="disabled")
    return subprocess.run(args, env=env, capture_output=True, text=True, check=True, timeout=120).stdout


def last_zeta(text):
    """NPB CG's zeta after its last iteration ("  iteration 40  ||r|| = ...  zeta = 1.71...e+01")."""
    lines = [line for line in text.splitlines() if line.lstrip().startswith("iteration")]
    return lines[-1].split("zeta =")[1].strip() if lines else None


def field(text, name):
    """The value after `name` on the program's last line that has it ("done steps 50 time 0.3 checksum 7")."""
    for line in reversed(text.splitlines()):
        parts = line.split()
        if name in parts:
            return parts[parts.index(name) + 1]
    return None


class Watch:
    """Polls a job's status until it ends; keeps every status and checks each published speedup is possible."""

    def __init__(self, test, rm, job):
        self.test, self.rm, self.job = test, rm, job
        self.seen = []

    def poll(self):
        j = self.rm.job(self.job.pid)
        if j:
            self.seen.append(j)
            if j["speedup"] is not None:
                # Nothing impossible is published: at most 10 % above the CPUs it was measured at.
                self.test.assertLessEqual(j["speedup"], j["measured_cpus"] * 1.1 + 1e-9, j)
        return j

    def until_done(self, interval=0.2):
        while self.job.proc.poll() is None:
            self.poll()
            time.sleep(interval)
        return self.seen


class CodesWithoutARegionPeriod(RmTestCase):
    def test_a_one_region_time_loop_reports_an_efficiency_and_pdpa_acts_on_it(self):
        # NPB CG with one parallel region around its time loop: its period is one of constructs.
        args = [program("npb-cg-spmd-clang"), "A", "--iterations", "40"]
        expected = last_zeta(native(args, 2))  # NPB verifies only its own iteration count: compare with native
        rm = self.start_rm(policy="pdpa", quantum_ms=100)
        job = self.start_job(args, rm, request=2)
        watch = Watch(self, rm, job)
        j = wait_for(lambda: (lambda j: j if j and j["estimate_kind"] == "waiting_time"
                              and j["structure"] == "constructs" and j["policy_state"] in ("INC", "STABLE", "DEC")
                              else None)(watch.poll()), timeout=30, what="a waiting-time estimate PDPA judged")
        self.assertEqual(j["regions"] <= 3, True, f"one region (and the warm-up's): {j}")
        self.assertGreater(j["structure_period"], 50, j)
        self.assertIsNone(j["measured_speedup"], "a region's team cannot change: no iteration times to compare")
        watch.until_done()
        self.assertEqual(job.wait(), 0, job.stderr())
        self.assertEqual(last_zeta("\n".join(job.lines())), expected, "zeta differs from the native run's")
        judged = [d for d in rm.decisions() if d["event"] == "report"]
        self.assertTrue(judged, "PDPA decided on the job's reports")

    def test_a_task_parallel_program_reports_an_efficiency(self):
        # Recursive tasks under a single producer, one region around the time loop.
        args = [program("tasks-clang"), "--mode", "fib", "--steps", "600", "--quiet"]
        expected = field(native(args, 2), "checksum")
        rm = self.start_rm(policy="pdpa", quantum_ms=100)
        job = self.start_job(args, rm, request=2)
        watch = Watch(self, rm, job)
        wait_for(lambda: (lambda j: j if j and j["estimate_kind"] == "waiting_time"
                          and j["policy_state"] in ("INC", "STABLE", "DEC") else None)(watch.poll()),
                 timeout=30, what="a waiting-time estimate PDPA judged")
        watch.until_done()
        self.assertEqual(job.wait(), 0, job.stderr())
        self.assertEqual(field("\n".join(job.lines()), "checksum"), expected, "the result differs from native")
        # Which thread runs which task varies from step to step, so the master's constructs may show no period
        # (structure "none"): the efficiency needs none.
        print("structure:", watch.seen[-1]["structure"], "efficiency:", watch.seen[-1]["efficiency"])

    def test_a_job_that_slows_down_with_more_threads_is_given_fewer_cpus(self):
        # Tasks too fine to scale: 2 threads run slower than 1 (measured here, natively, side by side).
        args = [program("tasks-clang"), "--mode", "fine", "--steps", "1200", "--quiet"]
        t1, t2 = float(field(native(args, 1), "time")), float(field(native(args, 2), "time"))
        print(f"native: 1 thread {t1:.3f} s, 2 threads {t2:.3f} s")
        self.assertGreater(t2, t1, "the program is meant to slow down with a second thread")
        expected = field(native(args, 1), "checksum")
        rm = self.start_rm(policy="pdpa", quantum_ms=100)
        job = self.start_job(args, rm, request=2)
        watch = Watch(self, rm, job)
        j = wait_for(lambda: (lambda j: j if j and j["allocated"] == 1 else None)(watch.poll()), timeout=30,
                     what="PDPA to take its second CPU")
        masks = wait_for(lambda: (lambda m: m if m and all(len(c) == 1 for c in m.values()) else None)(
            cpus_allowed(job.pid)), timeout=10, what="every thread confined to one CPU")
        self.assertEqual(len({frozenset(c) for c in masks.values()}), 1, masks)
        self.assertEqual(j["estimate_kind"], "waiting_time", j)
        # It is not given the CPU back: a loan that buys nothing (docs/policies.md, "Work conservation").
        held = []
        while job.proc.poll() is None:
            j = watch.poll()
            if j:
                held.append(j["allocated"])
            time.sleep(0.2)
        self.assertEqual(job.wait(), 0, job.stderr())
        self.assertEqual(field("\n".join(job.lines()), "checksum"), expected)
        self.assertLessEqual(held.count(2), 1, f"allocations after the decrease: {held}")


class NothingImpossibleIsPublished(RmTestCase):
    ROUNDS = 20

    def test_a_serial_job_beside_load_that_comes_and_goes_is_never_reported_above_1_3(self):
        # 20 rounds: an RM, a serial job (speedup 1 at any CPU count) measured from its start (--baseline always,
        # so its iteration times are compared too), and two busy loops on 0.7 s of every 1.5 s.
        readings = []
        for n in range(self.ROUNDS):
            rm = self.start_rm("--baseline", "always", policy="pdpa", quantum_ms=100)
            load = OutsideLoad()
            try:
                job = self.start_job([program("amdahl-gcc"), "--serial-fraction", "1.0", "--iterations", "100",
                                      "--work-ms", "20", "--quiet"], rm, request=2, launcher=["--malleable"])
                watch = Watch(self, rm, job)
                watch.until_done(interval=0.1)
            finally:
                load.close()
            self.assertEqual(job.wait(), 0, job.stderr())
            speedups = {round(j["speedup"], 3) for j in watch.seen if j["speedup"] is not None}
            readings.append(sorted(speedups))
            self.assertEqual([s for s in speedups if s > 1.3], [], f"round {n + 1}: {sorted(speedups)}")
            rm.stop()
        print("speedups published per round:", readings)
        self.assertTrue(any(readings), "no round published any estimate")


if __name__ == "__main__":
    unittest.main(verbosity=2)
