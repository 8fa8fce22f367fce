#!/usr/bin/python3
"""qsubmit end to end on 2 CPUs: real jobs (the synthetic amdahl program) replayed from an SWF file.

- Under PDPA the RM decides *when* (PDPA paper §4.3): once PDPA has measured the non-scalable first job and
  shrunk it to one CPU, may_start says yes and the second job starts while the first still runs. Under
  Equipartition with a fixed ML of 1 the second job waits for the first to end.
- --native replays the same workload without an RM and writes the same set of files.
- A malformed SWF line is refused before anything starts (exit 2, file:line:field).
- Ctrl-C kills the jobs, leaves none stopped, stops the private RM and removes its socket directory.
"""
import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from harness import BUILD, ResourceManager, process_state, wait_for  # noqa: E402

QSUBMIT = os.path.join(BUILD, "qs/qsubmit/qsubmit")

# Executable 1 does not scale at all (its whole iteration is serial), executable 2 scales perfectly. Both
# ask for 2 CPUs. With 50 ms iterations the SelfAnalyzer's first report comes about 11 iterations (~0.6 s)
# after a job starts (docs/selfanalyzer.md), well before the second job arrives at 1.5 s. The program adapts
# to any team size, so the catalog declares it malleable: its 1-CPU baseline runs 1 thread.
CATALOG = """\
apps:
  1:
    name: apsi
    class: not-scalable
    command: "@amdahl --serial-fraction {serial} --iterations {long_iters} --work-ms 50"
    team: malleable
  2:
    name: swim
    class: scalable
    command: "@amdahl --serial-fraction 0.0 --iterations 20 --work-ms 50"
    team: malleable
"""

# Four jobs, submit times in trace seconds (replayed at --time-scale 0.5: arrivals at 0, 1.5, 3, 4 s). Job 1
# runs ~3 s on any number of CPUs, job 2 ~1 s on one CPU.
WORKLOAD = """\
; Version: 2.2
; MaxProcs: 2
; Note: qsubmit integration test: a non-scalable job, then a scalable one while it runs
1 0 -1 3 2 -1 -1 2 -1 -1 1 -1 -1 1 -1 -1 -1 -1
2 3 -1 1 2 -1 -1 2 -1 -1 1 -1 -1 2 -1 -1 -1 -1
3 6 -1 1 2 -1 -1 2 -1 -1 1 -1 -1 2 -1 -1 -1 -1
4 8 -1 3 2 -1 -1 2 -1 -1 1 -1 -1 1 -1 -1 -1 -1
"""

RESULT_FILES = {"jobs.csv", "summary.json", "ml.csv", "decisions.jsonl"}


def read_jobs(out_dir):
    with open(os.path.join(out_dir, "jobs.csv")) as f:
        return {int(row["job"]): {k: (float(v) if k not in ("app", "class") else v) for k, v in row.items()}
                for row in csv.DictReader(f)}


def read_allocation(out_dir):
    """{job: [(t0, t1, cpus)]} from allocation.csv, when the results writer provides it."""
    path = os.path.join(out_dir, "allocation.csv")
    out = {}
    if not os.path.exists(path):
        return out
    with open(path) as f:
        for row in csv.DictReader(f):
            out.setdefault(int(row["job"]), []).append((float(row["t0"]), float(row["t1"]), int(row["cpus"])))
    return out


def session_members(sid):
    r = subprocess.run(["pgrep", "-s", str(sid)], capture_output=True, text=True)
    return [int(x) for x in r.stdout.split()]


def file_set(out_dir):
    found = set()
    for root, _, files in os.walk(out_dir):
        for name in files:
            found.add(os.path.relpath(os.path.join(root, name), out_dir))
    return found


