#!/usr/bin/python3
"""Time sharing on the real machine: the RM stops and resumes whole jobs as a time-sharing policy says.

- Four NPB kernels each asking for 2 CPUs on 2 CPUs under `gang`: one row (one job) runs per quantum;
  status shows the run states alternating; the kernel confirms that the stopped jobs' threads are held
  (the freezer's own report, or state T for signals); every kernel finishes and verifies.
- Three jobs of one CPU under `sw-dss` on 2 CPUs: a job that runs on while another resumes keeps its CPU
  (decision log, status, /proc masks).
- Three jobs under `vtq-dss` on 2 CPUs: each runs and each waits; jobs running at once hold disjoint CPU
  sets; the decision log's reasons are vtq-dss's and agree with what it logged.
- The RM killed with SIGKILL while a job is stopped: the guard thaws or continues it, and /proc shows it
  running again — for each stop backend this machine has.
- Iterations spanning a stop are not measured: the SelfAnalyzer's iteration time under gang stays close to
  the iteration time of the same program run alone at the same team size, measured side by side.
"""
import errno
import os
import signal
import statistics
import subprocess
import time
import unittest

from harness import (OUTSIDE_LOAD_SHARE, OutsideLoad, RmTestCase, cpus_allowed, measure_in_bounds, per_thread,
                     process_state, program, v1_cgroup, wait_for)

KERNELS = [("npb-cg-clang", "A"), ("npb-cg-gcc", "A"), ("npb-mg-clang", "A"), ("npb-is-clang", "A")]


def mounted(fstype, option=None):
    with open("/proc/self/mountinfo") as f:
        for line in f:
            post = line.split(" - ", 1)[1].split()
            if post[0] == fstype and (option is None or option in post[2].split(",")):
                return True
    return False


def backend_available(name):
    """Whether this machine offers the stop backend `name` to root (the reason when not, else None)."""
    if os.geteuid() != 0 and name != "signal":
        return "cgroup freezers need root"
    if name == "cgroup-v2" and not mounted("cgroup2"):
        return "no cgroup v2 hierarchy mounted"
    if name == "cgroup-v1" and not mounted("cgroup", "freezer"):
        return "no cgroup v1 freezer mounted"
    return None


def unified_dir(pid):
    """The directory of `pid`'s cgroup in the unified hierarchy, or None."""
    root = None
    with open("/proc/self/mountinfo") as f:
        for line in f:
            if line.split(" - ", 1)[1].split()[0] == "cgroup2":
                root = line.split()[4]
    try:
        with open(f"/proc/{pid}/cgroup") as f:
            for line in f:
                if line.startswith("0::"):
                    return os.path.join(root, line.strip()[3:].lstrip("/")) if root else None
    except FileNotFoundError:
        return None
    return None


def v1_freezer_state(pid):
    path = v1_cgroup(pid, "freezer")
    if path is None:
        return None
    try:
        with open(os.path.join("/sys/fs/cgroup/freezer", path.lstrip("/"), "freezer.state")) as s:
            return s.read().strip()
    except FileNotFoundError:
        return None
    except OSError as e:  # ENODEV: the cgroup was removed between the open and the read (the guard's clean-up)
        if e.errno == errno.ENODEV:
            return None
        raise


def held_by_kernel(pid, backend):
    """Whether the kernel itself reports every thread of `pid` held: cgroup.events `frozen 1` (v2),
    freezer.state FROZEN (v1), or state T in /proc/PID/task/*/stat (signals)."""
    if backend == "cgroup-v2":
        d = unified_dir(pid)
        try:
            with open(os.path.join(d, "cgroup.events")) as f:
                return "frozen 1" in f.read()
        except TypeError:  # no unified cgroup
            return False
        except OSError as e:  # gone, or removed between the open and the read (ENODEV)
            if e.errno in (errno.ENOENT, errno.ENODEV):
                return False
            raise
    if backend == "cgroup-v1":
        return v1_freezer_state(pid) == "FROZEN"
    states = thread_states(pid)
    return bool(states) and all(s == "T" for s in states)


