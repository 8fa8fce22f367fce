#!/usr/bin/python3
"""The daemon and the simulator cannot drift (issue 49): they share one decision core
(rm/decision/decision_core.hpp). A real cosched-rm runs real jobs with --core-trace, which records the core's
inputs in its order (snapshots, the stops it made, forgotten jobs, a parameter change); `cosched-sim
replay-core` gives them to the core as the simulator calls it, with the policy rebuilt from the trace. Its
decision log must equal the daemon's --log record for record, field for field, less what only the daemon knows
(each process's pid and Slurm job id)."""
import json
import os
import subprocess
import time

from harness import BUILD, RmTestCase, program, wait_for

SIM = os.path.join(BUILD, "sim/cosched-sim")
DAEMON_ONLY = ("pid", "slurm_job_id")


def records(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def without_daemon_fields(entry):
    e = dict(entry)
    e["jobs"] = [{k: v for k, v in j.items() if k not in DAEMON_ONLY} for j in entry["jobs"]]
    return e


class CoreReplay(RmTestCase):
    def replay_equals_daemon(self, policy, extra=(), during=None):
        trace = os.path.join(self.tmp, f"{policy}.trace")
        rm = self.start_rm("--core-trace", trace, *extra, policy=policy, cpus="0-1")
        work = ["--iterations", "40", "--work-ms", "15", "--quiet"]
        jobs = [self.start_job([program("amdahl-clang"), "--serial-fraction", f] + work, rm, request=2,
                               launcher=["--malleable"]) for f in ("0", "0.5")]
        wait_for(lambda: len(rm.status()["jobs"]) == 2, what="both jobs to register")
        third = self.start_job([program("amdahl-gcc"), "--serial-fraction", "1.0"] + work, rm, request=2,
                               launcher=["--malleable"])
        if during:
            during(rm)
        for j in jobs + [third]:
            self.assertEqual(j.wait(), 0, j.stderr())
        wait_for(lambda: not rm.status()["jobs"], what="the jobs to leave")
        rm.stop()

        out = os.path.join(self.tmp, f"{policy}.replayed.jsonl")
        r = subprocess.run([SIM, "replay-core", trace, "-o", out], capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        daemon = [without_daemon_fields(e) for e in records(rm.log)]
        replayed = records(out)
        self.assertGreater(len(daemon), 5, "too few decisions to compare")
        self.assertTrue(any(j["allocated"] != 2 for e in daemon for j in e["jobs"]),
                        "no job was ever given fewer CPUs than it asked for: nothing was decided")
        for k, (d, s) in enumerate(zip(daemon, replayed)):
            self.assertEqual(d, s, f"decision {k} differs")
        self.assertEqual(len(daemon), len(replayed))
        return daemon

    def setUp(self):
        super().setUp()
        import tempfile
        import shutil
        self.tmp = tempfile.mkdtemp(prefix="cosched-it-replay-")
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def test_pdpa_with_a_parameter_change(self):
        def change(rm):
            time.sleep(0.3)
            rm.ctl("set", "high_eff=0.8")
        self.replay_equals_daemon("pdpa", extra=("--baseline", "always"), during=change)

    def test_gang_stops_and_resumes(self):
        daemon = self.replay_equals_daemon("gang", extra=("--param", "narrow=0"))
        self.assertTrue(any(j["run"] == "stopped" for e in daemon for j in e["jobs"]),
                        "gang never stopped a job: the stops were not exercised")

    def test_equip(self):
        self.replay_equals_daemon("equip")


if __name__ == "__main__":
    import unittest
    unittest.main()