class QsubmitTestCase(unittest.TestCase):
    def setUp(self):
        if not os.path.exists(QSUBMIT):
            raise AssertionError(f"{QSUBMIT} is missing: the build should have produced it")
        self.dir = tempfile.mkdtemp(prefix="qsubmit-it-")
        # qsubmit's private RM puts its socket directory under TMPDIR: a private one shows what is left.
        self.tmp = os.path.join(self.dir, "tmp")
        os.mkdir(self.tmp)
        self.swf = os.path.join(self.dir, "w.swf")
        self.write_workload(WORKLOAD, long_iters=60)
        self.procs = []

    def tearDown(self):
        for p in self.procs:
            if p.poll() is None:
                # qsubmit's own cleanup first: its RM and jobs live in process groups of their own.
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    pass
            for pid in session_members(p.pid):
                try:
                    os.kill(pid, signal.SIGCONT)
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            if p.poll() is None:
                p.wait()
        shutil.rmtree(self.dir, ignore_errors=True)

    def write_workload(self, swf_text, long_iters, serial="1.0"):
        """`serial`: executable 1's serial fraction; tests that only need it to run long make it scalable."""
        with open(self.swf, "w") as f:
            f.write(swf_text)
        with open(os.path.join(self.dir, "catalog.yaml"), "w") as f:
            f.write(CATALOG.format(long_iters=long_iters, serial=serial))

    def env(self):
        env = dict(os.environ)
        env["TMPDIR"] = self.tmp
        return env

    def start(self, *args):
        """qsubmit in a session of its own, so that tearDown finds everything it started."""
        p = subprocess.Popen([QSUBMIT, self.swf] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, env=self.env(), start_new_session=True)
        self.procs.append(p)
        return p

    def qsubmit(self, *args, timeout=120):
        """Runs qsubmit to its end; returns (CompletedProcess, output directory)."""
        out = os.path.join(self.dir, "out-" + str(len(os.listdir(self.dir))))
        args = ["--out", out, "--time-scale", "0.5"] + list(args)
        p = self.start(*args)
        stdout, stderr = p.communicate(timeout=timeout)  # on timeout, tearDown stops it
        return subprocess.CompletedProcess(p.args, p.returncode, stdout, stderr), out

    def assert_consistent(self, out, r):
        self.assertEqual(r.returncode, 0, f"qsubmit failed:\n{r.stdout}\n{r.stderr}")
        jobs = read_jobs(out)
        self.assertEqual(sorted(jobs), [1, 2, 3, 4])
        for job_id, j in jobs.items():
            self.assertGreaterEqual(j["start"], j["submit"], f"job {job_id} started before it arrived")
            self.assertGreater(j["end"], j["start"], f"job {job_id}")
            self.assertAlmostEqual(j["response"], j["end"] - j["submit"], places=3, msg=f"job {job_id}")
            self.assertAlmostEqual(j["execution"], j["end"] - j["start"], places=3, msg=f"job {job_id}")
            self.assertAlmostEqual(j["wait"], j["start"] - j["submit"], places=3, msg=f"job {job_id}")
            self.assertEqual(j["exit_status"], 0, f"job {job_id}")
            self.assertEqual(j["requested"], 2)
        # Submit times are the trace's, scaled by 0.5.
        self.assertEqual([jobs[i]["submit"] for i in (1, 2, 3, 4)], [0.0, 1.5, 3.0, 4.0])
        self.assertTrue(RESULT_FILES <= file_set(out), file_set(out))
        for i in (1, 2, 3, 4):
            self.assertIn(f"jobs/{i}.out", file_set(out))
            self.assertIn(f"jobs/{i}.err", file_set(out))
        self.assertEqual(os.listdir(self.tmp), [], "the private RM's socket directory was left behind")
        return jobs