def thread_states(pid):
    """The scheduler state letter of every thread of `pid` (R, S, T, ...)."""
    return [text.rsplit(")", 1)[1].split()[0] for text in per_thread(pid, "stat").values()]


def cpu_ticks(pid):
    """utime + stime of the process, in clock ticks."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def cpus_of(cpus):
    """A job's CPUs as status lists them (CPU numbers), as a set; a text such as "0-1,3" is read too."""
    if isinstance(cpus, list):
        return set(cpus)
    out = set()
    for part in filter(None, cpus.split(",")):
        lo, _, hi = part.partition("-")
        out.update(range(int(lo), int(hi or lo) + 1))
    return out


def three_amdahl_jobs(case, policy, request):
    """An RM on CPUs 0-1 under `policy` and three long amdahl jobs asking for `request` CPUs each, admitted."""
    rm = case.start_rm(cpus="0-1", policy=policy)
    work = ["--serial-fraction", "0", "--iterations", "100000", "--work-ms", "30", "--quiet"]
    jobs = [case.start_job([program("amdahl-clang")] + work, rm, request=request) for _ in range(3)]
    wait_for(lambda: len(rm.status()["jobs"]) == 3, what="three jobs admitted")
    return rm, jobs


class VtqDssOnTwoCpus(RmTestCase):
    def test_three_jobs_take_quanta_on_disjoint_cpus_and_each_change_says_why(self):
        # Three jobs asking for 2 CPUs each under vtq-dss on 2 CPUs: the gang of a step runs on the CPUs DSS
        # gives it, the others are stopped. The CPU sets of the jobs running at once never overlap (placement
        # in the real daemon). The decision log's reasons are vtq-dss's and agree with the allocation logged, and
        # jobs left as they were carry none (the policy formats a reason only for a change).
        rm, jobs = three_amdahl_jobs(self, "vtq-dss", request=2)
        seen = {"running": set(), "stopped": set()}
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            status = rm.status()["jobs"]
            running = [j for j in status if j["run_state"] == "running"]
            for j in status:
                seen[j["run_state"]].add(j["pid"])
            self.assertLessEqual(sum(j["allocated"] for j in running), 2, f"more than 2 CPUs given: {status}")
            taken = set()
            for j in running:
                mine = cpus_of(j["cpus"])
                self.assertTrue(mine <= {0, 1}, f"CPUs outside the RM's: {j}")
                self.assertFalse(mine & taken, f"two running jobs on one CPU: {running}")
                taken |= mine
            if all(j.pid in seen["running"] and j.pid in seen["stopped"] for j in jobs):
                break
            time.sleep(0.05)
        for j in jobs:
            self.assertIn(j.pid, seen["running"], "a job never ran")
            self.assertIn(j.pid, seen["stopped"], "a job never waited for its quantum")
        for j in jobs:
            j.kill()
        # The decision log: a reason is vtq-dss's own, and a job left as it was gets none.
        explained = silent = 0
        for d in rm.decisions():
            for e in d["jobs"]:
                if not e["reason"]:
                    silent += 1
                    continue
                explained += 1
                self.assertTrue(e["reason"].startswith("vtq-dss: "), f"a reason not vtq-dss's: {e}")
                if "its gang runs" in e["reason"]:
                    self.assertEqual(e["run"], "running", e)
                    self.assertIn(f"DSS gives {e['allocated']} CPU(s)", e["reason"], e)
                elif "quantum in this step ended" in e["reason"] or "another gang runs" in e["reason"]:
                    self.assertEqual(e["run"], "stopped", e)
        self.assertGreater(explained, 0, "no allocation ever changed")
        self.assertGreater(silent, 0, "a reason for every job in every decision, changed or not")


