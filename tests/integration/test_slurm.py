#!/usr/bin/python3
"""cosched under Slurm (docs/slurm.md): a private one-node cluster (slurm_cluster.py: munged, slurmctld,
slurmd on private ports and a private munge socket, task/none + proctrack/linuxproc, 2 CPUs,
OverSubscribe=FORCE:4) with the SPANK plugin, and a cosched-rm per test. One cluster for the whole file: it
starts in a few seconds, and the tests run one after the other. If Slurm cannot start, every test fails."""
import csv
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import unittest

from harness import BIN, BUILD, CTL, RUN, RmTestCase, cpus_allowed, process_state, program, wait_for
from slurm_cluster import NODE, SlurmCluster

PLUGIN = os.path.join(BUILD, "slurm/spank_cosched.so")
PROLOG = os.path.join(os.path.dirname(__file__), "../../slurm/cosched-slurm-prolog")
REASON = "cosched: multiprogramming level reached"
QSUBMIT = os.path.join(BUILD, "qs/qsubmit/qsubmit")
WORKLOADS = os.path.join(os.path.dirname(__file__), "../../examples/workloads")
LAUNCH_VARS = ("COSCHED_SOCKET", "COSCHED_REQUEST", "COSCHED_TEAM", "OMP_TOOL_LIBRARIES", "OMP_TOOL",
               "KMP_AFFINITY", "LD_PRELOAD")


class Site:
    """The file's one cluster (setUpModule), and where its tests write."""
    cluster = None
    tmp = None
    prolog_marker = None
    prolog_conf = None


def setUpModule():
    if not os.path.exists(PLUGIN):
        raise AssertionError(f"{PLUGIN} is missing: the build should have produced it (libslurm-dev)")
    Site.tmp = tempfile.mkdtemp(prefix="cosched-slurm-test-")
    os.chmod(Site.tmp, 0o755)
    # Disabled unless a test creates the marker: only the prolog test wants an RM started for it.
    Site.prolog_marker = os.path.join(Site.tmp, "prolog.enabled")
    Site.prolog_conf = os.path.join(Site.tmp, "prolog.conf")
    wrapper = os.path.join(Site.tmp, "prolog")
    with open(wrapper, "w") as f:
        f.write(f"#!/bin/sh\n[ -e {Site.prolog_marker} ] || exit 0\n"
                f"COSCHED_PROLOG_CONF={Site.prolog_conf} exec {os.path.abspath(PROLOG)}\n")
    os.chmod(wrapper, 0o755)
    Site.cluster = SlurmCluster(cpus=2, plugin=PLUGIN, prolog=wrapper)
    # cosched-rm and every Slurm command of this process use the private cluster.
    os.environ["SLURM_CONF"] = Site.cluster.conf


def tearDownModule():
    if Site.cluster is not None:
        Site.cluster.stop()
    shutil.rmtree(Site.tmp, ignore_errors=True)


class SlurmTestCase(RmTestCase):
    @property
    def cluster(self):
        return Site.cluster

    @property
    def tmp(self):
        return Site.tmp

    @property
    def prolog_marker(self):
        return Site.prolog_marker

    @property
    def prolog_conf(self):
        return Site.prolog_conf

    def setUp(self):
        super().setUp()
        self.out = tempfile.mkdtemp(prefix="out-", dir=self.tmp)
        os.chmod(self.out, 0o755)

    def tearDown(self):
        self.cluster.cancel_all()
        super().tearDown()
        self.assertNotIn("DRAIN", self.cluster.node()["State"], "the node was left drained")

    def use_rm(self, rm, default="off"):
        self.cluster_plugin(f"socket={rm.socket} default={default}")

    def cluster_plugin(self, args):
        # plugstack.conf is read at every sbatch and every job launch: a test may point it at its own RM.
        with open(os.path.join(self.cluster.dir, "plugstack.conf"), "w") as f:
            f.write(f"required {PLUGIN} {args}\n")

    def submit(self, name, command, *options):
        out = os.path.join(self.out, f"{name}.out")
        err = os.path.join(self.out, f"{name}.err")
        job = self.cluster.sbatch(["-J", name, "-o", out, "-e", err] + list(options) + ["--wrap", command])
        return job, out, err

    @staticmethod
    def read(path):
        try:
            with open(path) as f:
                return f.read()
        except FileNotFoundError:
            return ""

    def slurm_jobs(self, rm):
        """{slurm job id: status entry} of the jobs the RM manages."""
        return {j["slurm_job_id"]: j for j in rm.status()["jobs"] if j["slurm_job_id"] is not None}

    def rendezvous(self, mine, other, timeout_s=120):
        """Shell that marks this job started and waits (at most timeout_s) until the other one has started."""
        ready = lambda name: os.path.join(self.out, f"{name}.started")
        return (f"touch {ready(mine)}; i=0; while [ ! -e {ready(other)} ] && [ $i -lt {timeout_s * 10} ]; do "
                f"sleep 0.1; i=$((i + 1)); done; ")

    def probe(self, iterations=30, work_ms=100):
        """cpu_probe, which ends early (still checking its result) once the test calls stop_probes()."""
        return (f"{program('cpu_probe-clang')} --iterations {iterations} --work-ms {work_ms} "
                f"--stop-file {os.path.join(self.out, 'stop')}")

    def stop_probes(self):
        """The probes end after their current iteration: a test that saw what it needs ends their long runs
        (each run's serial check is as long again) rather than wait for them."""
        open(os.path.join(self.out, "stop"), "w").close()


