#!/usr/bin/python3
"""Measurement integrity under outside load (docs/selfanalyzer.md, "Outside load" and "Comparing like with
like"): the demo's two programs run under PDPA while busy loops that cosched does not control come and go
(0.7 s out of every 1.5 s on both CPUs). At the baseline size the efficiency is 1 by definition: the reports
in status --json must stay within [0.8, 1.25]; without the checks they read 1.4 to 3.2. The serial job's speedup
is never reported above 1.3 (issue 29). And PDPA must not give the serial job a second CPU more than once while
its history says that CPU was wasted."""
import os
import statistics
import subprocess
import threading
import time
import unittest

from harness import OUTSIDE_LOAD_SHARE, RmTestCase, cpus_allowed, program, wait_for
from harness import OutsideLoad as OutsideLoadMeter  # OutsideLoad below makes load; this one measures it

WORK = ["--iterations", "100000", "--work-ms", "20", "--quiet"]
# A job alone defers its baseline under the default --baseline auto (docs/selfanalyzer.md, "A baseline waits
# while a job is alone"); the cases that measure one job alone ask for the paper's rule, a baseline at once.
MEASURE_ALONE = ("--baseline", "always")


class OutsideLoad:
    """Two shell busy loops, on for 0.7 s every 1.5 s, started and stopped here (bounded by `close`)."""

    def __init__(self):
        self.stop = threading.Event()
        self.procs = []
        self.cpu_s = 0.0  # CPU time the loops used, read as each is reaped
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        while not self.stop.is_set():
            self.procs = [subprocess.Popen(["/bin/sh", "-c", "while :; do :; done"]) for _ in range(2)]
            self.stop.wait(0.7)
            self.kill()
            self.stop.wait(0.8)

    def kill(self):
        for p in self.procs:
            p.kill()
            _, status, usage = os.wait4(p.pid, 0)
            p.returncode = os.waitstatus_to_exitcode(status)
            self.cpu_s += usage.ru_utime + usage.ru_stime
        self.procs = []

    def close(self):
        self.stop.set()
        self.thread.join(timeout=10)
        self.kill()


class MeasurementUnderOutsideLoad(RmTestCase):
    def test_baseline_efficiency_stays_near_one_and_history_holds_back_the_serial_job(self):
        rm = self.start_rm(policy="pdpa", quantum_ms=100)
        load = OutsideLoad()
        try:
            serial = self.start_job([program("amdahl-gcc"), "--serial-fraction", "1.0"] + WORK, rm, request=2,
                                    launcher=["--malleable"])
            scalable = self.start_job([program("amdahl-clang"), "--serial-fraction", "0"] + WORK, rm, request=2,
                                      launcher=["--malleable"])
            own = [rm.proc.pid, serial.pid, scalable.pid]
            meter = OutsideLoadMeter(rm.cpu_set, own)  # the loops above, and whatever else runs beside the test
            readings = {serial.pid: [], scalable.pid: []}
            last = {}  # each job's latest status
            serial_speedups = set()  # (reports, measured_cpus, speedup): every report of the serial job
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                meter.sample(own)
                for pid, seen in readings.items():
                    j = rm.job(pid)
                    if j:
                        last[pid] = j
                    if j and j["efficiency"] is not None and j["measured_cpus"] == 1:
                        seen.append((j["reports"], j["efficiency"]))
                    if j and pid == serial.pid and j["speedup"] is not None:
                        serial_speedups.add((j["reports"], j["measured_cpus"], round(j["speedup"], 3)))
                time.sleep(0.2)
        finally:
            load.close()
        # What ran beside the test besides its own loops: their CPU time, read as each was reaped, taken out
        # of what the meter saw other processes use. On quiet CPUs about 0.
        beside = meter.share() - load.cpu_s / ((time.monotonic() - meter.start_s) * len(rm.cpu_set))
        # Issue 29: a serial job (true speedup 1 at any CPU count) is never reported above 1.3, whatever the
        # load did between its baseline and its samples.
        print("serial job's reports (reports, cpus, speedup):", sorted(serial_speedups),
              f"| other processes besides the loops: {beside:.0%}")
        self.assertEqual([r for r in serial_speedups if r[2] > 1.3], [], "serial job reported as scalable")
        for pid, seen in readings.items():
            values = sorted({e for _, e in seen})
            # A job may withhold its reports while load it cannot tell from its own comes and goes (a
            # reported speedup is a measurement or nothing): with a build beside the suite, the scalable job
            # said load_differs for all 20 s once. Only then, and only when its status says why, may it
            # have none here; on quiet CPUs besides the loops every job reports.
            why = {k: last.get(pid, {}).get(k) for k in ("no_speedup", "contaminated_samples", "measurement_restarts")}
            if not values and beside > OUTSIDE_LOAD_SHARE and any(why.values()):
                print(f"job {pid}: no report at 1 CPU while other processes used {beside:.0%} of the CPUs "
                      f"besides the test's loops; it said why: {why}")
                continue
            self.assertTrue(values, f"job {pid} never reported at its 1-CPU baseline size "
                                    f"(other processes besides the loops: {beside:.0%}; the job: {why})")
            outside = [e for e in values if not 0.8 <= e <= 1.25]
            self.assertEqual(outside, [], f"job {pid}: efficiencies at 1 CPU against a 1-CPU baseline: {values}")
        # The serial job's allocation over the run, from the decision log: at most one claim of a second CPU
        # after it was first measured at 2 CPUs with an efficiency near 0.5.
        allocations = []
        for d in rm.decisions():
            for j in d["jobs"]:
                if j["id"] == rm_job_id(rm, serial.pid) and (not allocations or allocations[-1] != j["allocated"]):
                    allocations.append(j["allocated"])
        regrowths = sum(1 for a, b in zip(allocations, allocations[1:]) if a == 1 and b == 2)
        self.assertLessEqual(regrowths, 1, f"serial job's allocations: {allocations}")
        why = [w["reason"] for w in rm.request({"cmd": "why", "job": rm_job_id(rm, serial.pid)})["decisions"]]
        print("serial job:", allocations, "| contaminated samples:",
              (rm.job(serial.pid) or {}).get("contaminated_samples"))
        self.assertTrue(why, "why lists the serial job's decisions")