class DynamicMultiprogrammingLevel(QsubmitTestCase):
    def test_pdpa_starts_the_second_job_while_the_first_runs(self):
        t0 = time.monotonic()
        r, out = self.qsubmit("--policy", "pdpa", "--cpus", "0-1", "--quiet")
        jobs = self.assert_consistent(out, r)
        print(f"\npdpa run: {time.monotonic() - t0:.1f} s", file=sys.stderr)
        first, second = jobs[1], jobs[2]
        self.assertGreater(first["execution"], 2.0,
                           "job 1 (60 serial iterations of 50 ms) ended too soon: amdahl did no serial work")
        self.assertLess(second["start"], first["end"],
                        "under PDPA the second job should start while the non-scalable first one runs "
                        "(needs the SelfAnalyzer's reports to reach PDPA)")
        # It could start because PDPA had shrunk the first job to one CPU.
        segments = read_allocation(out).get(1, [])
        self.assertTrue(segments, "allocation.csv has no segments for job 1")
        self.assertTrue(any(cpus == 1 and t0_ <= second["start"] + 0.25 and second["start"] <= t1_ + 0.25
                            for t0_, t1_, cpus in segments),
                        f"no 1-CPU segment of job 1 covers job 2's start at {second['start']:.2f}: {segments}")
        decisions = open(os.path.join(out, "decisions.jsonl")).read()
        self.assertIn('"policy":"pdpa"', decisions.replace(" ", ""))
        self.assert_rm_ids_join_the_decision_log(out, jobs)

    def assert_rm_ids_join_the_decision_log(self, out, jobs):
        """jobs.csv carries each job's RM id and pid, and the decision log names the same pair."""
        logged = {}
        with open(os.path.join(out, "decisions.jsonl")) as f:
            for line in f:
                for j in json.loads(line).get("jobs", []):
                    logged.setdefault(j["id"], set()).add(j["pid"])
        rm_ids = [int(j["rm_id"]) for j in jobs.values()]
        self.assertEqual(len(set(rm_ids)), len(rm_ids), f"RM ids not distinct: {rm_ids}")
        for job_id, j in jobs.items():
            rm_id, pid = int(j["rm_id"]), int(j["pid"])
            self.assertGreater(rm_id, 0, f"job {job_id} has no RM id in jobs.csv")
            self.assertGreater(pid, 0, f"job {job_id} has no pid in jobs.csv")
            self.assertEqual(logged.get(rm_id), {pid}, f"job {job_id}: RM id {rm_id} in the decision log")

    def test_equip_with_ml_1_makes_the_second_job_wait(self):
        t0 = time.monotonic()
        r, out = self.qsubmit("--policy", "equip", "--cpus", "0-1", "--ml", "1", "--quiet")
        jobs = self.assert_consistent(out, r)
        print(f"\nequip --ml 1 run: {time.monotonic() - t0:.1f} s", file=sys.stderr)
        order = sorted(jobs.values(), key=lambda j: j["start"])
        for earlier, later in zip(order, order[1:]):
            self.assertGreaterEqual(later["start"], earlier["end"] - 1e-3, "ML 1: one job at a time")
        self.assertGreaterEqual(jobs[2]["start"], jobs[1]["end"] - 1e-3)


    def test_equip_may_start_admits_up_to_one_job_per_cpu(self):
        # No --ml: admission follows the RM's may_start. Equipartition says yes while a new job would get a
        # CPU of its own, so on 2 CPUs the second job starts at once and never more than two run. One job per
        # CPU (jobs_per_cpu=1, the paper's admission): under the default, job 3, arriving while jobs 1 and 2
        # still run, shares a CPU instead (docs/policies.md, "A queue longer than the machine"), which is
        # what a clean-clone CI run saw (3 running) when job 1 had not ended by then.
        self.write_workload(WORKLOAD, long_iters=100, serial="0.0")
        r, out = self.qsubmit("--policy", "equip", "--param", "jobs_per_cpu=1", "--cpus", "0-1", "--quiet")
        jobs = self.assert_consistent(out, r)
        self.assertLess(jobs[2]["start"], jobs[1]["end"])
        self.assertLess(jobs[2]["start"] - jobs[2]["submit"], 1.0, "job 2 should not wait for a CPU")
        with open(os.path.join(out, "ml.csv")) as f:
            running = [int(row["running"]) for row in csv.DictReader(f)]
        self.assertEqual(max(running), 2, running)


# Four jobs submitted together, each asking for both CPUs; job 1 scales and runs longest.
BURST = """\
; Version: 2.2
; MaxProcs: 2
; Note: qsubmit integration test: a burst, the longest job first
1 0 -1 3 2 -1 -1 2 -1 -1 1 -1 -1 1 -1 -1 -1 -1
2 0 -1 1 2 -1 -1 2 -1 -1 1 -1 -1 2 -1 -1 -1 -1
3 0 -1 1 2 -1 -1 2 -1 -1 1 -1 -1 2 -1 -1 -1 -1
4 0 -1 1 2 -1 -1 2 -1 -1 1 -1 -1 2 -1 -1 -1 -1
"""