class SlidingWindowOnTwoCpus(RmTestCase):
    def test_a_job_that_stays_running_keeps_its_cpu_while_another_resumes(self):
        # Three jobs of one CPU under sw-dss on 2 CPUs: the window of two slides by one job each quantum, so a
        # job runs two quanta in a row and, at the second, a stopped job resumes beside it, on the CPU the job
        # that left frees. The job that stays keeps its CPU: placement serves the running jobs first
        # (docs/policies.md, "Selective scheduling"). Before 2026-12-07 an older job resuming took back its old
        # CPU from the job running there, which moved at every turn. Checked in the decision log (every
        # decision, as applied) and in status polled as the jobs run, with the masks read from /proc.
        rm, jobs = three_amdahl_jobs(self, "sw-dss", request=1)
        last = {}
        stayed = resumed = 0
        deadline = time.monotonic() + 4
        while time.monotonic() < deadline:
            for j in rm.status()["jobs"]:
                now = (j["run_state"], j["stops"], j["allocated"], frozenset(cpus_of(j["cpus"])))
                before = last.get(j["pid"])
                last[j["pid"]] = now
                if before is None or now[0] != "running" or before[0] != "running":
                    continue
                if before[1:3] == now[1:3]:  # running all along, with the same count
                    self.assertEqual(before[3], now[3], f"job {j['pid']} moved while it ran: {j}")
                    masks = set(map(frozenset, cpus_allowed(j["pid"]).values()))
                    # Published before the status changes; a stop between the two reads leaves its old mask.
                    self.assertTrue(all(m == now[3] for m in masks) or rm.job(j["pid"])["stops"] != now[1],
                                    f"job {j['pid']} runs on {masks}, status says {sorted(now[3])}")
            time.sleep(0.02)
        for j in jobs:
            j.kill()
        previous = {}
        for d in rm.decisions():
            for e in d["jobs"]:
                before = previous.get(e["id"])
                previous[e["id"]] = e
                if before is None or e["run"] != "running":
                    continue
                if before["run"] == "stopped":
                    resumed += 1
                elif before["allocated"] == e["allocated"]:
                    stayed += 1
                    self.assertEqual(before["cpus"], e["cpus"], f"job {e['id']} moved while it ran: {d}")
        self.assertGreater(resumed, 2, "no job resumed: the window did not slide")
        self.assertGreater(stayed, 2, "no job ran two decisions in a row")


