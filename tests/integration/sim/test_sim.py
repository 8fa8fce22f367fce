#!/usr/bin/env python3
"""cosched-sim end to end (docs/simulator.md): runs the program on small generated workloads and reads the
files it writes (qsubmit's result format, docs/results.md).

Environment: COSCHED_SIM, COSCHED_SWFGEN (the programs), COSCHED_SOURCE_DIR (for the PDPA model catalog).
"""
import csv
import gzip
import json
import shutil
import os
import subprocess
import tempfile
import unittest

SIM = os.environ.get("COSCHED_SIM", "cosched-sim")
SWFGEN = os.environ.get("COSCHED_SWFGEN", "cosched-swfgen")
SOURCE = os.environ.get("COSCHED_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", "..", ".."))
MODELS = os.path.join(SOURCE, "examples", "workloads", "pdpa-models.yaml")


def run(*args, check=True):
    p = subprocess.run(list(args), capture_output=True, text=True, timeout=120)
    if check and p.returncode != 0:
        raise AssertionError(f"{' '.join(args)} exited {p.returncode}:\n{p.stdout}\n{p.stderr}")
    return p


def read_jobs(out_dir):
    with open(os.path.join(out_dir, "jobs.csv"), newline="") as f:
        return list(csv.DictReader(f))


def read_summary(out_dir):
    with open(os.path.join(out_dir, "summary.json")) as f:
        return json.load(f)


def cpu_segments(out_dir):
    """Each job's allocations in time order (allocation.csv: one row per CPU segment): [(t0, t1, cpus)]."""
    segs = {}
    with open(os.path.join(out_dir, "allocation.csv"), newline="") as f:
        for row in csv.DictReader(f):
            segs.setdefault(row["job"], []).append((float(row["t0"]), float(row["t1"]), int(row["cpus"])))
    return {job: sorted(s) for job, s in segs.items()}