class NoConvoys(QsubmitTestCase):
    def test_pdpa_starts_a_second_job_of_a_burst_while_the_first_runs(self):
        # Under the paper's rule the first job took both CPUs (min(request, free)), scaled well, and the
        # others waited for its end one after another (docs/policies.md, "No convoys"). Now, with three jobs
        # waiting, it holds no more than its equal share of 2 CPUs among the two jobs the CPUs can run.
        # At most one job per CPU (jobs_per_cpu=1, the paper's admission): the default lets a queue longer than the
        # machine share CPUs instead (docs/policies.md, "A queue longer than the machine"), which no convoy survives.
        self.write_workload(BURST, long_iters=120, serial="0.0")
        r, out = self.qsubmit("--policy", "pdpa", "--param", "jobs_per_cpu=1", "--cpus", "0-1", "--quiet")
        self.assertEqual(r.returncode, 0, f"qsubmit failed:\n{r.stdout}\n{r.stderr}")
        jobs = read_jobs(out)
        self.assertEqual(sorted(jobs), [1, 2, 3, 4])
        for job_id, j in jobs.items():
            self.assertEqual(j["exit_status"], 0, f"job {job_id}")
        first_start = min(j["start"] for j in jobs.values())
        longest = max(jobs.values(), key=lambda j: j["execution"])
        second_start = sorted(j["start"] for j in jobs.values())[1]
        self.assertLess(second_start, longest["end"] - 1.0,
                        f"the second job of the burst waited for the first to end: {jobs}")
        self.assertLess(second_start - first_start, longest["execution"] / 2, jobs)
        with open(os.path.join(out, "ml.csv")) as f:
            running = [int(row["running"]) for row in csv.DictReader(f)]
        self.assertEqual(max(running), 2, running)
        with open(os.path.join(out, "decisions.jsonl")) as f:
            reasons = [j.get("reason", "") for line in f for j in json.loads(line).get("jobs", [])]
        self.assertTrue(any("no running job holds more than its equal share" in x or "equal share 1 with" in x
                            for x in reasons), reasons[:20])


# A closed workload (SWF fields 17 and 18): job 2 is submitted 2 trace seconds (1 s at --time-scale 0.5)
# after job 1 ends, job 4 right after job 2 ends; jobs 1 and 3 arrive at once and share the CPUs.
CLOSED_WORKLOAD = """\
; Version: 2.2
; MaxProcs: 2
; Note: qsubmit integration test: a closed workload under gang scheduling
1 0 -1 1 2 -1 -1 2 -1 -1 1 -1 -1 2 -1 -1 -1 -1
2 0 -1 1 2 -1 -1 2 -1 -1 1 -1 -1 2 -1 -1 1 2
3 0 -1 3 2 -1 -1 2 -1 -1 1 -1 -1 1 -1 -1 -1 -1
4 0 -1 1 2 -1 -1 2 -1 -1 1 -1 -1 2 -1 -1 2 0
"""


# Three jobs submitted together, each reading its input for 2 s before its OpenMP runtime starts (so before
# it registers with the RM), then about 0.5 s of work on one CPU.
SLOW_START_CATALOG = """\
apps:
  1:
    name: slowstart
    class: slow-start
    command: "@amdahl --setup-ms 2000 --iterations 10 --work-ms 50"
    team: malleable
"""
SLOW_START = """\
; Version: 2.2
; MaxProcs: 2
; Note: qsubmit integration test: three jobs that take 2 s to reach their first parallel region
1 0 -1 3 2 -1 -1 2 -1 -1 1 -1 -1 1 -1 -1 -1 -1
2 0 -1 3 2 -1 -1 2 -1 -1 1 -1 -1 1 -1 -1 -1 -1
3 0 -1 3 2 -1 -1 2 -1 -1 1 -1 -1 1 -1 -1 -1 -1
"""


