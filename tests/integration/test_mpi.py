#!/usr/bin/python3
"""MPI jobs under one RM (docs/usage.md, "MPI jobs"): real Open MPI programs started with mpirun through
cosched-run, which preloads libcosched_mpi.

- The ranks of one mpirun register under one job id (Open MPI's job key); the policy sees one job whose
  allocation is split among its ranks, and each rank's OpenMP team (seen inside its regions) follows its share:
  4 each while the job is alone on 8 modelled CPUs, 2 each once another job takes half.
- The PMPI wrappers' byte counts in status equal what the program itself says it sent and received: a
  hybrid program's exchanges, and a program that makes one call of every kind counted (v-collectives,
  nonblocking point to point and collectives, matched receives, scans) with sizes that differ by rank.
- Under gang scheduling both ranks are stopped and resumed together: /proc/PID/stat of the two ranks, sampled
  side by side, almost never disagrees while the job is stopped, and every decision gives both the same state.
- `cosched-run --job ID` makes two non-MPI processes one job; a register_rank frame with a bad key is refused.
"""
import atexit
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import time
import unittest

from harness import (BUILD, RUN, RmTestCase, frame, process_state, program, raw_connect, read_frame, wait_for)

MPIRUN = shutil.which("mpirun")
MPI_LIB = os.path.join(BUILD, "wrappers/libcosched_mpi.so.0")
MSG_REGISTER_RANK, MSG_REFUSED = 6, 3


def mpi_missing():
    """The capability these tests need, named, or None."""
    if MPIRUN is None:
        return "no mpirun (Open MPI: openmpi-bin)"
    if not os.path.exists(MPI_LIB):
        return "libcosched_mpi was not built (no MPI development files: libopenmpi-dev)"
    return None


_session_base = None


def session_base():
    """A directory of this test process for Open MPI's session directories, removed at exit: a killed mpirun
    (every test that stops a job does that) leaves its pid.N directory behind, and under /tmp/ompi.HOST.UID
    they added up to about 20 per CI run."""
    global _session_base
    if _session_base is None:
        _session_base = tempfile.mkdtemp(prefix="cosched-ompi-")
        atexit.register(shutil.rmtree, _session_base, True)
    return _session_base


def mpirun_cmd(np, args, env=None, options=()):
    """mpirun with what a root test needs: --allow-run-as-root, --oversubscribe (more ranks than CPUs), no
    binding (the RM places the ranks), each -x variable passed to the ranks, session directories under
    session_base(), and `options` of mpirun's own."""
    cmd = [MPIRUN, "-np", str(np), "--bind-to", "none", "--oversubscribe", "--mca", "orte_tmpdir_base",
           session_base()] + list(options)
    if os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    for k, v in (env or {}).items():
        cmd += ["-x", f"{k}={v}"]
    return cmd + list(args)


class MpiJob:
    """An mpirun whose ranks run PROGRAM through cosched-run; stdout collected into a file."""

    def __init__(self, np, socket_path, args, env=None, launcher=()):
        self.out = tempfile.NamedTemporaryFile(mode="w+", prefix="cosched-mpi-", suffix=".out", delete=False)
        cmd = mpirun_cmd(np, [RUN, "--socket", socket_path] + list(launcher) + ["--"] + list(args), env)
        self.proc = subprocess.Popen(cmd, stdout=self.out, stderr=subprocess.STDOUT, start_new_session=True)

    def lines(self):
        with open(self.out.name) as f:
            return f.read().splitlines()

    def teams(self, rank):
        """Team sizes rank `rank` saw inside its regions, in order."""
        out = []
        for line in self.lines():
            p = line.split()
            if len(p) == 6 and p[0] == "iter" and p[2] == "team" and p[4] == "rank" and int(p[5]) == rank:
                out.append(int(p[3]))
        return out

    def counted(self, rank):
        """(out, in) bytes the program says rank `rank` sent and received, once it printed them."""
        for line in self.lines():
            p = line.split()
            if len(p) == 6 and p[0] == "rank" and int(p[1]) == rank and p[2] == "out":
                return int(p[3]), int(p[5])
        return None

    def cleanup(self):
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGCONT)
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait(timeout=20)
        self.out.close()
        os.unlink(self.out.name)


def ranks_of(rm, key_prefix="ompi:"):
    """The status entries of MPI ranks, by rank."""
    return {j["rank"]: j for j in rm.status()["jobs"] if (j.get("job_key") or "").startswith(key_prefix)}


def cpu_ns(pid):
    """The CPU time every thread of the process has run (ns, /proc/PID/task/*/schedstat); 0 once it is gone."""
    total = 0
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                    total += int(f.read().split()[0])
            except (FileNotFoundError, ProcessLookupError):
                pass
    except FileNotFoundError:
        return 0
    return total