class Sim(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="cosched-sim-test-")
        cls.dir = cls.tmp.name
        # PDPA §5.3's workload 3 (bt.A scales, apsi does not) at 100 % load: 60 CPUs, requests 30 and 2.
        cls.w3 = os.path.join(cls.dir, "w3.swf")
        run(SWFGEN, "--preset", "pdpa-w3", "--load", "1.0", "--seed", "3", "-o", cls.w3)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def simulate(self, name, *extra):
        out = os.path.join(self.dir, name)
        run(SIM, self.w3, "--cpus", "60", "--models", MODELS, "--out", out, "--quiet", *extra)
        return out

    def test_same_seed_same_bytes(self):
        noisy = ("--policy", "pdpa", "--param", "min_ml=4", "--noise", "0.05", "--realloc-cost", "0.05")
        a = self.simulate("det-a", *noisy, "--seed", "7")
        b = self.simulate("det-b", *noisy, "--seed", "7")
        c = self.simulate("det-c", *noisy, "--seed", "8")
        for name in ("jobs.csv", "allocation.csv", "ml.csv"):
            with open(os.path.join(a, name), "rb") as fa, open(os.path.join(b, name), "rb") as fb:
                self.assertEqual(fa.read(), fb.read(), name)
        with open(os.path.join(a, "allocation.csv"), "rb") as fa, open(os.path.join(c, "allocation.csv"), "rb") as fc:
            self.assertNotEqual(fa.read(), fc.read(), "another seed draws other measurement noise")

    def test_writes_qsubmits_files(self):
        out = self.simulate("files", "--policy", "equip", "--ml", "4", "--decisions")
        for name in ("jobs.csv", "summary.json", "ml.csv", "allocation.csv", "trace.prv", "trace.pcf",
                     "trace.row", "trace.json", "decisions.jsonl"):
            self.assertTrue(os.path.getsize(os.path.join(out, name)) > 0, name)
        s = read_summary(out)
        self.assertEqual(s["mode"], "simulated")
        self.assertEqual(s["policy"], "equip")
        self.assertEqual(s["machine_cpus"], 60)
        self.assertEqual(s["params"]["sim"]["ml"], 4)
        jobs = read_jobs(out)
        self.assertTrue(all(float(j["end"]) >= float(j["start"]) >= float(j["submit"]) for j in jobs))
        self.assertEqual({j["app"] for j in jobs}, {"bt.A", "apsi"})
        with open(os.path.join(out, "decisions.jsonl")) as f:
            first = json.loads(f.readline())
        self.assertEqual(first["policy"], "equip")

    def test_auto_traces_stop_at_a_million_pieces_and_keep_every_table(self):
        # Two 64-CPU jobs under gang on 64 CPUs swap rows every 100 ms quantum: every quantum is a new
        # 64-CPU segment, so the traces would draw segments x 64 pieces. 1,000 s each: 20,000 segments,
        # 1.28 M pieces (over the bound of 1,000,000: no traces); 50 s each: 64,000 pieces (traces; a short
        # run, since drawing them is most of this test's time under ASan).
        for seconds, traced in ((50, True), (1000, False)):
            swf = os.path.join(self.dir, f"gang-{seconds}.swf")
            with open(swf, "w") as f:
                for job in (1, 2):
                    f.write(f"{job} 0 -1 {seconds} 64 -1 -1 64 {seconds} -1 1 1 1 -1 -1 -1 -1 -1\n")
            out = os.path.join(self.dir, f"gang-{seconds}")
            p = run(SIM, swf, "--cpus", "64", "--policy", "gang", "-o", out)
            with open(os.path.join(out, "allocation.csv"), newline="") as f:
                rows = list(csv.DictReader(f))
            pieces = sum(len(r["cpu_list"].split()) for r in rows)
            self.assertEqual(pieces, 64 * len(rows))
            self.assertEqual(pieces > 1_000_000, not traced, pieces)
            self.assertEqual(os.path.exists(os.path.join(out, "trace.prv")), traced)
            self.assertEqual(os.path.exists(os.path.join(out, "trace.json")), traced)
            self.assertEqual(f"{pieces} CPU pieces to draw" in p.stderr, not traced, p.stderr)
            self.assertEqual(len(read_jobs(out)), 2)
            self.assertEqual(read_summary(out)["policy"], "gang")

    def test_allocation_off_writes_the_same_tables_and_removes_an_earlier_allocation_csv(self):
        # --allocation off (what auto does past its 2 GiB of segments): jobs.csv and summary.json from the
        # jobs' totals, the same figures; an allocation.csv and traces left in the directory by an earlier run
        # are removed, not kept beside the new tables.
        swf = os.path.join(self.dir, "alloc-off.swf")
        with open(swf, "w") as f:
            for job in (1, 2):
                f.write(f"{job} 0 -1 20 64 -1 -1 64 20 -1 1 1 1 -1 -1 -1 -1 -1\n")
        out = os.path.join(self.dir, "alloc-off")
        run(SIM, swf, "--cpus", "64", "--policy", "gang", "-o", out, "-q")
        self.assertTrue(os.path.exists(os.path.join(out, "allocation.csv")))
        self.assertTrue(os.path.exists(os.path.join(out, "trace.prv")))
        kept = read_jobs(out)
        self.assertTrue(read_summary(out)["params"]["sim"]["allocation_csv"])
        run(SIM, swf, "--cpus", "64", "--policy", "gang", "-o", out, "-q", "--allocation", "off")
        for name in ("allocation.csv", "trace.prv", "trace.json"):
            self.assertFalse(os.path.exists(os.path.join(out, name)), name)
        self.assertFalse(read_summary(out)["params"]["sim"]["allocation_csv"])
        totals = read_jobs(out)
        self.assertEqual(len(totals), 2)
        for a, b in zip(kept, totals):
            for column in ("start", "end", "mean_cpus"):
                self.assertAlmostEqual(float(a[column]), float(b[column]), places=6, msg=column)
        # Each job held 64 CPUs half of the time.
        self.assertAlmostEqual(float(totals[0]["mean_cpus"]), 32, delta=1)

    def test_skipping_steady_rotations_gives_the_run_of_every_quantum(self):
        # docs/simulator.md, "Steady rotations": on an 80-job Lublin log the repeated turns of gang (rows) and
        # ssw-dss (the longest turns, a quantum per job) are skipped (the run says how many quanta), and every
        # job starts and ends as when every quantum is simulated (--no-fast-forward), to float rounding.
        # 80 jobs: both policies skip tens of thousands of quanta, and every quantum's run stays short (ASan).
        swf = os.path.join(self.dir, "lublin80.swf")
        run(SWFGEN, "--jobs", "80", "--max-procs", "256", "--model", "lublin", "--seed", "1", "-o", swf)
        for policy in ("gang", "ssw-dss"):
            with self.subTest(policy=policy):
                fast, every = (os.path.join(self.dir, f"rot-{policy}-{k}") for k in ("fast", "every"))
                p = run(SIM, swf, "--cpus", "256", "--policy", policy, "-o", fast, "--allocation", "off")
                skipped = [line for line in p.stdout.splitlines() if "quanta skipped" in line]
                self.assertTrue(skipped, p.stdout)
                self.assertGreater(int(skipped[0].split(" quanta skipped")[0].split()[-1]), 10000, skipped[0])
                run(SIM, swf, "--cpus", "256", "--policy", policy, "-o", every, "--allocation", "off", "-q",
                    "--no-fast-forward")
                a = read_jobs(fast)
                self.assertEqual(len(a), 80)
                self.assert_same_runs(a, read_jobs(every))

    def test_identical_jobs_of_a_closed_workload_end_together_with_the_skip_and_without(self):
        # The DSS reproduction's swim at M=4 (scripts/reproduce-dss): 16 identical jobs, each followed by the
        # next when it ends. Jobs of a window end at one instant off the tick grid; before completions were
        # put on a microsecond grid (docs/simulator.md, "Quantum ticks") their ends lay a float rounding apart,
        # in an order that depended on how their work was added up, and under ssw-dss the skip's run and
        # every quantum's run decided differently between them (a job's end 0.7 s apart).
        swf = os.path.join(self.dir, "swim-M4.swf")
        run(SWFGEN, "--closed", "16", "--apps", "2:1:16:5.02", "--max-procs", "64", "--duration", "50.2", "-o", swf)
        models = os.path.join(SOURCE, "examples", "workloads", "dss-models.yaml")
        for policy in ("sw-dss", "ssw-dss"):
            with self.subTest(policy=policy):
                fast, every = (os.path.join(self.dir, f"closed-{policy}-{k}") for k in ("fast", "every"))
                for out, extra in ((fast, ()), (every, ("--no-fast-forward",))):
                    run(SIM, swf, "--cpus", "64", "--models", models, "--policy", policy, "-o", out, "-q",
                        "--traces", "off", *extra)
                a = read_jobs(fast)
                self.assertGreater(len(a), 16)
                self.assert_same_runs(a, read_jobs(every))

    def assert_same_runs(self, a, b):
        # The same jobs, each starting and ending at the same time with the same mean CPUs, to float rounding.
        self.assertEqual([r["job"] for r in a], [r["job"] for r in b])
        for x, y in zip(a, b):
            for column in ("start", "end", "mean_cpus"):
                self.assertAlmostEqual(float(x[column]), float(y[column]), delta=1e-6, msg=f"job {x['job']} {column}")

    def test_pdpa_gives_flat_jobs_one_cpu_and_shorter_responses(self):
        # §5.3: PDPA shrinks apsi (no speedup) to one CPU and, coordinating with the queue, starts jobs that
        # Equipartition's fixed ML of 4 keeps waiting: much lower response times.
        equip = self.simulate("equip", "--policy", "equip", "--ml", "4")
        pdpa = self.simulate("pdpa", "--policy", "pdpa", "--param", "min_ml=4")
        apsi = [j["job"] for j in read_jobs(pdpa) if j["app"] == "apsi"]
        self.assertTrue(apsi)
        # Each apsi steps down towards one CPU while another job can use what it frees; CPUs nobody else can
        # use (every other job at its request, none queued) stay with it as a loan (work conservation), so
        # late in the trace, with fewer jobs, the walk stops at 2.
        segs = cpu_segments(pdpa)
        least = {j: min(c for _, _, c in segs[j]) for j in apsi if j in segs}
        self.assertTrue(least and all(c <= 2 for c in least.values()), least)
        self.assertIn(1, least.values(), least)
        e, p = read_summary(equip), read_summary(pdpa)
        self.assertLess(p["overall"]["mean_response"], 0.5 * e["overall"]["mean_response"])
        self.assertGreater(p["overall"]["max_ml"], 4)

    def test_compressed_archive_files_read_the_same(self):
        # Parallel Workloads Archive logs come as .swf.gz: the content decides, not the name.
        gz = os.path.join(self.dir, "w3.swf.gz")
        with open(self.w3, "rb") as src, gzip.open(gz, "wb") as dst:
            shutil.copyfileobj(src, dst)
        plain = self.simulate("plain", "--policy", "equip", "--ml", "4")
        out = os.path.join(self.dir, "gz")
        run(SIM, gz, "--cpus", "60", "--models", MODELS, "--out", out, "--quiet", "--policy", "equip", "--ml", "4")
        with open(os.path.join(plain, "jobs.csv"), "rb") as a, open(os.path.join(out, "jobs.csv"), "rb") as b:
            self.assertEqual(a.read(), b.read())

    def test_bad_input_is_exit_2_with_a_reason(self):
        p = run(SIM, self.w3, "--cpus", "60", "--policy", "no-such-policy", "--out", self.dir, check=False)
        self.assertEqual(p.returncode, 2)
        self.assertIn("no-such-policy", p.stderr)
        p = run(SIM, self.w3, "--cpus", "60", "--policy", "pdpa", "--param", "target_eff=2", check=False)
        self.assertEqual(p.returncode, 2)
        self.assertIn("target_eff", p.stderr)
        p = run(SIM, os.path.join(self.dir, "missing.swf"), "--cpus", "4", "--policy", "equip", check=False)
        self.assertEqual(p.returncode, 2)
        self.assertIn("missing.swf", p.stderr)
        self.assertEqual(run(SIM, "--help").returncode, 0)
        self.assertIn("pdpa", run(SIM, "--list-policies").stdout)