def probe_lines(text):
    """[(team, [cpus])] from cpu_probe's "iter N team T cpus C..." lines."""
    out = []
    for line in text.splitlines():
        m = re.match(r"iter \d+ team (\d+) cpus((?: \d+)*)$", line)
        if m:
            out.append((int(m.group(1)), [int(c) for c in m.group(2).split()]))
    return out


def env_lines(text):
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line and line.split("=", 1)[0] in
                LAUNCH_VARS + ("COSCHED_JOB", "COSCHED_RANK"))


class CoschedJobs(SlurmTestCase):
    def test_two_cosched_jobs_share_the_node_each_on_its_own_cpu(self):
        rm = self.start_rm(policy="equip")
        self.use_rm(rm)
        show_env = "env | grep -E '^(" + "|".join(LAUNCH_VARS + ("COSCHED_JOB", "COSCHED_RANK")) + ")='; "
        # The probes start together: Slurm may start b many seconds after a on a loaded machine, and a alone
        # would meanwhile run through most of its iterations (a loaded repeat failed so: fewer than three
        # were left for the wait below). 200 iterations (20 s at one CPU each): with 30, a run of the suite
        # beside a build timed out in that wait, and with 100 the ASan half of CI once did (2026-12-03), the
        # ASan unit tests running beside it.
        a, a_out, a_err = self.submit("a", show_env + self.rendezvous("a", "b") + self.probe(iterations=200),
                                  "--cosched=malleable", "-c2")
        b, b_out, b_err = self.submit("b", self.rendezvous("b", "a") + self.probe(iterations=200),
                                  "--cosched=malleable", "-c2")
        # Both run on the node at once (OverSubscribe=FORCE), both registered, keyed by their Slurm job ids,
        # asking for the 2 CPUs Slurm allocated, each given one CPU of its own.
        wait_for(lambda: set(self.slurm_jobs(rm)) == {a, b}, timeout=60, what="both Slurm jobs in status")
        jobs = wait_for(lambda: (lambda js: js if all(j["allocated"] == 1 for j in js.values()) else None)(
            self.slurm_jobs(rm)), timeout=20, what="both jobs at 1 CPU")
        self.assertEqual({j["requested"] for j in jobs.values()}, {2})
        self.assertEqual(sorted(c for j in jobs.values() for c in j["cpus"]), [0, 1])
        self.assertEqual(self.cluster.state(a), "RUNNING")
        self.assertEqual(self.cluster.state(b), "RUNNING")
        # The status table shows the Slurm job ids by default on a Slurm node.
        table = subprocess.run([CTL, "--socket", rm.socket, "status"], capture_output=True, text=True,
                               check=True).stdout.splitlines()
        at = next(i for i, line in enumerate(table) if line.startswith("JOB"))
        column = table[at].split().index("SLURM_JOB")
        shown = {int(line.split()[column]) for line in table[at + 1:] if line.split()[:1] != []}
        # On a failure, say what became of each job (a job that left would have its reason in its files).
        self.assertEqual(shown, {a, b}, "\n".join(table) + "".join(
            f"\nSlurm job {job}: {self.cluster.state(job)}, restarts {self.cluster.job(job).get('Restarts')}; "
            f"output: {self.read(out)[-800:]!r}; errors: {self.read(err)[-800:]!r}"
            for job, out, err in ((a, a_out, a_err), (b, b_out, b_err))) + "\n" + self.cluster.logs())
        # Inside the programs: one thread each, on the CPU status names (from the second iteration after the
        # grant: the one under way when it came may have begun with the old team).
        seen = {job: len(probe_lines(self.read(out))) for job, out in ((a, a_out), (b, b_out))}
        wait_for(lambda: all(len(probe_lines(self.read(out))) >= seen[job] + 3 for job, out in ((a, a_out), (b, b_out))),
                 timeout=30, what=f"three more iterations of each job (iterations seen when both held 1 CPU: {seen})")
        for job, out in ((a, a_out), (b, b_out)):
            now = self.slurm_jobs(rm).get(job)
            if now is None or now["allocated"] != 1:
                continue  # the other one ended meanwhile; what it saw is checked below
            team, cpus = probe_lines(self.read(out))[-1]
            self.assertEqual((team, cpus), (1, now["cpus"]), f"job {job} saw {team} thread(s) on {cpus}")
            self.assertEqual(set(cpus_allowed(now["pid"]).values()), {frozenset(now["cpus"])})
        both = [probe_lines(self.read(out))[seen[job] + 1:seen[job] + 3] for job, out in ((a, a_out), (b, b_out))]
        self.assertTrue(all(t == 1 for lines in both for t, _ in lines), both)
        self.assertNotEqual(both[0][0][1], both[1][0][1], f"both jobs ran on {both[0][0][1]}")
        self.stop_probes()
        self.cluster.wait_state(a, ("COMPLETED",), timeout=120)
        self.cluster.wait_state(b, ("COMPLETED",), timeout=120)
        for out in (a_out, b_out):
            self.assertIn("verified", self.read(out))
        # The task got what cosched-run would set for the same program (launch_env, shared code), plus the
        # job's identity.
        got = env_lines(self.read(a_out))
        self.assertEqual(got["COSCHED_JOB"], f"slurm:{a}")
        # The batch step preloads libomp whatever its script runs, as cosched-run does by default.
        r = subprocess.run([RUN, "--socket", rm.socket, "--request", "2", "--malleable", "-v", "--",
                            "/bin/true"],
                           capture_output=True, text=True, env={k: v for k, v in os.environ.items()
                                                                if k not in ("LD_PRELOAD",) + LAUNCH_VARS})
        wanted = dict(m.groups() for m in re.finditer(r"^cosched-run: (\w+)=(.*)$", r.stderr, re.M))
        for var in LAUNCH_VARS:
            if var in wanted:
                self.assertEqual(got.get(var), wanted[var], var)
        # The RM's records carry the Slurm job id.
        history = subprocess.run([CTL, "--socket", rm.socket, "history", "--json", "--slurm-job", str(a)],
                                 capture_output=True, text=True, check=True).stdout.splitlines()
        self.assertTrue(history, "no accounting record for the Slurm job")
        self.assertTrue(any(d["jobs"] and any(j.get("slurm_job_id") == b for j in d["jobs"]) for d in rm.decisions()))

    def test_a_gcc_program_run_by_the_batch_script_is_managed_and_confined(self):
        # A gcc (libgomp) program started directly by the batch script, with plain --cosched: the batch step
        # preloads libomp, so the program registers under the Slurm job and is confined to its share while
        # another job runs. The script's other processes (a shell, python3 without OpenMP) are untouched.
        rm = self.start_rm(policy="equip")
        self.use_rm(rm)
        gcc_probe = program("cpu_probe-gcc")
        # The two meet before their probes start, as in the case above (a loaded run started them far apart).
        script = (f"/usr/bin/python3 -c 'print(6 * 7)'; " + self.rendezvous("gcc", "other") +
                  f"{gcc_probe} --iterations 120 --work-ms 100 --stop-file {os.path.join(self.out, 'stop')} && "
                  f"{gcc_probe} --iterations 3 --work-ms 50")
        a, a_out, a_err = self.submit("gcc", script, "--cosched", "-c2")
        b, _, _ = self.submit("other", self.rendezvous("other", "gcc") + self.probe(iterations=120), "--cosched",
                              "-c2")
        wait_for(lambda: set(self.slurm_jobs(rm)) == {a, b} or self.cluster.state(a) in ("COMPLETED", "FAILED"),
                 timeout=60, what="both Slurm jobs in status")
        self.assertEqual(set(self.slurm_jobs(rm)), {a, b}, f"job {a} is {self.cluster.state(a)}; status: "
                         f"{rm.status()['jobs']}\nits output:\n{self.read(a_out)}{self.read(a_err)}")
        jobs = wait_for(lambda: (lambda js: js if all(j["allocated"] == 1 for j in js.values()) else None)(
            self.slurm_jobs(rm)), timeout=20, what="both jobs at 1 CPU")
        gcc = jobs[a]
        self.assertEqual(gcc["slurm_job_id"], a)
        self.assertIn("cpu_probe-gcc", gcc["command"])
        self.assertNotEqual(gcc["cpus"], jobs[b]["cpus"])
        # Confined: every thread of the gcc program may run only on its CPU (the RM applies the grant right
        # after publishing it), and its regions' threads ran there (from the second iteration after the
        # grant, as above; plain --cosched keeps the team the program saw at its first omp_get_max_threads,
        # so the team may stay 2 on the one CPU).
        wait_for(lambda: set(cpus_allowed(gcc["pid"]).values()) == {frozenset(gcc["cpus"])}, timeout=5,
                 what=f"the gcc program's threads confined to CPU {gcc['cpus']} ({cpus_allowed(gcc['pid'])})")
        seen = len(probe_lines(self.read(a_out)))
        wait_for(lambda: len(probe_lines(self.read(a_out))) >= seen + 3, timeout=30, what="three more iterations")
        now = self.slurm_jobs(rm).get(b)
        allowed = cpus_allowed(gcc["pid"])  # empty once the program has ended (a loaded run is slow to look)
        if now is not None and now["allocated"] == 1 and allowed:  # the other job and this program still run
            self.assertEqual(set(allowed.values()), {frozenset(gcc["cpus"])})
            self.assertEqual(set(probe_lines(self.read(a_out))[seen + 2][1]), set(gcc["cpus"]))
        self.stop_probes()
        self.cluster.wait_state(a, ("COMPLETED", "FAILED"), timeout=120)
        self.assertEqual(self.cluster.state(a), "COMPLETED", self.read(a_err))
        out = self.read(a_out)
        self.assertEqual(out.splitlines()[0], "42")
        self.assertEqual(out.count("verified"), 2, out)
        self.assertEqual(self.read(a_err), "", "the batch script's processes wrote to stderr")
        # Two programs in turn: two arrivals, one Slurm job id.
        def records():
            r = subprocess.run([CTL, "--socket", rm.socket, "history", "--json", "--slurm-job", str(a)],
                               capture_output=True, text=True, check=True)
            return [json.loads(l) for l in r.stdout.splitlines()]
        wait_for(lambda: len(records()) == 2, timeout=15, what="two records for the batch script's two programs")
        self.assertEqual({r["slurm_job_id"] for r in records()}, {a})

    def test_nogomp_leaves_a_gcc_program_of_the_batch_script_to_libgomp(self):
        rm = self.start_rm(policy="equip")
        self.use_rm(rm)
        job, out, err = self.submit("nogomp", "echo LD_PRELOAD=$LD_PRELOAD; " +
                                    f"{program('cpu_probe-gcc')} --iterations 15 --work-ms 60", "--cosched=nogomp", "-c2")
        self.cluster.wait_state(job, ("RUNNING", "COMPLETED"), timeout=60)
        while self.cluster.state(job) == "RUNNING":
            self.assertEqual(rm.status()["jobs"], [], "a gcc program registered under --cosched=nogomp")
            time.sleep(0.2)
        self.assertEqual(self.cluster.wait_ended(job), "COMPLETED", self.read(err))
        text = self.read(out)
        self.assertNotIn("libomp", text.splitlines()[0])
        self.assertIn("libcosched_wrap", text.splitlines()[0])  # the rest of --cosched is there
        self.assertEqual({t for t, _ in probe_lines(text)}, {2}, "not libgomp's native team")
        self.assertIn("verified", text)

    def test_the_cpu_report_goes_to_the_jobs_admin_comment(self):
        # docs/slurm.md, "What the job's CPUs bought": the RM writes it with scontrol while the job runs, at each
        # new estimate (at most every 5 s), and once more when the program leaves if Slurm still takes it.
        rm = self.start_rm(policy="equip")
        self.use_rm(rm)
        job, out, _ = self.submit("report", self.probe(iterations=60, work_ms=100), "--cosched=malleable", "-c2")

        def comment():
            line = self.cluster.run(["scontrol", "-o", "show", "job", str(job)]).stdout.strip()
            m = re.search(r"AdminComment=(.*?)(?= [A-Za-z]+=|$)", line)
            return m.group(1).strip() if m and m.group(1).startswith("cosched:") else None
        text = wait_for(comment, timeout=60, interval=0.2, what="the Slurm job's AdminComment")
        self.assertRegex(text, r"^cosched: cpu_probe-clang: \d+ CPUs? at efficiency [\d.]+ \((waiting_time|"
                               r"measured_speedup), confidence [\d.]+\); ")
        self.assertEqual(self.cluster.wait_ended(job, timeout=120), "COMPLETED", self.read(out))
        # The accounting record's report is the same kind of sentence, at the job's end.
        records = subprocess.run([CTL, "--socket", rm.socket, "history", "--json", "--slurm-job", str(job)],
                                 capture_output=True, text=True, check=True).stdout.splitlines()
        self.assertEqual(len(records), 1, records)
        self.assertRegex(json.loads(records[0])["cpu_report"]["summary"], r"^\d+ CPUs? at efficiency ")

    def test_the_ranks_of_an_srun_mpi_step_are_one_job(self):
        # srun inside an sbatch --cosched job: the option reaches the step, each rank gets cosched-run's
        # environment for an MPI program (the PMPI wrappers preloaded) and the key of the Slurm job.
        rm = self.start_rm(policy="equip")
        self.use_rm(rm)
        job, out, _ = self.submit("mpi", f"srun --mpi=pmix {program('mpi-hybrid')} 60 4096 50 2",
                                  "--cosched", "-n2", "-c1")
        ranks = wait_for(lambda: (lambda js: js if len(js) == 2 else None)(
            [j for j in rm.status()["jobs"] if j["slurm_job_id"] == job]), timeout=60, what="both ranks registered")
        self.assertEqual(len({j["job"] for j in ranks}), 1, "the ranks are not one job")
        self.assertEqual(sorted(j["rank"] for j in ranks), [0, 1])
        self.assertEqual({j["requested"] for j in ranks}, {1})  # -c1 each: the step's 2 CPUs together
        self.assertEqual({j["job_key"] for j in ranks}, {f"slurm:{job}"})
        wait_for(lambda: all(j["net_bytes_out"] > 0 for j in rm.status()["jobs"] if j["slurm_job_id"] == job),
                 timeout=30, what="the PMPI wrappers' byte counts")
        self.cluster.wait_state(job, ("COMPLETED", "FAILED"), timeout=120)
        self.assertEqual(self.cluster.state(job), "COMPLETED", self.read(out))
        self.assertEqual(len(re.findall(r"^rank \d out \d+ in \d+$", self.read(out), re.M)), 2)

    def test_a_job_without_cosched_is_not_registered_and_runs_natively(self):
        rm = self.start_rm(policy="equip")
        self.use_rm(rm)
        job, out, _ = self.submit("plain", "env | grep -c -E '^(COSCHED_(SOCKET|JOB|REQUEST)|OMP_TOOL_LIBRARIES)='; " +
                                  self.probe(iterations=15, work_ms=60), "-c2")
        self.cluster.wait_state(job, ("RUNNING", "COMPLETED"), timeout=60)
        while self.cluster.state(job) == "RUNNING":
            self.assertEqual(rm.status()["jobs"], [], "a job without --cosched was registered")
            time.sleep(0.2)
        self.assertEqual(self.cluster.wait_ended(job), "COMPLETED")
        text = self.read(out)
        self.assertEqual(text.splitlines()[0], "0", "cosched variables in a job without --cosched")
        self.assertEqual({t for t, _ in probe_lines(text)}, {2}, "not the native team")
        self.assertIn("verified", text)

    def test_without_an_rm_a_cosched_job_runs_natively_after_one_warning(self):
        self.cluster_plugin(f"socket={self.out}/nobody-here.sock")
        job, out, err = self.submit("norm", self.probe(iterations=5, work_ms=50), "--cosched", "-c2")
        self.cluster.wait_state(job, ("COMPLETED", "FAILED"), timeout=60)
        self.assertEqual(self.cluster.state(job), "COMPLETED")
        warnings = [l for l in self.read(err).splitlines() if l.startswith("cosched:")]
        self.assertEqual(len(warnings), 1, self.read(err))
        self.assertIn("runs natively", warnings[0])
        self.assertEqual({t for t, _ in probe_lines(self.read(out))}, {2})
        self.assertIn("verified", self.read(out))


