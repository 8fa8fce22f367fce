#!/usr/bin/python3
"""The thread-affinity enforcement backend: what confines jobs where no cpuset cgroup can be used (a
resource manager run by an ordinary user, or a host without the cpuset controller). The same guarantees as
with cgroups, read from /proc: disjoint CPU masks on every thread of every job while they share the
machine, the full mask back when a job is alone again, and after the RM dies (DESIGN rule 3)."""
import os
import signal
import unittest

from harness import (NOBODY, RM, RUN, RmTestCase, cpus_allowed, program, require_reachable_by, wait_for)

LONG = ["--iterations", "100000", "--work-ms", "20"]  # runs until the test ends it


def single_cpu(pid):
    """The one CPU every thread of `pid` may run on, or None while the threads disagree or have several."""
    masks = set(cpus_allowed(pid).values())
    if len(masks) != 1:
        return None
    (mask,) = masks
    return next(iter(mask)) if len(mask) == 1 else None


class AffinityBackend(RmTestCase):
    def share_then_check(self, rm, user=None):
        clang = self.start_job([program("amdahl-clang")] + LONG, rm, request=2, user=user)
        gcc = self.start_job([program("amdahl-gcc")] + LONG, rm, request=2, user=user)
        wait_for(lambda: all((rm.job(j.pid) or {}).get("allocated") == 1 for j in (clang, gcc)),
                 what="both jobs at 1 CPU")
        self.assertEqual(rm.status()["enforcement"], "affinity")
        # Every thread, including the OpenMP workers and libcosched's watcher, on the job's one CPU.
        cpus = wait_for(lambda: (lambda a, b: (a, b) if a is not None and b is not None else None)(
            single_cpu(clang.pid), single_cpu(gcc.pid)), timeout=5, what="single-CPU masks on every thread")
        self.assertNotEqual(cpus[0], cpus[1], cpus)
        self.assertEqual({rm.job(clang.pid)["cpus"][0], rm.job(gcc.pid)["cpus"][0]}, set(cpus))
        return clang, gcc

    def test_jobs_confined_then_widened_on_departure(self):
        rm = self.start_rm("--enforce", "affinity")
        clang, gcc = self.share_then_check(rm)
        gcc.kill()
        wait_for(lambda: rm.job(clang.pid)["allocated"] == 2, timeout=5, what="the survivor at 2 CPUs")
        wait_for(lambda: set(cpus_allowed(clang.pid).values()) == {frozenset({0, 1})}, timeout=5,
                 what="every thread of the survivor allowed on 0-1")
        # A region at the new size creates a second worker thread; it must not be left on one CPU.
        n = len(clang.teams())
        wait_for(lambda: len(clang.teams()) > n + 3, what="more iterations")
        self.assertEqual(clang.teams()[-1], "2")
        self.assertEqual(set(cpus_allowed(clang.pid).values()), {frozenset({0, 1})})

    def test_a_thread_that_widens_its_own_mask_is_confined_again(self):
        """GROMACS' mdrun resets its main thread's mask to every CPU at start-up, after the RM confined it; it
        then ran on both CPUs while status said one. Here the test widens the main thread's mask, as mdrun
        does, and the RM must put it back on the job's CPU within a few quanta."""
        rm = self.start_rm("--enforce", "affinity")
        clang, gcc = self.share_then_check(rm)
        mine = single_cpu(clang.pid)
        os.sched_setaffinity(clang.pid, {0, 1})  # the main thread: its tid is the pid
        self.assertEqual(cpus_allowed(clang.pid)[clang.pid], frozenset({0, 1}))
        wait_for(lambda: single_cpu(clang.pid) == mine, timeout=5,
                 what=f"every thread of pid {clang.pid} back on CPU {mine}")
        self.assertEqual(rm.job(clang.pid)["cpus"], [mine])
        self.assertEqual(single_cpu(gcc.pid), 1 - mine)

    def test_killed_rm_leaves_jobs_on_every_cpu(self):
        rm = self.start_rm("--enforce", "affinity")
        clang, gcc = self.share_then_check(rm)
        rm.proc.send_signal(signal.SIGKILL)
        rm.proc.wait()
        for job in (clang, gcc):
            wait_for(lambda: set(cpus_allowed(job.pid).values()) == {frozenset({0, 1})}, timeout=5,
                     what=f"pid {job.pid}: every thread allowed on 0-1 again")
        n = len(clang.teams())
        wait_for(lambda: len(clang.teams()) > n + 3, what="more iterations")
        self.assertEqual(clang.teams()[-1], "2", "the job did not return to its native team size")

    def test_unprivileged_rm_chooses_affinity_and_confines_its_users_jobs(self):
        require_reachable_by(self, NOBODY, RM, RUN, program("amdahl-clang"), program("amdahl-gcc"))
        rm = self.start_rm(user=NOBODY)  # --enforce auto: no writable cpuset for this user
        clang, gcc = self.share_then_check(rm, user=NOBODY)
        self.assertEqual({j["uid"] for j in rm.status()["jobs"]}, {NOBODY})
        rm.stop()
        for job in (clang, gcc):
            wait_for(lambda: set(cpus_allowed(job.pid).values()) == {frozenset({0, 1})}, timeout=5,
                     what=f"pid {job.pid} released at shutdown")


