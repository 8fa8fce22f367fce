#!/usr/bin/python3
"""Accounting and `status` for people: every job that leaves the RM gets a record (who, what, when, CPUs
over time, speedup) that `cosched-ctl history` reads — also after the RM restarts, whose job ids then follow
the recorded ones; `status` shows user and elapsed columns, picks columns with --format, filters by user and
state, and never cuts a command."""
import json
import os
import pwd
import shutil
import subprocess
import tempfile
import unittest

from harness import CTL, RmTestCase, program, wait_for

SHORT = ["--iterations", "30", "--work-ms", "20", "--quiet"]
LONG = ["--iterations", "100000", "--work-ms", "20", "--quiet"]
ME = pwd.getpwuid(os.geteuid()).pw_name


def ctl(*args):
    return subprocess.run([CTL] + list(args), capture_output=True, text=True, timeout=20)


class History(RmTestCase):
    def setUp(self):
        super().setUp()
        self.dir = tempfile.mkdtemp(prefix="cosched-it-acct-")
        self.addCleanup(shutil.rmtree, self.dir, True)
        self.records = os.path.join(self.dir, "accounting.jsonl")

    def run_one_job(self, rm):
        job = self.start_job([program("amdahl-clang")] + SHORT, rm, request=2)
        self.assertEqual(job.wait(), 0, job.stderr())
        wait_for(lambda: not rm.status()["jobs"], what="the job to leave the RM")
        return job

    def history(self, *extra):
        r = ctl("history", "--file", self.records, "--json", *extra)
        self.assertEqual(r.returncode, 0, r.stderr)
        return [json.loads(line) for line in r.stdout.splitlines()]

    def test_history_survives_a_restart_and_ids_go_on(self):
        first_rm = self.start_rm("--accounting", self.records)
        first = self.run_one_job(first_rm)
        first_rm.stop()
        second_rm = self.start_rm("--accounting", self.records)
        second = self.run_one_job(second_rm)
        records = self.history()
        self.assertEqual([r["pid"] for r in records], [first.pid, second.pid])
        self.assertEqual(records[1]["id"], records[0]["id"] + 1, "a restarted RM reused a recorded job id")
        for r in records:
            self.assertEqual(r["user"], ME)
            self.assertIn("amdahl-clang", r["command"])
            self.assertEqual(r["requested"], 2)
            self.assertLessEqual(r["start"], r["end"])
            self.assertGreater(r["elapsed_s"], 0)
            self.assertTrue(r["cpus_over_time"], "no CPUs over time")
            self.assertEqual(r["cpus_over_time"][0][1], 2, "equip grants the request on an empty machine")
            self.assertGreater(r["cpu_seconds"], 0)
            for key in ("speedup", "efficiency", "end_reason", "policy", "rm_pid", "socket"):
                self.assertIn(key, r)
        self.assertEqual(records[0]["rm_pid"], first_rm.proc.pid)
        self.assertEqual(records[1]["rm_pid"], second_rm.proc.pid)
        # Filters and the table.
        self.assertEqual([r["pid"] for r in self.history("--pid", str(second.pid))], [second.pid])
        self.assertEqual([r["pid"] for r in self.history("--last", "1")], [second.pid])
        self.assertEqual(self.history("--user", "no-such-user-here"), [])
        table = ctl("history", "--file", self.records)
        self.assertEqual(table.returncode, 0, table.stderr)
        header, *rows = table.stdout.splitlines()
        self.assertTrue(header.startswith("JOB"), header)
        self.assertEqual(len(rows), 2)
        self.assertIn(ME, rows[0])

    def test_default_records_are_found_from_the_socket(self):
        rm = self.start_rm()
        job = self.run_one_job(rm)
        self.assertTrue(os.path.exists(os.path.join(rm.dir, "rm.accounting.jsonl")))
        r = ctl("--socket", rm.socket, "history", "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual([json.loads(line)["pid"] for line in r.stdout.splitlines()], [job.pid])

    def test_missing_records_are_one_clear_error(self):
        r = ctl("history", "--file", os.path.join(self.dir, "none.jsonl"))
        self.assertEqual(r.returncode, 2)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        self.assertIn("none.jsonl", r.stderr)


class StatusForPeople(RmTestCase):
    def test_columns_filters_and_no_truncation(self):
        rm = self.start_rm()
        long_argument = "0." + "0" * 80 + "1"  # a command wider than a terminal (the protocol carries 240 bytes)
        job = self.start_job([program("amdahl-clang")] + LONG + ["--serial-fraction", long_argument], rm, request=1)
        wait_for(lambda: rm.job(job.pid), what="the job in status")

        r = rm.ctl("status")
        header = next(line for line in r.stdout.splitlines() if line.startswith("JOB"))
        for column in ("USER", "ELAPSED", "COMMAND"):
            self.assertIn(column, header)
        self.assertNotIn("SLURM_JOB", header, "a Slurm column without Slurm jobs")
        row = next(line for line in r.stdout.splitlines() if f" {job.pid} " in line)
        self.assertIn(long_argument, row, "the command was cut")
        self.assertIn(ME, row)

        r = rm.ctl("status", "--format", "job,user,state,command")
        lines = r.stdout.splitlines()
        header = next(line for line in lines if line.startswith("JOB"))
        self.assertEqual(header.split(), ["JOB", "USER", "STATE", "COMMAND"])

        self.assertIn(str(job.pid), rm.ctl("status", "--user", ME).stdout)
        self.assertIn(str(job.pid), rm.ctl("status", "--user", str(os.geteuid())).stdout)
        self.assertIn("(no jobs)", rm.ctl("status", "--user", "no-such-user-here").stdout)
        self.assertIn(str(job.pid), rm.ctl("status", "--state", "running").stdout)
        self.assertIn("(no jobs)", rm.ctl("status", "--state", "suspended").stdout)
        filtered = json.loads(rm.ctl("status", "--json", "--user", "no-such-user-here").stdout)
        self.assertEqual(filtered["jobs"], [])

        bad = rm.ctl("status", "--format", "job,bogus", check=False)
        self.assertEqual(bad.returncode, 2)
        self.assertIn("bogus", bad.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