class GangOnTwoCpus(RmTestCase):
    def test_four_jobs_take_one_column_each_by_default(self):
        # More jobs than CPUs: each job gets one CPU, two rows of two (narrow=1, docs/policies.md).
        rm = self.start_rm(cpus="0-1", policy="gang")
        jobs = [self.start_job([program(p), cls], rm, request=2) for p, cls in KERNELS]
        wait_for(lambda: len(rm.status()["jobs"]) == 4, what="four jobs admitted")
        wait_for(lambda: all(j["allocated"] <= 1 for j in rm.status()["jobs"]), what="one column each")
        for j in jobs:
            self.assertEqual(j.wait(timeout=180), 0, j.stderr())
        rows = [{e["id"]: e for e in d["jobs"]} for d in rm.decisions() if len(d["jobs"]) == 4]
        self.assertTrue(rows, "no decision with the four jobs")
        for d in rows:
            running = [e for e in d.values() if e["run"] == "running"]
            self.assertLessEqual(len(running), 2, f"more than two jobs running on 2 CPUs: {d}")
            self.assertTrue(all(e["allocated"] <= 1 for e in running), f"a job holds more than one column: {d}")

    def test_four_kernels_take_turns_and_verify(self):
        # The flat gang (narrow=0): each job asks for the whole machine, so one job runs at a time.
        rm = self.start_rm("--param", "narrow=0", cpus="0-1", policy="gang")
        self.assertIn(rm.status()["stopping"], ("cgroup-v2", "cgroup-v1", "signal"))
        backend = rm.status()["stopping"]
        jobs = [self.start_job([program(p), cls], rm, request=2) for p, cls in KERNELS]
        wait_for(lambda: len(rm.status()["jobs"]) == 4, what="four jobs admitted")

        # Sample status. A job stopped in one reply is checked against the kernel's own word until it is
        # held (a freezer completes asynchronously), and the check counts only when a later reply says the job
        # stayed stopped all along (same stop count).
        held_checks, seen = 0, {"running": set(), "stopped": set()}
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and len(rm.status()["jobs"]) == 4:
            before = {j["pid"]: j for j in rm.status()["jobs"]}
            held = {}
            for pid, j in before.items():
                if j["run_state"] == "stopped":
                    until = time.monotonic() + 0.05
                    while not held_by_kernel(pid, backend) and time.monotonic() < until:
                        time.sleep(0.002)
                    held[pid] = (held_by_kernel(pid, backend), thread_states(pid))
            after = {j["pid"]: j for j in rm.status()["jobs"]}
            for pid, (frozen, states) in held.items():
                a = after.get(pid)
                if a and a["run_state"] == "stopped" and a["stops"] == before[pid]["stops"]:
                    self.assertTrue(frozen, f"pid {pid}: stopped in status but not held by the kernel "
                                            f"({backend}; threads {states})")
                    held_checks += 1
            running = [pid for pid, j in after.items() if j["run_state"] == "running"]
            for pid, j in after.items():
                seen[j["run_state"]].add(pid)
            # Each job asks for the whole machine: one row, one job, at a time.
            self.assertLessEqual(len(running), 1, f"more than one row running: {after}")
            if held_checks >= 6 and all(j.pid in seen["stopped"] and j.pid in seen["running"] for j in jobs):
                break
            time.sleep(0.03)
        some = next((rm.job(j.pid) for j in jobs if rm.job(j.pid)), None)
        if some:  # `why` while a job is still there
            events = [w["event"] for w in rm.request({"cmd": "why", "job": some["id"]})["decisions"]]
            self.assertIn("stop", events)
            self.assertIn("resume", events)
            self.assertGreater(some["cpu_s"], 0)
        # The turns, from the decision log (every quantum's decision, not the samples above, which a loaded
        # machine may space out): one job ran at a time, and every job ran in at least two separate turns
        # (it was stopped and resumed in its life; the kernels last a few quanta each).
        for j in jobs:
            self.assertEqual(j.wait(timeout=180), 0, j.stderr())
        decisions = rm.decisions()
        pid_of = {e["id"]: e["pid"] for d in decisions for e in d["jobs"] if "pid" in e}
        turns, running_before, changes = {}, set(), 0
        for d in decisions:
            running = {pid_of.get(e["id"], e["id"]) for e in d["jobs"] if e["run"] == "running"}
            self.assertLessEqual(len(running), 1, f"more than one row running: {d}")
            for pid in running - running_before:
                turns[pid] = turns.get(pid, 0) + 1
            changes += running != running_before and bool(running)
            running_before = running
        self.assertGreaterEqual(changes, 8, f"the running job changed only {changes} times: {turns}")
        for j in jobs:
            self.assertGreaterEqual(turns.get(j.pid, 0), 2, f"pid {j.pid} ran fewer than 2 turns: {turns}")
        self.assertGreaterEqual(held_checks, 6)
        for j in jobs:
            self.assertIn(j.pid, seen["running"])
            self.assertIn(j.pid, seen["stopped"])

        for j in jobs:
            self.assertIn("VERIFICATION SUCCESSFUL", "\n".join(j.lines()))
        logged = [e for d in rm.decisions() for e in d["jobs"] if e.get("run") == "stopped"]
        self.assertTrue(logged, "the decision log records stopped jobs")


