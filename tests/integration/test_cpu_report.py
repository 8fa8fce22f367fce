#!/usr/bin/python3
"""What a job's CPUs bought (docs/usage.md): the report of a job that does not scale recommends fewer CPUs,
the report of one that scales does not. Each job runs alone on 2 CPUs under Equipartition, which gives it
both; its report is read where a user reads it: on its standard error at exit (`cosched-run --report`), in
the file of COSCHED_REPORT, from `cosched-ctl report JOB` (text and --json) while the RM remembers the job,
and from the accounting file (`cosched-ctl report --file`) once the RM is gone."""
import json
import os
import re
import shutil
import subprocess
import tempfile

from harness import CTL, RmTestCase, program, wait_for

WORK = ["--iterations", "100", "--work-ms", "20", "--quiet"]  # about 2 s at 2 CPUs


def ctl(*args):
    return subprocess.run([CTL] + list(args), capture_output=True, text=True, timeout=20)


class CpuReport(RmTestCase):
    def setUp(self):
        super().setUp()
        self.dir = tempfile.mkdtemp(prefix="cosched-it-report-")
        self.addCleanup(shutil.rmtree, self.dir, True)
        self.records = os.path.join(self.dir, "accounting.jsonl")

    def run_alone(self, rm, argv, **kw):
        job = self.start_job(argv, rm, request=2, **kw)
        self.assertEqual(job.wait(), 0, job.stderr())
        wait_for(lambda: not rm.status()["jobs"], what="the job to leave the RM")
        return job

    def rm_report(self, rm, pid):
        history = [json.loads(line) for line in open(self.records)]
        rid = next(r["id"] for r in history if r["pid"] == pid)
        r = ctl("--socket", rm.socket, "report", str(rid), "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        return rid, json.loads(r.stdout)

    def test_a_job_that_does_not_scale_is_told_fewer_cpus_and_one_that_scales_is_not(self):
        rm = self.start_rm("--accounting", self.records, policy="equip", cpus="0-1")
        # Serial fraction 1: its second thread waits the whole time. Efficiency 0.5 at 2 CPUs, speedup 1.
        flat = self.run_alone(rm, [program("amdahl-gcc"), "--serial-fraction", "1.0"] + WORK,
                              launcher=["--malleable", "--report"])
        said = [line for line in flat.stderr().splitlines() if line.startswith("cosched: amdahl-gcc (pid ")]
        self.assertEqual(len(said), 1, flat.stderr())
        self.assertRegex(said[0], r"2 CPUs at efficiency 0\.[3-6]\d \((waiting_time|measured_speedup), confidence "
                                  r"[\d.]+\); 1 CPU would have kept \d+ % of its speed$")
        rid, report = self.rm_report(rm, flat.pid)
        self.assertEqual(report["report"]["advice"]["at_cpus"], 2)
        self.assertEqual(report["report"]["advice"]["cpus"], 1)
        self.assertGreaterEqual(report["report"]["advice"]["kept_speed"], 0.9)
        self.assertEqual(said[0].split("): ", 1)[1], report["report"]["summary"])

        # Serial fraction 0: both threads work. Efficiency near 1: one CPU would halve its speed.
        out = os.path.join(self.dir, "report.txt")
        scaling = self.run_alone(rm, [program("amdahl-clang"), "--serial-fraction", "0"] + WORK,
                                 launcher=["--malleable"], env={"COSCHED_REPORT": out})
        self.assertNotIn("CPUs at efficiency", scaling.stderr())
        with open(out) as f:
            text = f.read()
        self.assertRegex(text.splitlines()[0], r"^cosched: amdahl-clang \(pid \d+\): 2 CPUs at efficiency (0\.[89]\d|1\.00) "
                                               r".*; fewer CPUs would have cost more than 10 % of its speed$")
        self.assertIn("     2 CPUs for ", text)
        rid2, report2 = self.rm_report(rm, scaling.pid)
        self.assertEqual(report2["report"]["advice"]["cpus"], 2)
        text_reply = ctl("--socket", rm.socket, "report", str(rid2))
        self.assertEqual(text_reply.returncode, 0, text_reply.stderr)
        self.assertTrue(text_reply.stdout.startswith(f"job {rid2} ("), text_reply.stdout)

        # The accounting record carries the same report, read without the RM.
        rm.stop()
        gone = ctl("--socket", rm.socket, "report", str(rid), "--json", "--file", self.records)
        self.assertEqual(gone.returncode, 0, gone.stderr)
        self.assertEqual(json.loads(gone.stdout)["report"]["advice"]["cpus"], 1)
        unknown = ctl("--socket", rm.socket, "report", "999", "--file", self.records)
        self.assertNotEqual(unknown.returncode, 0)
        self.assertTrue(re.search(r"cosched-ctl: .+", unknown.stderr), unknown.stderr)


if __name__ == "__main__":
    import unittest
    unittest.main()
