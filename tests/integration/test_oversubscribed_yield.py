#!/usr/bin/python3
"""Oversubscribed regions must not burn CPUs (libruntime/spin_control.hpp): while a job's region runs more
threads than the job has CPUs, libomp's blocktime is 0 for it (waiting threads sleep at once), and the value
in effect before (here KMP_BLOCKTIME=5) comes back as soon as the team fits its CPUs again. The program
reads the blocktime itself, inside each region (cpu_probe --blocktime), under Equipartition on 2 CPUs: alone
(team 2 on 2 CPUs), then next to a second job (team 2 on 1 CPU: a fixed team cannot follow), then alone
again. And while a region outnumbers the job's CPUs, libomp must count more threads than processors, so that
its own wait loops yield (libruntime/parked_roots.hpp): threads named cosched-parked, read from
/proc/<pid>/task, one here (2 processors - a team of 2 + 1), none once the team fits again. But not while
another job runs on the same CPU (status `cpus_shared`): a waiter that yields hands the CPU to that job for a
scheduler slice at every barrier, so the job's waiters sleep instead, and the parked root comes back when the
other job leaves."""
import re
import unittest

from harness import RmTestCase, program, thread_names, wait_for

LINE = re.compile(r"blocktime iter (\d+) team (\d+) allowed (\d+) ms (-?\d+)$")


def readings(job):
    """[(team, allowed CPUs, blocktime ms)] per iteration, in order."""
    out = []
    for line in job.lines():
        m = LINE.match(line)
        if m:
            out.append((int(m.group(2)), int(m.group(3)), int(m.group(4))))
    return out


def parked_threads(pid):
    """Threads of `pid` named cosched-parked (libomp roots the job keeps while oversubscribed)."""
    return thread_names(pid).count("cosched-parked")


