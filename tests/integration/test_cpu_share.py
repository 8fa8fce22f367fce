#!/usr/bin/python3
"""Jobs that share a CPU share it per job (cosched-rm --cpu-share, rm/enforce/job_cpu_share.cpp): each job in
a cgroup of its own in the cpu controller's v1 hierarchy, made inside the cgroup it came from, and put back
there when it leaves, when the RM stops and, through the guard, when the RM is killed. Read from
/proc/<pid>/cgroup and the hierarchy itself. And what it is for, timed side by side: a team of two that the
RM narrowed onto one CPU beside a busy loop on that CPU runs at most 4 times as long as alone on that CPU
(per thread, the kernel made each barrier wait for the busy loop's time slice: about 140 times on Linux 6.18;
docs/performance.md, "A team narrowed onto a CPU it shares")."""
import os
import signal
import subprocess
import time
import unittest

from harness import RmTestCase, program, v1_cgroup, wait_for


def cpu_mount():
    """The mount point of the v1 hierarchy holding the cpu controller, or None."""
    with open("/proc/mounts") as f:
        for line in f:
            _, mnt, fstype, opts = line.split()[:4]
            if fstype == "cgroup" and "cpu" in opts.split(","):
                return mnt
    return None


def cpu_cgroup(pid):
    return v1_cgroup(pid, "cpu")


def group_dir(path):
    return os.path.join(cpu_mount(), path.lstrip("/"))


def tasks_of(directory):
    with open(os.path.join(directory, "tasks")) as f:
        return set(f.read().split())


def steps(iterations):
    """A team of two (OMP_NUM_THREADS=2; omp_get_max_threads() read before some regions, so the team stays
    2 on 1 CPU): 490 regions per time step, each a barrier hand-off between the two threads."""
    return [program("team-patterns-clang"), "--pattern", "steps", "--quiet", "--iterations", str(iterations)]


class CpuShare(RmTestCase):
    def setUp(self):
        super().setUp()
        if cpu_mount() is None:
            self.skipTest("no cgroup v1 hierarchy of the cpu controller")
        self.own = cpu_cgroup(os.getpid())

    def start_steps(self, rm, iterations):
        return self.start_job(steps(iterations), rm, request=2, env={"OMP_NUM_THREADS": "2"})

    def job_group(self, rm, job):
        return f"cosched-job.{rm.proc.pid}.{rm.job(job.pid)['id']}"

    def test_each_job_in_a_group_of_its_own_and_back(self):
        rm = self.start_rm(cpus="0")
        self.assertEqual(rm.status()["cpu_share"], "job (cgroup v1 cpu)")
        a = self.start_steps(rm, 100000)
        b = self.start_steps(rm, 100000)
        wait_for(lambda: rm.job(a.pid) and rm.job(b.pid), what="both jobs registered")
        groups = {}
        for job in (a, b):
            want = os.path.join(self.own, self.job_group(rm, job))
            wait_for(lambda: cpu_cgroup(job.pid) == want, timeout=5, what=f"pid {job.pid} in {want}")
            groups[job.pid] = group_dir(want)
            # Every thread moved with the process, the ones libomp made later included (threads come and go:
            # libcosched's parked roots, so read until one listing of the process is inside the group's).
            wait_for(lambda: set(os.listdir(f"/proc/{job.pid}/task")) <= tasks_of(groups[job.pid]), timeout=5,
                     what=f"every thread of pid {job.pid} in its group")
        a.kill()
        wait_for(lambda: not os.path.exists(groups[a.pid]), timeout=5, what="the departed job's group removed")
        self.assertTrue(os.path.isdir(groups[b.pid]))
        rm.stop()
        wait_for(lambda: cpu_cgroup(b.pid) == self.own, timeout=5, what="the job back in its own cgroup at RM stop")
        wait_for(lambda: not os.path.exists(groups[b.pid]), timeout=5, what="its group removed")

    def test_a_killed_rm_leaves_the_job_where_it_came_from(self):
        rm = self.start_rm(cpus="0")
        job = self.start_steps(rm, 100000)
        wait_for(lambda: rm.job(job.pid), what="the job registered")
        want = os.path.join(self.own, self.job_group(rm, job))
        wait_for(lambda: cpu_cgroup(job.pid) == want, timeout=5, what=f"pid {job.pid} in {want}")
        rm.proc.send_signal(signal.SIGKILL)
        rm.proc.wait()
        wait_for(lambda: cpu_cgroup(job.pid) == self.own, timeout=5, what="the guard putting the job back")
        wait_for(lambda: not os.path.exists(group_dir(want)), timeout=5, what="the guard removing the group")

    def test_per_thread_on_request(self):
        rm = self.start_rm("--cpu-share", "thread", cpus="0")
        self.assertEqual(rm.status()["cpu_share"], "thread")
        job = self.start_steps(rm, 100000)
        wait_for(lambda: rm.job(job.pid), what="the job registered")
        time.sleep(0.5)  # past confinement, which follows the registration reply
        self.assertEqual(cpu_cgroup(job.pid), self.own)

    def test_a_narrowed_team_beside_a_busy_loop(self):
        rm = self.start_rm(cpus="0")
        iterations = 150

        def timed():
            t = time.monotonic()
            job = self.start_steps(rm, iterations)
            return job, t

        job, t = timed()
        self.assertEqual(job.wait(timeout=120), 0, job.stderr())
        alone = time.monotonic() - t
        self.assertIn(f"teams 2:{iterations}", " ".join(job.lines()))
        busy = subprocess.Popen(["sh", "-c", "while :; do :; done"], preexec_fn=lambda: os.sched_setaffinity(0, {0}))
        try:
            job, t = timed()
            limit = max(60, 20 * alone)  # per thread it took about 0.7 s per time step here
            try:
                self.assertEqual(job.wait(timeout=limit), 0, job.stderr())
            except subprocess.TimeoutExpired:
                self.fail(f"alone {alone:.2f} s, beside a busy loop still running after {limit:.0f} s")
            beside = time.monotonic() - t
        finally:
            busy.kill()
            busy.wait()
        self.assertIn(f"teams 2:{iterations}", " ".join(job.lines()))
        self.assertTrue(any(line.startswith("verified") for line in job.lines()), job.lines())
        self.assertLessEqual(beside, 4 * alone, f"alone {alone:.2f} s, beside a busy loop {beside:.2f} s")


if __name__ == "__main__":
    unittest.main()
