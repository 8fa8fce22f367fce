#!/usr/bin/python3
"""A job stopped by its user (SIGSTOP, Ctrl-Z) used to keep its CPUs, shown as "running", while another
job waited for them. The RM now notices the stop (state T in /proc), shows the job as "suspended", lends its
CPUs to the others until it continues, and then gives it its share again."""
import os
import signal
import time
import unittest

from harness import RmTestCase, process_state, program, wait_for

LONG = ["--iterations", "100000", "--work-ms", "10"]


class SuspendedJobs(RmTestCase):
    def test_stopped_job_lends_its_cpus_until_it_continues(self):
        rm = self.start_rm(cpus="0-1", policy="equip")
        a = self.start_job([program("amdahl-clang")] + LONG, rm, request=2)
        b = self.start_job([program("amdahl-clang")] + LONG, rm, request=2)
        wait_for(lambda: all((rm.job(j.pid) or {}).get("allocated") == 1 for j in (a, b)), what="one CPU each")

        os.kill(a.pid, signal.SIGSTOP)
        held_since = time.monotonic()
        wait_for(lambda: process_state(a.pid) == "T", what="the job to stop")
        wait_for(lambda: rm.job(a.pid)["state"] == "suspended", what="status to show the job suspended")
        wait_for(lambda: rm.job(b.pid)["allocated"] == 2, what="the other job to get the lent CPU")
        self.assertEqual(rm.job(b.pid)["cpus"], [0, 1])
        why = rm.request({"cmd": "why", "job": rm.job(a.pid)["id"]})["decisions"]
        self.assertIn("suspended", [w["event"] for w in why])
        # Held for 10 s (#15): the policy goes on for the others meanwhile. A job that arrives is admitted and
        # shares the CPUs with b; when it leaves, b gets both back; a stays suspended throughout.
        c = self.start_job([program("amdahl-clang"), "--iterations", "150", "--work-ms", "10", "--quiet"], rm,
                           request=2)
        wait_for(lambda: (rm.job(c.pid) or {}).get("allocated") == 1 and rm.job(b.pid)["allocated"] == 1,
                 what="the newcomer and b at one CPU each while a is held")
        self.assertEqual(c.wait(timeout=60), 0)
        wait_for(lambda: rm.job(b.pid)["allocated"] == 2, what="b back at 2 CPUs once the newcomer left")
        wait_for(lambda: time.monotonic() - held_since >= 10, timeout=30, interval=0.5, what="10 s of hold")
        self.assertEqual(rm.job(a.pid)["state"], "suspended")
        self.assertEqual(process_state(a.pid), "T")

        os.kill(a.pid, signal.SIGCONT)
        wait_for(lambda: rm.job(a.pid)["state"] == "running", what="status to show the job running again")
        wait_for(lambda: all(rm.job(j.pid)["allocated"] == 1 for j in (a, b)), what="one CPU each again")
        self.assertEqual({rm.job(a.pid)["cpus"][0], rm.job(b.pid)["cpus"][0]}, {0, 1})


if __name__ == "__main__":
    unittest.main(verbosity=2)