class NodeGate(SlurmTestCase):
    def test_pdpa_keeps_a_third_job_in_slurms_queue_until_it_admits_it(self):
        # PDPA's level here: two jobs (min_ml=2 admits the second at once, max_ml=2 holds the third back).
        rm = self.start_rm("--slurm-node", NODE, "--param", "min_ml=2", "--param", "max_ml=2", policy="pdpa")
        self.use_rm(rm)
        # a and b run until the test cancels them (1000 iterations: about 60 s at one CPU each, however slowly
        # Slurm starts them); waiting for them to end on their own cost the suite about 15 s.
        cmd = f"{program('amdahl-clang')} --serial-fraction 0.2 --iterations 1000 --work-ms 60"
        a, _, _ = self.submit("a", cmd, "--cosched=malleable", "-c2")
        wait_for(lambda: a in self.slurm_jobs(rm), timeout=60, what="job a registered")
        self.assertNotIn("DRAIN", self.cluster.node()["State"])
        b, _, _ = self.submit("b", cmd, "--cosched=malleable", "-c2")
        wait_for(lambda: b in self.slurm_jobs(rm), timeout=60, what="job b registered")
        wait_for(lambda: "DRAIN" in self.cluster.node()["State"], timeout=10, what="the node drained")
        self.assertTrue(self.cluster.node()["Reason"].startswith(REASON), self.cluster.node())
        self.assertTrue(rm.status()["slurm"]["drained"])
        # c is only checked to wait and then start: 40 iterations (about 2.4 s).
        short = f"{program('amdahl-clang')} --serial-fraction 0.2 --iterations 40 --work-ms 60"
        c, _, _ = self.submit("c", short, "--cosched=malleable", "-c2")
        time.sleep(3)  # several scheduling cycles of slurmctld
        self.assertEqual(self.cluster.state(c), "PENDING")
        reason = self.cluster.pending_reason(c)
        self.assertTrue("ReqNodeNotAvail" in reason or "DRAINED" in reason, reason)
        self.assertEqual(self.cluster.state(a), "RUNNING")
        # When a job leaves (a, cancelled), the RM admits one: the node is resumed, Slurm starts c, c registers.
        self.cluster.run(["scancel", str(a)])
        self.cluster.wait_state(c, ("RUNNING", "COMPLETED"), timeout=120)
        a_end = self.cluster.job(a).get("EndTime")
        self.assertNotEqual(a_end, "Unknown")
        self.assertGreaterEqual(self.cluster.job(c)["StartTime"], a_end)
        self.cluster.wait_state(c, ("COMPLETED",), timeout=120)
        self.assertEqual(self.cluster.state(b), "RUNNING", "b went on beside c")
        self.cluster.run(["scancel", str(b)])
        for job in (a, b):
            self.cluster.wait_state(job, ("CANCELLED",), timeout=60)
        wait_for(lambda: "DRAIN" not in self.cluster.node()["State"], timeout=10, what="the node resumed")
        rm.stop()
        self.assertNotIn("DRAIN", self.cluster.node()["State"])

    def test_sigkill_of_the_rm_leaves_jobs_running_unconfined_and_the_node_open(self):
        rm = self.start_rm("--slurm-node", NODE, "--param", "min_ml=2", "--param", "max_ml=2", policy="pdpa")
        self.use_rm(rm)
        # With a build running beside the suite, Slurm took over 60 s to start two jobs, and a loaded repeat timed
        # out waiting to see the guard free them: the first could end before then. So the two meet before their
        # probes start, and 300 iterations (30 s of one CPU, 15 s on both once freed) outlast the checks; a job
        # that ends first says so. 120 iterations did not, once, in a clean-clone CI run (2026-12-07). The
        # checks done, stop_probes() ends them (a minute less than running them out).
        jobs = [self.submit(n, self.rendezvous(n, other) + self.probe(iterations=300, work_ms=100),
                            "--cosched=malleable", "-c2")[0] for n, other in (("a", "b"), ("b", "a"))]
        wait_for(lambda: set(self.slurm_jobs(rm)) == set(jobs), timeout=120, what="both jobs registered")
        status = wait_for(lambda: (lambda js: js if all(j["allocated"] == 1 for j in js.values()) else None)(
            self.slurm_jobs(rm)), timeout=20, what="both jobs confined to one CPU")
        wait_for(lambda: "DRAIN" in self.cluster.node()["State"], timeout=10, what="the node drained")
        pids = [j["pid"] for j in status.values()]
        rm.proc.send_signal(signal.SIGKILL)
        rm.proc.wait()
        # The guard frees the jobs and resumes the node.
        def unconfined(pid):
            masks = cpus_allowed(pid)
            if not masks:
                raise AssertionError(f"job process {pid} ended before its threads were seen unconfined")
            return set(masks.values()) == {frozenset({0, 1})}
        wait_for(lambda: all(unconfined(p) for p in pids), timeout=10, what="the jobs' threads unconfined")
        wait_for(lambda: "DRAIN" not in self.cluster.node()["State"], timeout=15, what="the node resumed")
        for job, pid in zip(jobs, pids):
            self.assertEqual(self.cluster.state(job), "RUNNING")
            self.assertNotEqual(process_state(pid), "T")
        self.stop_probes()  # each still ends as a job does, its result checked
        for job in jobs:
            self.cluster.wait_state(job, ("COMPLETED", "FAILED"), timeout=120)
            self.assertEqual(self.cluster.job(job)["ExitCode"], "0:0")


