#!/usr/bin/python3
"""One RM per CPU: a second cosched-rm whose CPUs overlap a running one's refuses to start, with one error
naming the other RM's pid and socket; RMs on disjoint CPUs partition the machine; a stopped (or killed) RM
leaves no lock behind; an RM that confines nothing (--enforce none) takes no lock."""
import os
import shutil
import signal
import subprocess
import tempfile
import time
import unittest

from harness import RM, RmTestCase


class CpuLocks(RmTestCase):
    def setUp(self):
        super().setUp()
        if len(os.sched_getaffinity(0)) < 2:
            self.skipTest("needs 2 CPUs to partition")
        self.locks = tempfile.mkdtemp(prefix="cosched-it-locks-")
        self.addCleanup(shutil.rmtree, self.locks, True)

    def second_rm(self, cpus, *extra):
        """Starts an RM in the foreground that must refuse at once: its exit status and stderr."""
        sock_dir = tempfile.mkdtemp(prefix="cosched-it-second-")
        self.addCleanup(shutil.rmtree, sock_dir, True)
        env = dict(os.environ, COSCHED_LOCK_DIR=self.locks)
        p = subprocess.Popen([RM, "--foreground", "--socket", os.path.join(sock_dir, "rm.sock"), "--cpus", cpus]
                             + list(extra), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        try:
            out, err = p.communicate(timeout=3)
            return p.returncode, err
        except subprocess.TimeoutExpired:
            p.send_signal(signal.SIGTERM)
            out, err = p.communicate(timeout=15)
            return None, err  # it started: still serving after 3 s

    def test_overlapping_cpus_are_refused_naming_the_other_rm(self):
        first = self.start_rm(cpus="0-1", lock_dir=self.locks)
        rc, err = self.second_rm("1")
        self.assertEqual(rc, 1, f"a second RM on CPU 1 started: {err}")
        lines = [line for line in err.splitlines() if line.strip()]
        self.assertEqual(len(lines), 1, err)
        self.assertIn(f"pid {first.proc.pid}", lines[0])
        self.assertIn(f"socket {first.socket}", lines[0])
        self.assertIn("CPU 1 is managed by another cosched-rm", lines[0])

    def test_disjoint_cpus_partition_the_machine(self):
        self.start_rm(cpus="0", lock_dir=self.locks)
        rc, err = self.second_rm("1")
        self.assertIsNone(rc, f"an RM on disjoint CPUs was refused: {err}")

    def test_a_stopped_rm_leaves_no_lock(self):
        first = self.start_rm(cpus="0-1", lock_dir=self.locks)
        first.proc.kill()  # even killed: the kernel drops the locks with its (and its guard's) descriptors
        first.proc.wait()
        for _ in range(20):  # its guard holds them until it has released the RM's jobs (none here)
            rc, err = self.second_rm("0-1")
            if rc is None:
                break
            time.sleep(0.25)
        self.assertIsNone(rc, f"the CPUs of a dead RM stayed locked: {err}")

    def test_an_rm_that_confines_nothing_takes_no_lock(self):
        self.start_rm(cpus="0-1", lock_dir=self.locks)
        rc, err = self.second_rm("0-1", "--enforce", "none")
        self.assertIsNone(rc, f"an RM with --enforce none was refused: {err}")


if __name__ == "__main__":
    unittest.main()