class Burst(unittest.TestCase):
    """The burst of issue #10 (docs/reproductions.md, "A burst on 16 CPUs"): four jobs asking for all 16 CPUs
    at once, ep.B one long region. PDPA as it was starves ep.B on the one CPU it was admitted with; today's
    PDPA does not, and its mean response is within 2 % of Equipartition's (1 % before the waiting-time estimate;
    docs/reproductions.md names the change): jobs started together get equal
    shares, and each then moves by PDPA's steps. (The real 16-CPU runs in docs/performance.md gave 0.97x
    and 1.01x.) Deterministic (no noise seeds differ between variants), so the figures are compared exactly
    as the simulator computes them."""

    def mean_response(self, *extra):
        with tempfile.TemporaryDirectory(prefix="cosched-sim-burst-") as out:
            run(SIM, os.path.join(SOURCE, "examples/workloads/burst16.swf"), "--cpus", "16", "--models",
                os.path.join(SOURCE, "examples/workloads/burst16-models.yaml"), "--ml", "4", "--startup-noise", "0.3",
                "--out", out, "--quiet", *extra)
            jobs = {row["job"]: float(row["response"]) for row in read_jobs(out)}
        return sum(jobs.values()) / len(jobs), jobs

    def test_old_pdpa_starves_the_non_iterative_job_and_today_s_does_not(self):
        equip, equip_jobs = self.mean_response("--policy", "equip")
        today, today_jobs = self.mean_response("--policy", "pdpa")
        # As it was: no waiting-time efficiency either (which measures ep.B's one region at once).
        old, old_jobs = self.mean_response("--policy", "pdpa", "--param", "strict=1", "--param",
                                           "unmeasured_after_s=1000000", "--sa-baseline-cpus", "1",
                                           "--no-waiting-time")
        self.assertGreater(old_jobs["4"], 3 * today_jobs["4"], "ep.B should starve only under the old rules")
        self.assertGreater(old, 1.5 * equip)
        self.assertLessEqual(today, 1.02 * equip, f"PDPA {today:.1f} s vs Equipartition {equip:.1f} s")
        for job, response in today_jobs.items():  # no job pays for its place in the arrival order
            self.assertLess(response, 1.1 * equip_jobs[job], f"job {job}: PDPA {today_jobs}, Equipartition {equip_jobs}")

if __name__ == "__main__":
    unittest.main()