class Prolog(SlurmTestCase):
    def test_the_prolog_starts_the_rm_for_the_first_cosched_job(self):
        rm_dir = os.path.join(self.out, "node-rm")
        socket_path = os.path.join(rm_dir, "rm.sock")
        with open(self.prolog_conf, "w") as f:
            f.write(f"SOCKET={socket_path}\nRM_OPTIONS=--policy equip --cpus 0-1\nNODE_GATE=yes\n"
                    f"COSCHED_RM={os.path.join(BIN, 'cosched-rm')}\nLOCK_FILE={self.out}/prolog.lock\n"
                    f"SLURM_CONF={self.cluster.conf}\nCOSCHED_LOCK_DIR={self.out}/locks\n")
        open(self.prolog_marker, "w").close()
        self.cluster_plugin(f"socket={socket_path}")
        try:
            job, out, _ = self.submit("p", self.probe(iterations=20, work_ms=100), "--cosched", "-c2")
            self.cluster.wait_state(job, ("RUNNING", "COMPLETED"), timeout=60)
            # slurmctld says RUNNING once it allocated the job; slurmd runs the prolog when it launches it.
            wait_for(lambda: subprocess.run([CTL, "--socket", socket_path, "status"], capture_output=True,
                                            timeout=20).returncode == 0, timeout=30, what="the prolog's RM")
            self.cluster.wait_state(job, ("COMPLETED",), timeout=120)
            self.assertIn("verified", self.read(out))
            # The record is written when the RM sees the job leave, which may come after Slurm's COMPLETED.
            def history():
                return subprocess.run([CTL, "--socket", socket_path, "history", "--json", "--slurm-job", str(job)],
                                      capture_output=True, text=True)
            wait_for(lambda: history().stdout.strip(), timeout=15,
                     what="the job's record in the prolog's RM's history (did it register?)")
            # The prolog announced the job: the RM held its admissions until it registered.
            with open(os.path.join(rm_dir, "rm.log")) as f:
                self.assertIn(f"Slurm job {job} is starting", f.read())
        finally:
            os.unlink(self.prolog_marker)
            subprocess.run([CTL, "--socket", socket_path, "shutdown"], capture_output=True)
            wait_for(lambda: not os.path.exists(socket_path), timeout=15, what="the prolog's RM to stop")