class GuardThawsAfterRmDeath(RmTestCase):
    def check_backend(self, backend):
        why_not = backend_available(backend)
        if why_not:
            self.skipTest(f"stop backend {backend}: {why_not}")
        # A long quantum: the job stays stopped while the test looks.
        rm = self.start_rm("--stop-with", backend, cpus="0-1", policy="gang", quantum_ms=3000)
        self.assertEqual(rm.status()["stopping"], backend)
        long = ["--iterations", "100000", "--work-ms", "10"]
        a = self.start_job([program("amdahl-clang")] + long, rm, request=2)
        b = self.start_job([program("amdahl-clang")] + long, rm, request=2)
        wait_for(lambda: len(rm.status()["jobs"]) == 2, what="two jobs admitted")
        stopped = wait_for(lambda: next((j for j in rm.status()["jobs"] if j["run_state"] == "stopped"), None),
                           what="a stopped job")
        pid = stopped["pid"]
        wait_for(lambda: held_by_kernel(pid, backend), what=f"the kernel to hold pid {pid} ({backend})")
        ticks = cpu_ticks(pid)

        rm.proc.send_signal(signal.SIGKILL)
        rm.proc.wait(timeout=10)
        wait_for(lambda: not held_by_kernel(pid, backend), what=f"the guard to release pid {pid}")
        wait_for(lambda: process_state(pid) not in ("T", None), what="the job to leave state T")
        wait_for(lambda: cpu_ticks(pid) > ticks + 5, what=f"pid {pid} to receive CPU time again")
        if backend == "cgroup-v2":
            self.assertNotIn("cosched", unified_dir(pid))  # back in its own cgroup
        for j in (a, b):
            self.assertIsNone(j.proc.poll(), "the jobs live on natively")

    def test_cgroup_v2_freezer(self):
        self.check_backend("cgroup-v2")

    def test_cgroup_v1_freezer(self):
        self.check_backend("cgroup-v1")

    def test_signals(self):
        self.check_backend("signal")