class OversubscribedYield(RmTestCase):
    def run_probe_alone_crowded_alone(self, env):
        rm = self.start_rm(policy="equip", quantum_ms=100)
        probe = self.start_job([program("cpu_probe-clang"), "--blocktime", "--iterations", "300", "--work-ms", "30"],
                               rm, request=2, launcher=["--fixed-team"],
                               env=dict({"OMP_NUM_THREADS": "2", "KMP_BLOCKTIME": "5"}, **env))
        wait_for(lambda: len(readings(probe)) >= 8, timeout=30, what="the probe's first iterations alone")
        other = self.start_job([program("amdahl-clang"), "--serial-fraction", "0", "--iterations", "100000",
                                "--work-ms", "30", "--quiet"], rm, request=2)
        # A user's blocktime of 5 ms, not libomp's 200, and a long wait: with COSCHED_OVERSUBSCRIBED_YIELD=0 the
        # waiting thread spins through it at every barrier on the one CPU, and beside other tests (ALONGSIDE)
        # 8 iterations once took over 30 s with a blocktime of 50 ms (a clean-clone CI run).
        wait_for(lambda: sum(1 for _, allowed, _ in readings(probe) if allowed == 1) >= 8, timeout=90,
                 what="the probe's iterations on 1 CPU next to the second job")
        self.parked_crowded = parked_threads(probe.pid)
        other.kill()
        wait_for(lambda: sum(1 for _, allowed, _ in readings(probe)[-4:] if allowed == 2) == 4, timeout=30,
                 what="the probe's iterations on 2 CPUs again")
        self.parked_alone = None
        wait_for(lambda: parked_threads(probe.pid) == 0 or probe.proc.poll() is not None, timeout=10,
                 what="the parked threads leaving")
        self.parked_alone = parked_threads(probe.pid) if probe.proc.poll() is None else None
        self.assertEqual(probe.wait(timeout=120), 0, probe.stderr())
        self.assertIn("verified", probe.lines())
        seen = readings(probe)
        print("(team, allowed, blocktime):", seen)
        self.assertTrue(all(team == 2 for team, _, _ in seen), "the fixed team stays 2")
        crowded = [i for i, (_, allowed, _) in enumerate(seen) if allowed == 1]
        self.assertGreaterEqual(len(crowded), 4, "the probe shared the CPUs with the second job")
        self.assertTrue(any(allowed == 2 for _, allowed, _ in seen[crowded[-1] + 1:]), "and got both back after")
        # The grant the tool acted on at a region's start and the CPUs the master reads inside it may differ in
        # the one region during which the RM moved the job: only regions whose neighbours saw the same CPUs count.
        steady = [seen[i] for i in range(1, len(seen) - 1) if seen[i - 1][1] == seen[i][1] == seen[i + 1][1]]
        return steady

    def test_blocktime_is_zero_while_oversubscribed_and_the_users_value_after(self):
        steady = self.run_probe_alone_crowded_alone({})
        over = [ms for team, allowed, ms in steady if team > allowed]
        fits = [ms for team, allowed, ms in steady if team <= allowed]
        self.assertTrue(over and fits, steady)
        self.assertEqual(set(over), {0}, "blocktime inside regions of 2 threads on 1 CPU")
        self.assertEqual(set(fits), {5}, "blocktime inside regions of 2 threads on 2 CPUs (KMP_BLOCKTIME=5)")
        self.assertEqual(self.parked_crowded, 1, "parked roots while a team of 2 shares 1 CPU of 2")
        self.assertIn(self.parked_alone, (0, None), "none once the team fits its CPUs again")

    def test_switch_off_leaves_the_blocktime_alone(self):
        steady = self.run_probe_alone_crowded_alone({"COSCHED_OVERSUBSCRIBED_YIELD": "0"})
        self.assertEqual({ms for _, _, ms in steady}, {5}, steady)
        self.assertEqual(self.parked_crowded, 0, "COSCHED_OVERSUBSCRIBED_YIELD=0 parks no root either")

    def test_no_parked_roots_while_another_job_shares_the_cpu(self):
        # One managed CPU: the probe's fixed team of 2 outnumbers it alone (a parked root), and a second job
        # placed there shares it (none, on either job); when that job leaves, the root comes back.
        rm = self.start_rm(policy="equip", quantum_ms=100, cpus="0")
        probe = self.start_job([program("cpu_probe-clang"), "--blocktime", "--iterations", "100000", "--work-ms",
                                "5"], rm, request=2, launcher=["--fixed-team"], env={"OMP_NUM_THREADS": "2"})
        shared = lambda pid: (rm.job(pid) or {}).get("cpus_shared")
        wait_for(lambda: len(readings(probe)) >= 4 and parked_threads(probe.pid) == 1, timeout=30,
                 what="the probe's team of 2 alone on 1 CPU, with one parked root")
        self.assertIs(shared(probe.pid), False)
        other = self.start_job([program("amdahl-clang"), "--serial-fraction", "1", "--iterations", "100000",
                                "--work-ms", "10", "--quiet"], rm, request=1)
        wait_for(lambda: rm.job(other.pid) is not None and shared(probe.pid) and shared(other.pid),
                 timeout=30, what="both jobs on CPU 0, each shown sharing it")
        self.assertEqual(rm.job(probe.pid)["cpu_list"], rm.job(other.pid)["cpu_list"])
        wait_for(lambda: parked_threads(probe.pid) == 0, timeout=10, what="the parked root leaving")
        before = len(readings(probe))
        wait_for(lambda: len(readings(probe)) >= before + 4, timeout=30, what="four iterations beside the other job")
        self.assertEqual(parked_threads(probe.pid), 0, "no root parked while the CPU is shared")
        other.kill()
        wait_for(lambda: shared(probe.pid) is False and parked_threads(probe.pid) == 1, timeout=10,
                 what="alone again: not shared, and the parked root back")
        self.assertTrue(all(team == 2 for team, _, _ in readings(probe)), "the fixed team stays 2")


if __name__ == "__main__":
    unittest.main(verbosity=2)