class QsubmitOnSlurm(SlurmTestCase):
    def test_replays_the_shipped_workload_and_its_jobs_csv_agrees_with_slurms_records(self):
        rm = self.start_rm(policy="equip")
        self.use_rm(rm)
        run_dir = os.path.join(self.out, "run")
        # The shipped workload and catalog, with 40 iterations a job instead of 200: the same jobs, a fifth of
        # the CPU time (a full run takes minutes on 2 CPUs).
        catalog = os.path.join(self.out, "catalog.yaml")
        with open(os.path.join(WORKLOADS, "catalog.yaml")) as f, open(catalog, "w") as g:
            g.write(re.sub(r"(--iterations\"?,? \"?)\d+", r"\g<1>40", f.read()))
        r = subprocess.run([QSUBMIT, "--backend", "slurm", os.path.join(WORKLOADS, "w3-mini.swf"), "--catalog",
                            catalog, "--time-scale", "0.1", "--out", run_dir, "--quiet"], capture_output=True,
                           text=True, timeout=600)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(run_dir, "jobs.csv")) as f:
            rows = {int(row["job"]): row for row in csv.DictReader(f)}
        with open(os.path.join(run_dir, "slurm_jobs.csv")) as f:
            slurm_ids = {int(row["job"]): int(row["slurm_job_id"]) for row in csv.DictReader(f)}
        self.assertEqual(sorted(rows), [1, 2, 3, 4, 5, 6])
        self.assertEqual(sorted(slurm_ids), sorted(rows))
        records = self.cluster.jobcomp_records()
        times = {}
        for job, row in rows.items():
            rec = records[slurm_ids[job]]
            self.assertEqual(rec["JobState"], "COMPLETED")
            self.assertEqual(int(row["exit_status"]), 0)
            self.assertEqual(int(row["requested"]), int(rec["ProcCnt"]))
            t = {k: time.mktime(time.strptime(rec[k], "%Y-%m-%dT%H:%M:%S")) for k in ("SubmitTime", "StartTime", "EndTime")}
            self.assertAlmostEqual(float(row["start"]) - float(row["submit"]), t["StartTime"] - t["SubmitTime"])
            self.assertAlmostEqual(float(row["execution"]), t["EndTime"] - t["StartTime"])
            times[job] = t["SubmitTime"] - float(row["submit"])  # the run's origin, by each row
        self.assertEqual(len(set(times.values())), 1, f"rows disagree on the run's origin: {times}")
        with open(os.path.join(run_dir, "summary.json")) as f:
            summary = json.load(f)
        self.assertEqual((summary["format"], summary["overall"]["completed"]), ("cosched-results", 6))
        for name in ("ml.csv", "allocation.csv", "trace.prv", "trace.json", "decisions.jsonl"):
            self.assertTrue(os.path.exists(os.path.join(run_dir, name)), name)
        # They ran under cosched: the RM's accounting has each Slurm job.
        history = [json.loads(l) for l in subprocess.run([CTL, "--socket", rm.socket, "history", "--json"],
                                                         capture_output=True, text=True).stdout.splitlines()]
        self.assertEqual({h["slurm_job_id"] for h in history if h["slurm_job_id"] is not None},
                         set(slurm_ids.values()))

    def test_bad_input_submits_nothing(self):
        bad = os.path.join(self.out, "bad.swf")
        with open(os.path.join(WORKLOADS, "w3-mini.swf")) as f, open(bad, "w") as g:
            g.write(f.read().replace("\n4 43 -1 16 2", "\n4 43 -1 16 two"))
        shutil.copy(os.path.join(WORKLOADS, "catalog.yaml"), os.path.join(self.out, "catalog.yaml"))
        before = self.cluster.run(["squeue", "-h", "-t", "all", "-o", "%i"]).stdout.split()
        r = subprocess.run([QSUBMIT, "--backend", "slurm", bad, "--out", os.path.join(self.out, "bad-run")],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 2)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        self.assertIn("bad.swf:", r.stderr)
        self.assertEqual(self.cluster.run(["squeue", "-h", "-t", "all", "-o", "%i"]).stdout.split(), before)
        # An sbatch option Slurm refuses: nothing submitted either, one line.
        r = subprocess.run([QSUBMIT, "--backend", "slurm", os.path.join(WORKLOADS, "w3-mini.swf"),
                            "--time-scale", "0.01", "--sbatch-option=--no-such-option", "--out", os.path.join(self.out, "bad-run2")],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("nothing was submitted", r.stderr)
        self.assertEqual(self.cluster.run(["squeue", "-h", "-t", "all", "-o", "%i"]).stdout.split(), before)


class ClientToolOnSlurm(SlurmTestCase):
    def test_the_jobs_own_ompt_tool_runs_chained_behind_libcosched(self):
        # The user's profiler in the job's environment: the plugin moves it to COSCHED_CLIENT_TOOL_LIBRARIES, as
        # cosched-run does (the same launch_env code), and libcosched starts it. It sees every region the
        # program ran (worked out by hand: 150 iterations x 3 regions) while the RM manages the job.
        counter = os.path.join(BIN, "libompt_region_counter.so")
        rm = self.start_rm(policy="equip")
        self.use_rm(rm)
        amdahl = f"{program('amdahl-clang')} --iterations 150 --regions 3 --work-ms 20 --units-per-ms 3000 --quiet"
        job, out, err = self.submit("client", amdahl, "--cosched", "-c2", f"--export=ALL,OMP_TOOL_LIBRARIES={counter}")
        wait_for(lambda: job in self.slurm_jobs(rm), timeout=60, what="the Slurm job in status")
        self.cluster.wait_state(job, ("COMPLETED", "FAILED"), timeout=120)
        self.assertEqual(self.cluster.state(job), "COMPLETED", self.read(err))
        self.assertIn("region-counter: parallel_begin 450 parallel_end 450 ", self.read(err))
        self.assertNotIn("is not chained", self.read(err))


if __name__ == "__main__":
    unittest.main()