class SpeedupIsAMeasurement(RmTestCase):
    """A job that does not scale (its master works in serial code while its other thread waits: true speedup
    1, efficiency 0.5 at 2 CPUs), not declared malleable, under PDPA on 2 CPUs. Its team floor is 2, so
    alone its baseline is its whole allocation: nothing below it was measured, and it reported speedup 2.00,
    efficiency 1.00 (issue 29); then no speedup, with status saying no_lower_point. Now its baseline runs with its
    team of 2 on 1 CPU (a baseline by narrowing), a real lower point, as when a neighbour takes one CPU: every
    report must be its true efficiency."""

    def test_job_that_does_not_scale_is_reported_at_its_true_efficiency_or_not_at_all(self):
        rm = self.start_rm(*MEASURE_ALONE, policy="pdpa", quantum_ms=100)
        flat = self.start_job([program("amdahl-gcc"), "--serial-fraction", "1.0"] + WORK, rm, request=2,
                              env={"OMP_NUM_THREADS": "2"})
        readings = []
        own = [rm.proc.pid, flat.pid]
        meter = OutsideLoadMeter(rm.cpu_set, own)  # what other processes used: it sets the tolerance below

        def watch(until):
            while time.monotonic() < until:
                meter.sample(own)
                j = rm.job(flat.pid)
                if j and j["efficiency"] is not None:
                    readings.append((j["reports"], j["measured_cpus"], j["efficiency"]))
                time.sleep(0.2)
            return rm.job(flat.pid)

        # Alone, its baseline runs with its 2 threads on 1 CPU (a baseline by narrowing): its first report is
        # a measurement at 2 CPUs (before: no speedup, no_lower_point; before that: efficiency 1.00).
        # Under outside load it may report nothing instead (and say why): then only what it does report below
        # is held to the truth.
        # Until the RM gives the CPU back (within 5 ms, later on a loaded machine), it may report at 1 CPU.
        first = rm.wait_for_report_unless_loaded(flat.pid, also=lambda j: j["measured_cpus"] == 2, timeout=20,
                                                 what="the lone job's first report at 2 CPUs")
        if first is not None:
            self.assertEqual(first["measured_cpus"], 2, first)
            self.assertLessEqual(abs(first["efficiency"] - 0.5), 0.15, first)
        watch(time.monotonic() + 2)
        neighbour = self.start_job([program("amdahl-clang"), "--serial-fraction", "0", "--iterations", "150",
                                    "--work-ms", "20", "--quiet"], rm, request=2, launcher=["--malleable"])
        own.append(neighbour.pid)
        watch(time.monotonic() + 14)
        neighbour.kill()
        watch(time.monotonic() + 6)
        outside = meter.share()
        print("flat job (reports, cpus, efficiency):", sorted(set(readings)), f"| outside load {outside:.2f}")
        by_cpus = {}
        slow_windows = []
        # A report above the truth is the error this test is for (the 1.00 of issue 29): on quiet CPUs never
        # more than 0.15 above. Below, a window slowed by what the outside-load check cannot see reads low:
        # single windows dip to 0.40-0.42 at 2 CPUs on a quiet guest, and a clean-clone CI run read 0.32 in one
        # stretch of five (docs/selfanalyzer.md, "Limits": the diluted share, or the hypervisor's steal). Those
        # may be at most 1 report in 20; the job's typical report (the median) keeps the 0.1.
        # Under a build beside the suite, whose compilers come and go faster than a window, the windows'
        # load levels can match while what slowed them did not: other processes used 63 % of the CPUs and
        # 39 reports at 1 CPU spread from 0.81 to 1.19 (median 0.93). There a single report may be 0.25 from
        # the truth either way (our tolerance, from that run), with the same budget beyond it; the refusal
        # of a scalable reading at 2 CPUs holds whatever the load, the median wherever there is one (below).
        loaded = outside > OUTSIDE_LOAD_SHARE
        tolerance = 0.25 if loaded else 0.15
        for _, cpus, eff in set(readings):
            by_cpus.setdefault(cpus, []).append(eff)
            true = 1.0 / cpus
            if not loaded:
                self.assertLessEqual(eff - true, tolerance, f"efficiency {eff:.2f} at {cpus} CPUs, true {true:.2f}")
            if abs(true - eff) > tolerance:
                slow_windows.append((cpus, eff))
            if cpus >= 2:
                self.assertLessEqual(eff, 0.7, "never reported as scalable")
        self.assertLessEqual(len(slow_windows), len(set(readings)) / 20,
                             f"reports more than {tolerance} from the truth: {slow_windows}")
        # The median is the job's typical report where it has one: on quiet CPUs always, under load from 3
        # reports at a CPU count. A loaded run left one report at 1 CPU (1.19, within the 0.25 above) whose
        # "median" was that report.
        for cpus, effs in by_cpus.items():
            if loaded and len(effs) < 3:
                continue
            self.assertLessEqual(abs(statistics.median(effs) - 1.0 / cpus), 0.1, f"at {cpus} CPUs: {sorted(effs)}")


