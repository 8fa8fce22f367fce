#!/usr/bin/python3
"""The first end-to-end malleable path: cosched-rm (Equipartition) + two unmodified OpenMP programs, one
built with clang (libomp) and one with gcc (libgomp, moved onto libomp by cosched-run), on CPUs 0-1."""
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import unittest

from harness import (MSG_CTL_REPLY, MSG_CTL_REQUEST, RM, RmTestCase, cpus_allowed, cpuset_cgroup, cpuset_cgroup_dir,
                     frame, process_state, program, read_frame, wait_for)

LONG = ["--iterations", "100000", "--work-ms", "20"]  # runs until the test ends it


def both_allocated(rm, a, b, n):
    ja, jb = rm.job(a.pid), rm.job(b.pid)
    return ja and jb and ja["allocated"] == n and jb["allocated"] == n


class TwoJobsShareTheCpus(RmTestCase):
    def test_clang_and_gcc_jobs_split_then_regrow(self):
        rm = self.start_rm()
        # The clang job says it adapts to any team (--malleable); the gcc job leaves it to cosched, which never
        # makes a region it is entitled to run in parallel inactive (docs/architecture.md, rule 7).
        clang = self.start_job([program("amdahl-clang")] + LONG, rm, request=2, launcher=["--malleable"])
        gcc = self.start_job([program("amdahl-gcc"), "--iterations", "60", "--work-ms", "20"], rm, request=2)
        wait_for(lambda: both_allocated(rm, clang, gcc, 1), what="both jobs at 1 CPU")

        # Inside their regions the malleable job now sees one thread, the other keeps two threads sharing its
        # one CPU (a few more iterations to be sure the new allocation has reached a region boundary).
        n_clang, n_gcc = len(clang.teams()), len(gcc.teams())
        wait_for(lambda: len(clang.teams()) > n_clang + 3 and len(gcc.teams()) > n_gcc + 3, what="iterations")
        self.assertEqual(clang.teams()[-1], "1")
        self.assertEqual(gcc.teams()[-1], "2")

        # Their threads run on disjoint single CPUs, as /proc says.
        masks_clang = set(cpus_allowed(clang.pid).values())
        masks_gcc = set(cpus_allowed(gcc.pid).values())
        self.assertEqual(len(masks_clang), 1, masks_clang)
        self.assertEqual(len(masks_gcc), 1, masks_gcc)
        (mc,), (mg,) = masks_clang, masks_gcc
        self.assertEqual(len(mc), 1)
        self.assertEqual(len(mg), 1)
        self.assertTrue(mc.isdisjoint(mg), f"{mc} vs {mg}")
        st = rm.status()
        self.assertEqual(sorted(c for j in st["jobs"] for c in j["cpus"]), [0, 1])

        # When the gcc job exits, the clang job gets both CPUs in the very decision that handles the departure
        # (no waiting for a later quantum), and its regions grow back to 2 threads.
        self.assertEqual(gcc.wait(), 0)
        wait_for(lambda: rm.job(clang.pid)["allocated"] == 2, timeout=5, what="clang job back to 2 CPUs")
        departure = [d for d in rm.decisions() if d["event"] == "departure"]
        self.assertTrue(departure, "no departure decision logged")
        self.assertEqual([(j["allocated"], j["cpus"]) for j in departure[0]["jobs"]], [(2, "0-1")])
        n = len(clang.teams())
        wait_for(lambda: len(clang.teams()) > n + 2, what="more iterations")
        self.assertEqual(clang.teams()[-1], "2")
        wait_for(lambda: set(cpus_allowed(clang.pid).values()) == {frozenset({0, 1})}, timeout=5,
                 what="clang threads allowed on 0-1")


class KillNine(RmTestCase):
    def test_killed_job_gives_its_cpu_back(self):
        rm = self.start_rm()
        a = self.start_job([program("amdahl-clang")] + LONG, rm, request=2)
        b = self.start_job([program("amdahl-clang")] + LONG, rm, request=2)
        wait_for(lambda: both_allocated(rm, a, b, 1), what="both jobs at 1 CPU")
        os.kill(b.pid, signal.SIGKILL)
        b.wait()
        wait_for(lambda: rm.job(b.pid) is None and rm.job(a.pid)["allocated"] == 2, timeout=5,
                 what="the survivor to get 2 CPUs")
        self.assertEqual(rm.job(a.pid)["cpus"], [0, 1])

    def test_killed_rm_leaves_jobs_native(self):
        rm = self.start_rm()
        a = self.start_job([program("amdahl-clang"), "--iterations", "150", "--work-ms", "20"], rm, request=2)
        b = self.start_job([program("amdahl-gcc"), "--iterations", "150", "--work-ms", "20"], rm, request=2)
        wait_for(lambda: both_allocated(rm, a, b, 1), what="both jobs at 1 CPU")
        self.assertIn("cosched.", cpuset_cgroup(a.pid))
        rm_cgroup = os.path.dirname(cpuset_cgroup_dir(a.pid))  # the RM's cgroup holds one directory per job
        self.assertTrue(os.path.isdir(rm_cgroup), rm_cgroup)
        rm.proc.send_signal(signal.SIGKILL)
        rm.proc.wait()
        # The guard puts both jobs back where they came from; their own watcher restores team and mask.
        for job in (a, b):
            wait_for(lambda: "cosched." not in (cpuset_cgroup(job.pid) or ""), timeout=5,
                     what=f"pid {job.pid} out of the RM's cgroup")
            wait_for(lambda: set(cpus_allowed(job.pid).values()) == {frozenset({0, 1})}, timeout=5,
                     what=f"pid {job.pid} threads allowed on 0-1")
        n = len(a.teams())
        wait_for(lambda: len(a.teams()) > n + 2 or a.proc.poll() is not None, what="more iterations")
        self.assertEqual(a.wait(), 0)
        self.assertEqual(b.wait(), 0)
        self.assertEqual(a.teams()[-1], "2", "the job did not return to its native team size")
        self.assertIn("resource manager went away", a.stderr())
        wait_for(lambda: not os.path.exists(rm_cgroup), timeout=5, what=f"{rm_cgroup} removed by the guard")