class JobsBeingStarted(QsubmitTestCase):
    def test_admission_counts_started_jobs_without_waiting_for_them_to_register(self):
        # qsubmit tells may_start how many of its jobs have started but not registered (`starting`), and the
        # RM counts them as running: Equipartition on 2 CPUs lets a second job in at once, not after the
        # first one's set-up, and no third while both still start.
        with open(self.swf, "w") as f:
            f.write(SLOW_START)
        with open(os.path.join(self.dir, "catalog.yaml"), "w") as f:
            f.write(SLOW_START_CATALOG)
        # One job per CPU (jobs_per_cpu=1): the default would let the third share a CPU while jobs wait.
        r, out = self.qsubmit("--policy", "equip", "--param", "jobs_per_cpu=1", "--cpus", "0-1", "--quiet")
        self.assertEqual(r.returncode, 0, f"qsubmit failed:\n{r.stdout}\n{r.stderr}")
        jobs = read_jobs(out)
        self.assertEqual(sorted(jobs), [1, 2, 3])
        for job_id, j in jobs.items():
            self.assertEqual(j["exit_status"], 0, f"job {job_id}")
        first, second, third = sorted(jobs.values(), key=lambda j: j["start"])
        # The first job cannot register before its 2 s of set-up are over.
        self.assertLess(second["start"] - first["start"], 2.0,
                        f"the second job waited for the first to register: {jobs}")
        self.assertGreaterEqual(third["start"], min(first["end"], second["end"]) - 1e-3,
                                f"a third job started while both CPUs were promised: {jobs}")
        with open(os.path.join(out, "ml.csv")) as f:
            running = [int(row["running"]) for row in csv.DictReader(f)]
        self.assertEqual(max(running), 2, running)


class ClosedWorkload(QsubmitTestCase):
    def test_successors_are_submitted_after_their_predecessor_ends_plus_think_time(self):
        self.write_workload(CLOSED_WORKLOAD, long_iters=60, serial="0.0")
        r, out = self.qsubmit("--policy", "gang", "--cpus", "0-1", "--quiet")
        self.assertEqual(r.returncode, 0, f"qsubmit failed:\n{r.stdout}\n{r.stderr}")
        jobs = read_jobs(out)
        self.assertEqual(sorted(jobs), [1, 2, 3, 4])
        for job_id, j in jobs.items():
            self.assertEqual(j["exit_status"], 0, f"job {job_id}")
            self.assertGreater(int(j["rm_id"]), 0, f"job {job_id} ran without the RM")
            self.assertGreaterEqual(j["start"], j["submit"] - 1e-3, f"job {job_id} started before it arrived")
        # Think time is counted from the predecessor's end as qsubmit saw it (its poll is 50 ms or less).
        self.assertAlmostEqual(jobs[2]["submit"], jobs[1]["end"] + 1.0, delta=0.25, msg=jobs)
        self.assertAlmostEqual(jobs[4]["submit"], jobs[2]["end"], delta=0.25, msg=jobs)
        # Jobs 1 and 3 arrived together and time-shared under gang: each was stopped at least once.
        stopped = {int(jobs[i]["rm_id"]) for i in (1, 3)}
        stops = {}
        with open(os.path.join(out, "decisions.jsonl")) as f:
            for line in f:
                for a in json.loads(line).get("jobs", []):
                    if a.get("id") in stopped and a.get("run") == "stopped":
                        stops[a["id"]] = stops.get(a["id"], 0) + 1
        self.assertEqual(set(stops), stopped, f"jobs stopped by gang: {stops}")