class BaselineByNarrowing(RmTestCase):
    """A job whose team cannot shrink (omp_set_num_threads(2) before every region, a read of the team size
    before every region, or --fixed-team) alone under PDPA on 2 CPUs runs its baseline on 1 CPU with its team
    of 2 (docs/selfanalyzer.md, "Teams that cannot shrink"): every thread's mask in /proc shows 1 CPU, and so
    does the affinity its regions see, for the baseline's few iterations only, then both CPUs again; it
    reports the speedup of its CPUs; every region had the 2 threads it asked for, and its results verify."""

    @staticmethod
    def report_at_two_cpus(rm, job, timeout):
        """The job's first report at 2 CPUs, or None when outside load withheld it and the job said why
        (harness). Until the RM gives the CPU back (within 5 ms), it may report at 1 CPU first."""
        return rm.wait_for_report_unless_loaded(job.pid, also=lambda j: j["measured_cpus"] == 2, timeout=timeout,
                                                what="a speedup report at 2 CPUs")

    def assert_verified(self, job, iterations):
        """Every one of the job's regions had its 2 threads, and its results verify, reported or not."""
        self.assertEqual(job.wait(), 0, job.stderr())
        self.assertEqual(job.lines()[-1], f"verified regions {iterations} teams 2:{iterations}")

    def test_a_narrowed_baseline_confines_every_thread_for_its_few_iterations_only(self):
        # cpu_probe under --fixed-team: 80 iterations of 40 ms of CPU each (20 ms on 2 CPUs), so the narrowed
        # baseline (a warm-up and 3 samples on 1 CPU: about 160 ms) is long enough to read every thread's mask.
        # Each iteration prints the CPUs its region's master may use ("allowed"), read inside the region.
        rm = self.start_rm(*MEASURE_ALONE, policy="pdpa", quantum_ms=100)
        job = self.start_job([program("cpu_probe-gcc"), "--iterations", "80", "--work-ms", "40", "--blocktime"], rm,
                             request=2, launcher=["--fixed-team"])
        masks = wait_for(lambda: (lambda m: m if len(m) >= 2 and all(len(c) == 1 for c in m.values()) else None)(
            cpus_allowed(job.pid)), timeout=20, interval=0.005, what="every thread on 1 CPU (the narrowed baseline)")
        print("narrowed masks:", masks)
        job_id = rm_job_id(rm, job.pid)
        wait_for(lambda: (lambda m: m and all(len(c) == 2 for c in m.values()))(cpus_allowed(job.pid)),
                 what="both CPUs back in every thread's mask")
        why = rm.ctl("why", str(job_id)).stdout
        self.assertIn("baseline by narrowing: 1 of its 2 CPU(s)", why)
        self.assertIn("baseline by narrowing done", why)
        self.assertEqual(job.wait(), 0, job.stderr())
        lines = job.lines()
        self.assertEqual(lines[-1], "verified", lines[-3:])
        seen = [(int(w[4]), int(w[6])) for w in (line.split() for line in lines) if w[0] == "blocktime"]
        self.assertEqual(len(seen), 80, lines[-3:])
        self.assertEqual({team for team, _ in seen}, {2}, f"(team, allowed CPUs) per iteration: {seen}")
        allowed = "".join(str(a) for _, a in seen)
        print("allowed CPUs per iteration:", allowed)
        self.assertIn("1", allowed, "no region ran narrowed")
        # Each narrowed stretch is one baseline: a warm-up and 3 samples, plus the iteration in which the RM
        # gave the CPU back; bounded like any baseline (10 timed samples: Config::baseline_max_samples) on a
        # loaded machine, where outside load may also start the measurement over (a later stretch).
        stretches = [len(run) for run in allowed.split("2") if run]
        self.assertTrue(all(n <= 12 for n in stretches), f"narrowed too long: {allowed}")
        self.assertGreater(allowed.count("2"), 40, f"too few iterations on both CPUs: {allowed}")

    def test_fixed_team_measures_the_speedup_of_its_cpus(self):
        rm = self.start_rm(*MEASURE_ALONE, policy="pdpa", quantum_ms=100)
        job = self.start_job([program("team-patterns-gcc"), "--pattern", "setnum", "--threads", "2",
                              "--iterations", "40000", "--quiet"], rm, request=2)
        j = self.report_at_two_cpus(rm, job, timeout=20)
        if j is None:
            self.assert_verified(job, 40000)
            return
        print("first report:", {k: j.get(k) for k in ("speedup", "efficiency", "measured_cpus", "team_mode", "iterations",
                                                     "baseline_s", "iteration_s", "spread")})
        self.assertEqual(j["team_mode"], "fixed: omp_set_num_threads")
        self.assertEqual(j["measured_cpus"], 2, j)
        # A measurement, not an assumption, held to the bound every report obeys: no efficiency above 1 + the
        # superlinearity margin (0.5, selfanalyzer/config.hpp), so at most 3.0 at 2 CPUs. A tighter bound would
        # test the guest, not cosched: a 2-thread team of this program runs at two speeds here, 0.146 and 0.230
        # ms per iteration, in phases of 0.5-3 s, natively too (libomp and libgomp alike), and 2 threads on 1
        # CPU at 0.29 or 0.45 ms. Baseline and first window usually share a phase (2.0 in 4 of 5 probes); a
        # pair that straddles a change reads 1.26 (seen), 2.49 (a clean-clone CI run), up to 3.1 (a slow
        # baseline against a fast window: not reported, the measurement restarts and narrows once more;
        # docs/selfanalyzer.md, "Limitations").
        self.assertGreater(j["speedup"], 0, j)
        self.assertLessEqual(j["speedup"], 3.0, j)
        wait_for(lambda: (lambda m: m and all(len(c) == 2 for c in m.values()))(cpus_allowed(job.pid)) and
                 rm.job(job.pid)["baseline_narrowed_to"] is None,
                 what="both CPUs back in every thread's mask, and no narrowing in status")
        why = rm.ctl("why", str(j["id"])).stdout
        self.assertIn("baseline by narrowing: 1 of its 2 CPU(s)", why)
        self.assertIn("baseline by narrowing done", why)
        self.assert_verified(job, 40000)


    def test_latched_reads_measure_the_speedup_of_their_cpus(self):
        # team_patterns' slots reads omp_get_max_threads() before every region and sizes its slots by it, so
        # every region runs the team read (rule 2): its baseline cannot shrink the team either, and runs on 1
        # CPU instead. It reports a speedup at 2 CPUs (its serial reference loop is as long as its parallel one:
        # 1.09, 1.31 and 2.07 in three runs, the guest's two speeds again), within the bound every report obeys,
        # and every region had its 2 threads.
        rm = self.start_rm(*MEASURE_ALONE, policy="pdpa", quantum_ms=100)
        job = self.start_job([program("team-patterns-gcc"), "--pattern", "slots", "--iterations", "10000", "--quiet"],
                             rm, request=2, env={"OMP_NUM_THREADS": "2"})
        j = self.report_at_two_cpus(rm, job, timeout=30)
        if j is None:
            self.assert_verified(job, 10000)
            return
        print("first report:", {k: j.get(k) for k in ("speedup", "measured_cpus", "team_mode", "period", "iterations",
                                                     "baseline_s", "iteration_s")})
        self.assertGreater(j["speedup"], 0, j)
        self.assertLessEqual(j["speedup"], 3.0, j)
        self.assertIn("baseline by narrowing: 1 of its 2 CPU(s)", rm.ctl("why", str(j["id"])).stdout)
        self.assert_verified(job, 10000)


_ids = {}


def rm_job_id(rm, pid):
    if pid not in _ids:
        _ids[pid] = wait_for(lambda: (rm.job(pid) or {}).get("id"), what=f"job id of pid {pid}")
    return _ids[pid]


if __name__ == "__main__":
    unittest.main(verbosity=2)