class FixedTeamPlacement(RmTestCase):
    """More jobs than CPUs, one of them a fixed team of 2 (omp_set_num_threads before every region). Where the
    kernel shares CPUs per thread (--cpu-share thread), placement counts its threads, so once its team is known
    it has a CPU of its own and the two resizable jobs share the other (docs/architecture.md,
    "Oversubscription"); arriving last, it was placed beside the first job and kept there: three threads on one
    CPU, one on the other. In a cpu cgroup of its own (--cpu-share job, the default) it gets one job's share of
    its CPU, so it counts as one job and stays where it arrived, beside one of the others."""

    def start_three(self, *rm_args):
        rm = self.start_rm("--enforce", "affinity", *rm_args)
        first = self.start_job([program("amdahl-clang")] + LONG, rm, request=2)
        wait_for(lambda: rm.job(first.pid), what="the first job")
        second = self.start_job([program("amdahl-gcc")] + LONG, rm, request=2)
        wait_for(lambda: all((rm.job(j.pid) or {}).get("allocated") == 1 for j in (first, second)),
                 what="both jobs at 1 CPU")
        fixed = self.start_job([program("team-patterns-gcc"), "--pattern", "setnum", "--threads", "2",
                                "--iterations", "1000000", "--quiet"], rm, request=2)
        j = wait_for(lambda: (lambda s: s if s and s["team"] == 2 and s["allocated"] == 1 else None)(
            rm.job(fixed.pid)), timeout=10, what="the fixed team of 2 on 1 CPU")
        self.assertEqual(j["team_mode"], "fixed: omp_set_num_threads")
        return rm, first, second, fixed

    def test_a_fixed_team_gets_a_cpu_of_its_own_and_the_others_share(self):
        rm, first, second, fixed = self.start_three("--cpu-share", "thread")
        # The masks every thread of each job has, read from /proc, once they settle.
        cpus = wait_for(lambda: (lambda a, b, f: (a, b, f) if None not in (a, b, f) and a == b and f != a
                                 else None)(single_cpu(first.pid), single_cpu(second.pid), single_cpu(fixed.pid)),
                        timeout=10, what="the fixed team alone on its CPU, the others sharing the other")
        self.assertEqual(rm.job(fixed.pid)["cpus"], [cpus[2]])
        self.assertEqual(rm.job(first.pid)["cpus"], rm.job(second.pid)["cpus"])
        # And it stays so: a later quantum does not move the fixed team back beside another job.
        n = len(first.teams())
        wait_for(lambda: len(first.teams()) > n + 5, what="more iterations of the first job")
        self.assertEqual((single_cpu(first.pid), single_cpu(second.pid), single_cpu(fixed.pid)), cpus)

    def test_with_a_share_per_job_a_fixed_team_counts_as_one_job(self):
        rm, first, second, fixed = self.start_three()
        share = rm.status()["cpu_share"]
        if not share.startswith("job"):
            self.skipTest(f"no share per job on this host: {share}")
        # Two jobs on one CPU, one on the other, the fixed team among the two: from /proc, once they settle.
        def settled():
            a, b, f = single_cpu(first.pid), single_cpu(second.pid), single_cpu(fixed.pid)
            return (a, b, f) if None not in (a, b, f) and a != b and f in (a, b) else None
        cpus = wait_for(settled, timeout=10, what="the fixed team beside one of the others, the third alone")
        n = len(first.teams())
        wait_for(lambda: len(first.teams()) > n + 5, what="more iterations of the first job")
        self.assertEqual(settled(), cpus)


if __name__ == "__main__":
    unittest.main(verbosity=2)