class NativeRun(QsubmitTestCase):
    def test_native_writes_the_same_files(self):
        self.write_workload(WORKLOAD, long_iters=20)
        r_native, native = self.qsubmit("--native", "--quiet")
        jobs = self.assert_consistent(native, r_native)
        for j in jobs.values():
            self.assertEqual(j["mean_cpus"], 2, "native: a job holds its request")
        r_rm, managed = self.qsubmit("--policy", "equip", "--cpus", "0-1", "--quiet")
        self.assert_consistent(managed, r_rm)
        self.assertEqual(file_set(native), file_set(managed))
        # Native programs see OMP_NUM_THREADS = request: amdahl prints its team size.
        with open(os.path.join(native, "jobs/2.out")) as f:
            self.assertIn("team 2", f.read())


    def test_default_out_is_under_the_data_home_not_the_current_directory(self):
        self.write_workload("; Version: 2.2\n; MaxProcs: 2\n2 0 -1 1 1 -1 -1 1 -1 -1 1 -1 -1 2 -1 -1 -1 -1\n",
                            long_iters=1)
        cwd = os.path.join(self.dir, "cwd")
        data = os.path.join(self.dir, "data")
        os.mkdir(cwd)
        env = dict(self.env(), XDG_DATA_HOME=data)
        r = subprocess.run([QSUBMIT, self.swf, "--native", "--time-scale", "0.5"], cwd=cwd, env=env,
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(os.listdir(cwd), [], "qsubmit wrote into the current directory")
        runs = os.listdir(os.path.join(data, "cosched", "runs"))
        self.assertEqual(len(runs), 1, runs)
        self.assertTrue(runs[0].startswith("qsubmit-native-"), runs)
        out = os.path.join(data, "cosched", "runs", runs[0])
        self.assertIn(f"results: {out}", r.stdout)
        jobs = read_jobs(out)
        self.assertEqual(jobs[2]["rm_id"], -1, "a native job has no RM id")
        self.assertGreater(jobs[2]["pid"], 0)


class BadInput(QsubmitTestCase):
    def test_malformed_line_refuses_the_run(self):
        marker = os.path.join(self.dir, "started")
        with open(os.path.join(self.dir, "catalog.yaml"), "w") as f:
            f.write(f'apps:\n  1:\n    name: touch\n    command: ["/usr/bin/touch", "{marker}"]\n')
        with open(self.swf, "w") as f:
            f.write("1 0 -1 1 1 -1 -1 1 -1 -1 1 -1 -1 1 -1 -1 -1 -1\n"
                    "2 1 -1 1 1 -1 -1 two -1 -1 1 -1 -1 1 -1 -1 -1 -1\n")
        r, out = self.qsubmit("--policy", "pdpa", "--cpus", "0-1")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("w.swf:2:", r.stderr)
        self.assertIn("field 8", r.stderr)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        self.assertFalse(os.path.exists(marker), "a job started")
        self.assertFalse(os.path.exists(out), "an output directory was created")
        self.assertEqual(os.listdir(self.tmp), [], "an RM was started")

    def test_unknown_policy_is_bad_input(self):
        r, out = self.qsubmit("--policy", "no-such-policy", "--cpus", "0-1")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("no-such-policy", r.stderr)
        self.assertFalse(os.path.exists(out))


class Interrupt(QsubmitTestCase):
    def test_ctrl_c_stops_jobs_and_the_private_rm(self):
        self.write_workload(WORKLOAD, long_iters=400, serial="0.0")
        out = os.path.join(self.dir, "out")
        p = self.start("--out", out, "--policy", "equip", "--cpus", "0-1", "--quiet")
        wait_for(lambda: os.path.exists(os.path.join(out, "jobs/1.out")), timeout=10, what="job 1 to start")
        time.sleep(0.5)
        # Everything qsubmit started (RM, jobs) is in its session: it must all be gone afterwards.
        session = session_members(p.pid)
        self.assertGreaterEqual(len(session), 3, "qsubmit, the RM and job 1")
        os.kill(p.pid, signal.SIGINT)
        _, err = p.communicate(timeout=30)
        self.assertEqual(p.returncode, 128 + signal.SIGINT, err)
        for pid in session:
            self.assertNotEqual(process_state(pid), "T", f"pid {pid} left stopped")
        wait_for(lambda: not session_members(p.pid), timeout=10, what="every process of the run to exit")
        jobs = read_jobs(out)
        self.assertNotEqual(jobs[1]["exit_status"], 0, "job 1 was killed")
        self.assertEqual(jobs[4]["start"], -1, "job 4 never started")
        self.assertEqual(os.listdir(self.tmp), [], "the private RM's socket directory was left behind")


class ExistingRm(QsubmitTestCase):
    def test_socket_uses_a_running_rm(self):
        self.write_workload(WORKLOAD.replace("; MaxProcs: 2", "; MaxProcs: 4"), long_iters=10)
        rm = ResourceManager(cpus="0-1", policy="equip")
        try:
            r, out = self.qsubmit("--socket", rm.socket, "--ml", "2", "--quiet")
            self.assertEqual(r.returncode, 0, r.stderr)
            jobs = read_jobs(out)
            self.assertEqual({j["requested"] for j in jobs.values()}, {1}, "requests scaled from 4 CPUs to 2")
            self.assertTrue(os.path.exists(os.path.join(out, "decisions.jsonl")))
            self.assertEqual(rm.status()["jobs"], [], "every job left the RM")
            # jobs.csv joins the RM's own decision log by (RM id, pid).
            logged = {(j["id"], j["pid"]) for e in rm.decisions() for j in e.get("jobs", [])}
            for job_id, j in jobs.items():
                self.assertIn((int(j["rm_id"]), int(j["pid"])), logged, f"job {job_id}")
        finally:
            rm.stop()
            rm.remove_files()


class ReleasedJobs(QsubmitTestCase):
    def test_a_released_job_keeps_its_successor_waiting_until_it_exits(self):
        # `cosched-ctl release` takes a job off the RM; its process runs on natively, its team on both CPUs.
        # The RM counts it as a job being started (one CPU) until it exits (docs/usage.md), so equip, one job
        # per CPU, does not admit job 3 beside the two long jobs. Before, the release made room at once: job 3
        # started and 3 jobs ran on 2 CPUs.
        with open(self.swf, "w") as f:
            f.write("; MaxProcs: 2\n"
                    "1 0 -1 3 2 -1 -1 2 -1 -1 1 -1 -1 1 -1 -1 -1 -1\n"
                    "2 0 -1 3 2 -1 -1 2 -1 -1 1 -1 -1 1 -1 -1 -1 -1\n"
                    "3 0 -1 1 2 -1 -1 2 -1 -1 1 -1 -1 2 -1 -1 -1 -1\n")
        with open(os.path.join(self.dir, "catalog.yaml"), "w") as f:
            f.write(CATALOG.format(long_iters=40, serial="0.0"))
        rm = ResourceManager("--param", "jobs_per_cpu=1", cpus="0-1", policy="equip")
        try:
            out = os.path.join(self.dir, "out")
            p = self.start("--out", out, "--socket", rm.socket, "--quiet")
            two = wait_for(lambda: (lambda js: js if len(js) == 2 else None)(rm.status()["jobs"]), timeout=30,
                           what="the two long jobs registered")
            released = two[0]
            rm.ctl("release", str(released["id"]))
            self.assertFalse(rm.status()["may_start"], "a CPU was offered while the released job still runs")
            _, stderr = p.communicate(timeout=120)
            self.assertEqual(p.returncode, 0, stderr)
            jobs = read_jobs(out)
            # The released job holds one CPU, the other long job the other: job 3 starts once either ends.
            self.assertGreaterEqual(jobs[3]["start"], min(jobs[1]["end"], jobs[2]["end"]) - 1e-3,
                                    f"job 3 started while the released job and the other still ran: {jobs}")
            with open(os.path.join(out, "ml.csv")) as f:
                running = [int(row["running"]) for row in csv.DictReader(f)]
            self.assertEqual(max(running), 2, running)
        finally:
            rm.stop()
            rm.remove_files()


class UnmanagedJobs(QsubmitTestCase):
    def test_jobs_that_ran_without_the_rm_are_counted(self):
        # Jobs that fell out of the RM's control (a registration lost under load) used to go unnoticed.
        # Job 2 runs its program with another socket, so it starts natively, as a lost registration does.
        with open(os.path.join(self.dir, "catalog.yaml"), "a") as f:
            f.write('  3:\n    name: stray\n    command: "env COSCHED_SOCKET=/nonexistent/rm.sock @amdahl '
                    '--serial-fraction 0.0 --iterations 5 --work-ms 20"\n')
        with open(self.swf, "w") as f:
            f.write("; MaxProcs: 2\n"
                    "1 0 -1 1 2 -1 -1 2 -1 -1 1 -1 -1 2 -1 -1 -1 -1\n"
                    "2 0 -1 1 2 -1 -1 2 -1 -1 1 -1 -1 3 -1 -1 -1 -1\n")
        r, out = self.qsubmit("--policy", "equip", "--cpus", "0-1", "--quiet")
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(out, "summary.json")) as f:
            self.assertEqual(json.load(f)["unmanaged_jobs"], 1)
        self.assertIn("1 job(s) ran unmanaged", r.stderr)
        self.assertTrue(r.stderr.rstrip().endswith(": 2"), r.stderr)


if __name__ == "__main__":
    unittest.main()