class MpiTest(RmTestCase):
    def setUp(self):
        super().setUp()
        missing = mpi_missing()
        if missing:
            self.skipTest(missing)
        self.mpi_jobs = []

    def start_mpi(self, *a, **kw):
        job = MpiJob(*a, **kw)
        self.mpi_jobs.append(job)
        return job

    def tearDown(self):
        for j in self.mpi_jobs:
            j.cleanup()
        super().tearDown()

    def test_ranks_are_one_job_and_teams_follow_the_share(self):
        # 8 modelled CPUs (team sizes only): the job of two ranks asking 4 threads each requests 8.
        rm = self.start_rm("--topology", "core:8 pu:1", cpus="0-7", policy="equip")
        hybrid = program("mpi-hybrid")
        job = self.start_mpi(2, rm.socket, [hybrid, "400", "4096", "40", "3"],
                             env={"OMP_NUM_THREADS": "4"}, launcher=["--malleable", "--quiet"])
        ranks = wait_for(lambda: (lambda r: r if len(r) == 2 else None)(ranks_of(rm)), timeout=30,
                         what="both ranks registered")
        self.assertEqual(ranks[0]["job"], ranks[1]["job"], "one job id for both ranks")
        self.assertEqual(ranks[0]["job_key"], ranks[1]["job_key"])
        self.assertNotEqual(ranks[0]["pid"], ranks[1]["pid"])
        # Alone: the job gets min(8, 8) = 8 CPUs, 4 per rank; each rank's team inside its regions is 4.
        wait_for(lambda: all(a["allocated"] == 4 for a in ranks_of(rm).values()), what="4 CPUs per rank")
        wait_for(lambda: 4 in job.teams(0) and 4 in job.teams(1), timeout=30, what="teams of 4 in both ranks")
        # Another job asking 8: Equipartition gives each job 4, so each rank 2, and the teams follow.
        other = self.start_job([program("amdahl-clang"), "--iterations", "100000", "--work-ms", "20", "--quiet"],
                               rm=rm, request=8, launcher=["--malleable"], quiet=True)
        wait_for(lambda: all(a["allocated"] == 2 for a in ranks_of(rm).values()), what="2 CPUs per rank")
        seen = len(job.teams(0)), len(job.teams(1))
        wait_for(lambda: 2 in job.teams(0)[seen[0]:] and 2 in job.teams(1)[seen[1]:], timeout=30,
                 what="teams of 2 in both ranks after the other job arrived")
        other.kill()
        # The exact byte counts: what each rank printed equals what the wrappers published (the RM reads them
        # each quantum; the program holds 3 s before MPI_Finalize).
        for r in (0, 1):
            expect = wait_for(lambda: job.counted(r), timeout=120, what=f"rank {r}'s own count")
            wait_for(lambda: (lambda j: j and (j["net_bytes_out"], j["net_bytes_in"]) == expect)(ranks_of(rm).get(r)),
                     timeout=3, what=f"rank {r}: status bytes equal to {expect}")
        self.assertEqual(job.proc.wait(timeout=60), 0)
        wait_for(lambda: not ranks_of(rm), what="both ranks gone from status")

    def test_every_counted_call_is_counted_as_documented(self):
        # Three ranks, so that every rooted call has a root distinct from the others; each rank prints its own
        # count by docs/usage.md's rules and holds 3 s before MPI_Finalize.
        rm = self.start_rm(policy="equip")
        job = self.start_mpi(3, rm.socket, [program("mpi-netcount"), "3"], launcher=["--quiet"])
        for r in (0, 1, 2):
            expect = wait_for(lambda: job.counted(r), timeout=60, what=f"rank {r}'s own count")
            got = wait_for(lambda: (lambda j: j if j and (j["net_bytes_out"], j["net_bytes_in"]) == expect else None)(
                ranks_of(rm).get(r)), timeout=3, what=f"rank {r}: status bytes equal to {expect}")
            self.assertGreater(got["net_messages"], 20)
        totals = [job.counted(r) for r in (0, 1, 2)]
        # Logical payload balances: what the ranks sent is what they received.
        self.assertEqual(sum(o for o, _ in totals), sum(i for _, i in totals), totals)
        self.assertEqual(job.proc.wait(timeout=60), 0)

    def test_gang_stops_and_resumes_both_ranks_together(self):
        # Two CPUs, gang: the MPI job (2 ranks × 1 thread = 2 CPUs, one row) alternates with a 2-CPU job.
        rm = self.start_rm("--stop-with", "signal", policy="gang", quantum_ms=200)
        job = self.start_mpi(2, rm.socket, [program("mpi-hybrid"), "100000", "65536", "20", "0"],
                             env={"OMP_NUM_THREADS": "1"}, launcher=["--quiet"])
        ranks = wait_for(lambda: (lambda r: r if len(r) == 2 else None)(ranks_of(rm)), timeout=30,
                         what="both ranks registered")
        pids = [ranks[0]["pid"], ranks[1]["pid"]]
        self.start_job([program("amdahl-clang"), "--iterations", "100000", "--work-ms", "10", "--quiet"], rm=rm,
                       request=2, quiet=True)
        wait_for(lambda: any(j["run_state"] == "stopped" for j in ranks_of(rm).values()), timeout=20,
                 what="the MPI job stopped by gang")
        # Each sample: per rank, its state letter and the CPU time its threads have run so far.
        samples = []
        deadline = time.monotonic() + 4.0
        while time.monotonic() < deadline:
            samples.append([(process_state(p), cpu_ns(p)) for p in pids])
            time.sleep(0.005)
        stopped = [sum(state == "T" for state, _ in s) for s in samples]  # 0, 1 or 2 ranks stopped
        # The job spends a large share of the samples stopped, both ranks at once.
        both_stopped, both_running = stopped.count(2), stopped.count(0)
        self.assertGreater(both_stopped, 0.2 * len(samples), stopped)
        self.assertGreater(both_running, 0.2 * len(samples), stopped)
        # No rank runs while its partner is stopped. One rank shows stopped alone while the signals of one
        # decision take effect: SIGSTOP lands when a task next gets a CPU, and a rank waiting for one (behind
        # the other job's threads, which the same decision resumed) may not get it before the next decision
        # continues it, its stop cancelled. So what is checked is the CPU time a rank runs while its partner
        # is stopped, summed over each stop episode (a run of samples with a rank stopped): the edges cost a
        # few milliseconds (up to 16 ms seen); a rank left running for a 200 ms quantum while its partner is stopped
        # runs for 130 ms or more of it (it shares the 2 CPUs with the other job's 2 threads).
        episodes, current = [], []
        for i, n in enumerate(stopped + [0]):
            if n:
                current.append(i)
            elif current:
                episodes.append(current)
                current = []
        complete = episodes[1 if stopped[0] else 0:len(episodes) - (1 if stopped[-1] else 0)]  # whole ones
        self.assertGreater(len(complete), 2, stopped)
        for e in complete:
            alone_ns = 0
            for a, b in zip(e, e[1:]):
                for r in (0, 1):
                    partner_stopped = samples[a][1 - r][0] == "T" and samples[b][1 - r][0] == "T"
                    if partner_stopped and samples[a][r][0] != "T":
                        alone_ns += max(0, samples[b][r][1] - samples[a][r][1])
            self.assertLess(alone_ns, 80e6, f"a rank ran {alone_ns / 1e6:.0f} ms while its partner was stopped: "
                            f"{[[state for state, _ in samples[i]] for i in e]}")
        # Every decision gives both ranks of the job the same run state.
        rank_ids = {ranks[0]["id"], ranks[1]["id"]}
        checked = 0
        for d in rm.decisions():
            runs = {e["run"] for e in d.get("jobs", []) if e["id"] in rank_ids}
            if len(runs) > 0:
                checked += 1
                self.assertEqual(len(runs), 1, f"ranks in different states in {d}")
        self.assertGreater(checked, 4)
        stops = [j["stops"] for j in ranks_of(rm).values()]
        self.assertGreater(min(stops), 2)
        self.assertLessEqual(max(stops) - min(stops), 1, f"stops per rank {stops}")

    def test_job_option_groups_processes(self):
        rm = self.start_rm(policy="equip")
        work = [program("amdahl-clang"), "--iterations", "100000", "--work-ms", "10", "--quiet"]
        a = self.start_job(work, rm=rm, request=1, launcher=["--job", "pair-1"], quiet=True)
        b = self.start_job(work, rm=rm, request=1, launcher=["--job", "pair-1"], quiet=True)
        got = wait_for(lambda: (lambda js: js if len(js) == 2 else None)(
            [j for j in rm.status()["jobs"] if j.get("job_key") == "pair-1"]), what="both processes registered")
        self.assertEqual(got[0]["job"], got[1]["job"])
        self.assertEqual({a.pid, b.pid}, {j["pid"] for j in got})

    def test_bad_register_rank_is_refused(self):
        rm = self.start_rm(policy="equip")
        body = struct.pack("<iI", 1, 0) + b"x".ljust(240, b"\0")
        bad_key = b"has space".ljust(64, b"\0")
        with raw_connect(rm.socket) as s:
            s.sendall(frame(MSG_REGISTER_RANK, body + bad_key + struct.pack("<ii", 0, 2)))
            t, payload = read_frame(s)
        self.assertEqual(t, MSG_REFUSED)
        self.assertIn(b"job_key", payload)
        with raw_connect(rm.socket) as s:
            s.sendall(frame(MSG_REGISTER_RANK, body + b"ok".ljust(64, b"\0") + struct.pack("<ii", -1, 2)))
            t, payload = read_frame(s)
        self.assertEqual(t, MSG_REFUSED)
        self.assertIn(b"rank", payload)


if __name__ == "__main__":
    unittest.main()
