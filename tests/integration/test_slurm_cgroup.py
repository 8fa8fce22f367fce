#!/usr/bin/python3
"""cosched under Slurm's own confinement (docs/slurm.md, "Slurm's confinement"): a private one-node cluster with
TaskPlugin=task/cgroup,task/affinity and ProctrackType=proctrack/cgroup (Slurm's cgroup/v1 plugin under this
machine's v1 hierarchies), so each job sits in Slurm's cpuset cgroup, bound to the CPUs Slurm gave it. The RM
must place a job only inside those CPUs and never move it out of Slurm's cgroup. One cluster for the file; if
Slurm cannot start, the test fails."""
import os
import shutil
import signal
import tempfile
import unittest

from harness import RmTestCase, cpus_allowed, cpuset_cgroup, program, wait_for
from slurm_cluster import SlurmCluster
from test_slurm import PLUGIN, probe_lines

CLUSTER = None


def read(path):
    with open(path) as f:
        return f.read()


def setUpModule():
    global CLUSTER
    if not os.path.exists(PLUGIN):
        raise AssertionError(f"{PLUGIN} is missing: the build should have produced it (libslurm-dev)")
    CLUSTER = SlurmCluster(cpus=2, plugin=PLUGIN, task="task/cgroup,task/affinity", proctrack="proctrack/cgroup")
    os.environ["SLURM_CONF"] = CLUSTER.conf


def tearDownModule():
    if CLUSTER is not None:
        CLUSTER.stop()


class InsideSlurmsCgroups(RmTestCase):
    def setUp(self):
        super().setUp()
        self.out = tempfile.mkdtemp(prefix="cosched-slurm-cg-")
        os.chmod(self.out, 0o755)

    def tearDown(self):
        CLUSTER.cancel_all()
        super().tearDown()
        shutil.rmtree(self.out, ignore_errors=True)

    def submit(self, name, cpus):
        out = os.path.join(self.out, f"{name}.out")
        cmd = f"{program('cpu_probe-clang')} --iterations 40 --work-ms 100"
        job = CLUSTER.sbatch(["-J", name, "-o", out, f"-c{cpus}", "--cosched=malleable", "--wrap", cmd])
        return job, out

    def test_jobs_stay_in_slurms_cgroups_and_on_the_cpus_slurm_gave_them(self):
        rm = self.start_rm(policy="equip")
        with open(os.path.join(CLUSTER.dir, "plugstack.conf"), "w") as f:
            f.write(f"required {PLUGIN} socket={rm.socket}\n")
        small, small_out = self.submit("small", 1)   # Slurm binds it to one CPU
        big, big_out = self.submit("big", 2)         # both CPUs
        jobs = wait_for(lambda: (lambda js: js if set(js) == {small, big} else None)(
            {j["slurm_job_id"]: j for j in rm.status()["jobs"]}), timeout=60, what="both jobs registered")
        slurm_cpus = {job: CLUSTER.job_cpus(job) for job in jobs}  # what Slurm gave them
        self.assertEqual((len(slurm_cpus[small]), len(slurm_cpus[big])), (1, 2), slurm_cpus)
        # Equipartition gives each one CPU; the small job's can only be its own, the big job gets the other.
        jobs = wait_for(lambda: (lambda js: js if all(j["allocated"] == 1 for j in js.values()) else None)(
            {j["slurm_job_id"]: j for j in rm.status()["jobs"]}), timeout=20, what="one CPU each")
        self.assertEqual(jobs[small]["requested"], 1)
        self.assertEqual(jobs[big]["requested"], 2)
        self.assertEqual(set(jobs[small]["cpus"]), slurm_cpus[small])
        self.assertNotEqual(jobs[small]["cpus"], jobs[big]["cpus"])
        for job, j in jobs.items():
            # Never moved out of Slurm's cgroup; confined by affinity inside it.
            self.assertIn("slurm", cpuset_cgroup(j["pid"]), f"job {job} left Slurm's cpuset cgroup")
            wait_for(lambda: set(cpus_allowed(j["pid"]).values()) == {frozenset(j["cpus"])}, timeout=10,
                     what=f"job {job}'s threads on {j['cpus']}")
        # The programs saw it: one thread each, on those CPUs.
        for job, out in ((small, small_out), (big, big_out)):
            n = len(probe_lines(read(out)))
            wait_for(lambda: len(probe_lines(read(out))) >= n + 2, timeout=30, what="more iterations")
            team, cpus = probe_lines(read(out))[-1]
            if {j["slurm_job_id"]: j for j in rm.status()["jobs"]}.get(job, {}).get("allocated") == 1:
                self.assertEqual((team, cpus), (1, jobs[job]["cpus"]))
        # Killed, the RM leaves them in Slurm's cgroups with Slurm's CPUs again.
        rm.proc.send_signal(signal.SIGKILL)
        rm.proc.wait()
        for job, j in jobs.items():
            wait_for(lambda: set(cpus_allowed(j["pid"]).values()) == {frozenset(slurm_cpus[job])}, timeout=10,
                     what=f"job {job} back on Slurm's CPUs")
            self.assertIn("slurm", cpuset_cgroup(j["pid"]))
        for job, out in ((small, small_out), (big, big_out)):
            CLUSTER.wait_state(job, ("COMPLETED", "FAILED"), timeout=120)
            self.assertEqual(CLUSTER.job(job)["ExitCode"], "0:0")
            self.assertIn("verified", read(out))


if __name__ == "__main__":
    unittest.main()