class MeasurementAcrossStops(RmTestCase):
    def test_iteration_time_under_gang_matches_running_alone(self):
        # Iterations of ~150 ms at two threads in quanta of 200 ms, two jobs: each sits out 200 ms in every
        # 400, so about three iterations in four span a stop and last over 350 ms as the program sees them.
        # A median that took them in would be off by more than 100 %; one that leaves them out matches the
        # iterations that ran whole, in the same run (side by side), and the same program run alone.
        # One calibration for every process: each amdahl run otherwise calibrates its own work unit at start,
        # and two runs side by side can differ by 50 % in what "300 ms" means.
        out = subprocess.run([program("amdahl-clang"), "--iterations", "1", "--work-ms", "1", "--quiet"],
                             capture_output=True, text=True, check=True).stdout.split()
        units = out[out.index("units_per_ms") + 1]
        work = ["--serial-fraction", "0", "--work-ms", "300", "--units-per-ms", units]

        def team2_times(job):
            self.assertEqual(job.wait(timeout=180), 0, job.stderr())
            return [float(l.split()[-1]) for l in job.lines() if l.startswith("iter ") and l.split()[3] == "2"]

        def clean(times):
            """The iterations that ran whole: within 30 % of the fastest (a span adds a 200 ms quantum)."""
            fastest = min(times)
            return [t for t in times if t < 1.3 * fastest]

        def attempt():
            # A baseline at two CPUs, the team gang gives each job: the SelfAnalyzer reports iteration times at
            # two threads from the start (a 1-thread baseline iteration, 300 ms, would span every stop).
            rm = self.start_rm("--baseline", "always", "--baseline-cpus", "2", cpus="0-1", policy="gang",
                               quantum_ms=200)
            launch = dict(request=2, launcher=("--malleable",))
            alone_job = self.start_job([program("amdahl-clang")] + work + ["--iterations", "12"], rm, **launch)
            alone = statistics.median(clean(team2_times(alone_job)))
            jobs = [self.start_job([program("amdahl-clang")] + work + ["--iterations", "80"], rm, **launch)
                    for _ in range(2)]
            analyzer = {}
            last = {}  # each job's latest status: why it has no reading, if it has none
            own = [rm.proc.pid] + [j.pid for j in jobs]
            meter = OutsideLoad(rm.cpu_set, own)
            while any(j.proc.poll() is None for j in jobs):
                meter.sample(own)
                for j in jobs:
                    x = rm.job(j.pid)
                    if x:
                        last[j.pid] = x
                    # The baseline is the allocation (2): no lower point, so no speedup, but the window's
                    # iteration time is published (docs/selfanalyzer.md, "A speedup is a measurement").
                    if x and x["unreported_iteration_s"] and x["unreported_cpus"] == 2 and x["stops"] >= 3:
                        analyzer[j.pid] = x["unreported_iteration_s"]
                    elif x and x["iteration_s"] and x["measured_cpus"] == 2 and x["stops"] >= 3:
                        analyzer[j.pid] = x["iteration_s"]
                time.sleep(0.2)
            outside_load = meter.share()  # before the run alone below, whose CPU time is no outside load
            # Alone again just after: this guest runs a team at two speeds in phases of 0.5-3 s (0.150 and
            # 0.187 s per iteration here; docs/selfanalyzer.md, "Limitations"), so one run alone may catch the
            # other phase. The nearer of the two is the reference.
            after_job = self.start_job([program("amdahl-clang")] + work + ["--iterations", "12"], rm, **launch)
            after = statistics.median(clean(team2_times(after_job)))
            details = {"alone_s": alone, "alone_after_s": after, "outside_load": round(outside_load, 2)}
            used = 0  # the largest share of an allowed deviation any job used (1 = at the bound)
            for j in jobs:
                times = team2_times(j)
                whole = clean(times)
                spanning = len(times) - len(whole)
                ran_whole = statistics.median(whole)
                details[j.pid] = {"whole_median_s": ran_whole, "all_median_s": statistics.median(times),
                                  "spanning": spanning, "of": len(times), "analyzer_s": analyzer.get(j.pid)}
                # Under outside load the stops cannot be told from the load: with other processes on 51 % of
                # the CPUs, every iteration took about twice its time alone, and only 19 of 80 stood out. Then
                # nothing here can be checked, and the details say so; on quiet CPUs the spans are required.
                if spanning <= len(times) / 3 and details["outside_load"] > OUTSIDE_LOAD_SHARE:
                    details[j.pid]["spans_hidden_by_outside_load"] = True
                    continue
                self.assertGreater(spanning, len(times) / 3, f"too few iterations spanned a stop: {details}")
                # Under outside load the job may publish no iteration time (a measurement or nothing). With a
                # build beside the test, 79 of 80 iterations spanned a stop in one run; in another 36 ran whole
                # at 1.9 times their time alone, and status gave no reason (a gap: issue 29's "status says
                # why"). The meter's reading is the evidence then; on quiet CPUs the reading is required.
                if j.pid not in analyzer and details["outside_load"] > OUTSIDE_LOAD_SHARE:
                    x = last.get(j.pid, {})
                    details[j.pid]["withheld"] = {k: x.get(k) for k in ("no_speedup", "contaminated_samples",
                                                                        "measurement_restarts", "iterations")}
                    continue
                self.assertIn(j.pid, analyzer, f"no report at two CPUs after three stops: {details}")
                # A few per cent (#11): within 5 % of the same job's own whole iterations (side by side), and
                # within 8 % of the same program alone at the same team size, run just before or just after (a
                # quiet host gives up to 4 % between two runs a moment apart).
                used = max(used, abs(analyzer[j.pid] / ran_whole - 1) / 0.05)
                nearer = min(max(analyzer[j.pid], min(alone, after)), max(alone, after))
                used = max(used, abs(analyzer[j.pid] / nearer - 1) / 0.08)
            print(f"try: {used:.2f} of the allowed deviation {details}", flush=True)
            return used, details

        used, details, tries = measure_in_bounds(attempt, 0, 1, cleanup=self.stop_started)
        self.assertLessEqual(used, 1, f"SelfAnalyzer under gang: more than 5 % from the iterations that ran whole "
                                      f"or 8 % from the program alone: {details}; tries {tries}")

if __name__ == "__main__":
    unittest.main(verbosity=2)