class CleanShutdown(RmTestCase):
    def test_sigterm_releases_every_job(self):
        rm = self.start_rm()
        a = self.start_job([program("amdahl-clang"), "--iterations", "120", "--work-ms", "20"], rm, request=2)
        b = self.start_job([program("amdahl-gcc"), "--iterations", "120", "--work-ms", "20"], rm, request=2)
        wait_for(lambda: both_allocated(rm, a, b, 1), what="both jobs at 1 CPU")
        rm_cgroup = os.path.dirname(cpuset_cgroup_dir(a.pid))
        rm.stop()
        self.assertEqual(rm.proc.returncode, 0)
        for job in (a, b):
            self.assertNotEqual(process_state(job.pid), "T")
            wait_for(lambda: set(cpus_allowed(job.pid).values()) == {frozenset({0, 1})}, timeout=5,
                     what=f"pid {job.pid} released")
        self.assertEqual(a.wait(), 0)
        self.assertEqual(b.wait(), 0)
        self.assertFalse(os.path.exists(rm.socket), "socket left behind")
        wait_for(lambda: not os.path.exists(rm_cgroup), timeout=10, what=f"{rm_cgroup} removed")


class NoResourceManager(RmTestCase):
    def test_runs_natively_with_one_warning(self):
        job = self.start_job([program("amdahl-gcc"), "--iterations", "5", "--work-ms", "5"],
                             socket_path="/nonexistent/cosched.sock", env={"OMP_NUM_THREADS": "2"})
        self.assertEqual(job.wait(), 0)
        self.assertEqual(job.teams()[-1], "2")
        warnings = [l for l in job.stderr().splitlines() if l.startswith("cosched:")]
        self.assertEqual(len(warnings), 1, job.stderr())
        self.assertIn("no resource manager", warnings[0])

    def test_quiet_silences_the_warning(self):
        job = self.start_job([program("amdahl-clang"), "--iterations", "3", "--work-ms", "5"],
                             socket_path="/nonexistent/cosched.sock", quiet=True)
        self.assertEqual(job.wait(), 0)
        self.assertNotIn("cosched:", job.stderr())


class Security(RmTestCase):
    def test_socket_is_owner_only(self):
        rm = self.start_rm()
        self.assertEqual(os.stat(rm.socket).st_mode & 0o777, 0o600)


class SocketAppearsReady(unittest.TestCase):
    def test_a_client_that_finds_the_socket_is_answered(self):
        # The RM's socket is bound under another name and linked into place once it listens. Bound at its
        # path, a connect() between bind and listen was refused: a loaded run of the suite hit that window
        # (a status request right after start), and a job that starts then runs natively. --admin-group
        # makes the window wider (a group lookup between the two). Ten starts, each watched by a busy loop
        # that connects the moment the path exists.
        for attempt in range(10):
            d = tempfile.mkdtemp(prefix="cosched-it-socket-")
            path = os.path.join(d, "rm.sock")
            proc = subprocess.Popen([RM, "--foreground", "--socket", path, "--cpus", "0", "--enforce", "none",
                                     "--admin-group", "root", "--log", os.path.join(d, "decisions.jsonl")],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                    env=dict(os.environ, COSCHED_LOCK_DIR=os.path.join(d, "locks")))
            try:
                deadline = time.monotonic() + 10
                while not os.path.exists(path):
                    self.assertIsNone(proc.poll(), "cosched-rm exited at start")
                    self.assertLess(time.monotonic(), deadline, "no socket after 10 s")
                with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                    s.settimeout(20)
                    s.connect(path)  # ConnectionRefusedError here is the failure this test is for
                    s.sendall(frame(MSG_CTL_REQUEST, json.dumps({"cmd": "status"}).encode()))
                    self.assertEqual(read_frame(s)[0], MSG_CTL_REPLY, f"start {attempt + 1}")
                self.assertEqual(sorted(n for n in os.listdir(d) if n.startswith("rm.sock")), ["rm.sock"],
                                 "a staging name was left behind")
            finally:
                proc.terminate()
                proc.wait(timeout=20)
                shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    unittest.main(verbosity=2)
