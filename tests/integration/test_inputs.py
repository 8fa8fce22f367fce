#!/usr/bin/python3
"""qsubmit and cosched-sim read workloads through one reader and agree on what is bad input: an empty
workload, a file where --lenient leaves nothing, a truncated gzip stream (exit 2, one line naming the file);
a lenient read reports the total of lines it skipped (summary.json `skipped_lines`), and a header promising
more jobs than the file holds is a warning."""
import gzip
import json
import os
import shutil
import subprocess
import tempfile
import unittest

from harness import BUILD

SIM = os.path.join(BUILD, "sim/cosched-sim")
QSUBMIT = os.path.join(BUILD, "qs/qsubmit/qsubmit")
GOOD = "1 0 -1 10 2 -1 -1 2 -1 -1 1 -1 -1 1 -1 -1 -1 -1\n"


class WorkloadInputs(unittest.TestCase):
    def setUp(self):
        for p in (SIM, QSUBMIT):
            self.assertTrue(os.path.exists(p), f"{p} not built")
        self.dir = tempfile.mkdtemp(prefix="cosched-inputs-")
        with open(os.path.join(self.dir, "catalog.yaml"), "w") as f:
            f.write('apps:\n  1:\n    name: a\n    command: "true"\n')

    def tearDown(self):
        shutil.rmtree(self.dir)

    def write(self, name, text):
        path = os.path.join(self.dir, name)
        opener = gzip.open if name.endswith(".gz") else open
        with opener(path, "wt") as f:
            f.write(text)
        return path

    def both(self, swf, *extra):
        sim = subprocess.run([SIM, swf, "--policy", "equip", "--cpus", "4", "--dry-run"] + list(extra), capture_output=True, text=True,
                             timeout=60)
        qs = subprocess.run([QSUBMIT, swf, "--native", "--out", os.path.join(self.dir, "qs-out")] +
                            list(extra), capture_output=True, text=True, timeout=60)
        return sim, qs

    def assert_bad_input_in_both(self, swf, text, *extra):
        for r in self.both(swf, *extra):
            self.assertEqual(r.returncode, 2, r.stderr)
            lines = r.stderr.strip().splitlines()
            self.assertEqual(len(lines), 1, r.stderr)
            self.assertIn(text, lines[0])

    def test_empty_workload(self):
        # cosched-sim said 0 (and simulated nothing), qsubmit said 2.
        swf = self.write("empty.swf", "; MaxProcs: 4\n")
        self.assert_bad_input_in_both(swf, f"{swf}: no jobs")

    def test_lenient_read_that_leaves_nothing(self):
        # Was exit 0 with 0 jobs and exactly 1000 warnings, never the total.
        swf = self.write("bad.swf", "garbage line\n" * 1500)
        self.assert_bad_input_in_both(swf, "no jobs (all 1500 job lines were bad and skipped", "--lenient")

    def test_truncated_gzip(self):
        swf = self.write("cut.swf.gz", "".join(GOOD.replace("1 0", f"{i} {i}", 1) for i in range(1, 3000)))
        with open(swf, "rb") as f:
            data = f.read()
        with open(swf, "wb") as f:
            f.write(data[:len(data) // 2])
        self.assert_bad_input_in_both(swf, "truncated gzip stream", "--lenient")

    def test_lenient_total_and_header_warning(self):
        swf = self.write("some.swf", "; MaxJobs: 527371\n" + GOOD + "garbage\n" * 1200)
        out = os.path.join(self.dir, "sim-out")
        r = subprocess.run([SIM, swf, "--policy", "equip", "--cpus", "4", "--lenient", "--out", out], capture_output=True, text=True,
                           timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(f"{swf}: 1200 bad line(s) skipped in all (the first 1000 are shown above)", r.stderr)
        self.assertIn(f"{swf}:1: the header promises 527371 jobs (MaxJobs) but the file holds 1201", r.stderr)
        with open(os.path.join(out, "summary.json")) as f:
            self.assertEqual(json.load(f)["skipped_lines"], 1200)

    def test_extra_columns_refused_unless_ignored(self):
        # A converted archive log with a queue name and a node list after the 18 fields.
        swf = self.write("wide.swf.gz", GOOD.rstrip("\n") + " batch n[1-2]\n")
        self.assert_bad_input_in_both(swf, f"{swf}:1: expected 18 fields, found 20 (--extra-fields ignore")
        for r in self.both(swf, "--extra-fields", "ignore"):
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn(f"{swf}:1: 1 job line(s) had more than 18 fields; only the first 18 were read", r.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
