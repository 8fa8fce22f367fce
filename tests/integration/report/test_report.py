#!/usr/bin/python3
"""cosched-report on two run directories written by the C++ results writer (results_fixture): the figure
exists in both formats, the table has one response and one execution row per class with ratios to the
first run, and a missing file is named in the error. Standard library only; the tool itself needs
Debian's matplotlib."""
import os
import subprocess
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPORT = os.environ.get("COSCHED_REPORT", os.path.join(HERE, "../../../scripts/cosched-report"))
FIXTURE = os.environ.get("COSCHED_RESULTS_FIXTURE", "")


def report(*args):
    return subprocess.run([REPORT, *args], capture_output=True, text=True, timeout=120)


class Report(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not os.path.exists(FIXTURE):
            raise AssertionError(f"{FIXTURE} is missing: the build should have produced it")
        cls.tmp = tempfile.TemporaryDirectory(prefix="cosched-report-")
        subprocess.run([FIXTURE, cls.tmp.name], check=True, timeout=30)
        cls.pdpa = os.path.join(cls.tmp.name, "pdpa")
        cls.native = os.path.join(cls.tmp.name, "native")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def table(self, stdout):
        """{(class, metric): [cells...]} from the printed table."""
        rows = {}
        for line in stdout.splitlines():
            if line.startswith("#") or not line.strip():
                continue
            cells = line.split()
            # metrics are two words ("response (s)"); the class is the first cell
            rows[(cells[0], " ".join(cells[1:3]))] = cells[3:]
        return rows

    def test_png_with_gantt_and_table(self):
        out = os.path.join(self.tmp.name, "compare.png")
        r = report(self.pdpa, self.native, "--gantt", "--out", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out, "rb") as f:
            self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
        rows = self.table(r.stdout)
        header = r.stdout.splitlines()[0].split()
        self.assertEqual(header, ["class", "metric", "pdpa", "native", "/pdpa"])
        for cls in ("apsi", "bt", "swim", "all"):
            self.assertIn((cls, "response (s)"), rows)
            self.assertIn((cls, "execution (s)"), rows)
        # bt: pdpa responses 10, 10 → 10.00; native 12, 14 → 13.00, ratio 1.30
        self.assertEqual(rows[("bt", "response (s)")], ["10.00", "13.00", "1.30"])
        # apsi: pdpa executes [10, 20) → 10; native [5, 24) → 19, ratio 1.90
        self.assertEqual(rows[("apsi", "execution (s)")], ["10.00", "19.00", "1.90"])
        self.assertIn(("run", "makespan (s)"), rows)
        self.assertIn(("run", "mean ML"), rows)

    def test_svg_single_run(self):
        out = os.path.join(self.tmp.name, "one.svg")
        r = report(self.native, "--out", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out, encoding="utf-8") as f:
            self.assertIn("<svg", f.read(2000))

    def test_table_only(self):
        r = report(self.pdpa, "--no-figure")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(("swim", "execution (s)"), self.table(r.stdout))

    def test_missing_file_is_named(self):
        broken = os.path.join(self.tmp.name, "broken")
        os.makedirs(broken, exist_ok=True)
        r = report(broken, "--no-figure")
        self.assertEqual(r.returncode, 2)
        self.assertIn(os.path.join(broken, "summary.json"), r.stderr)

    def test_missing_trace_is_named_for_gantt(self):
        partial = os.path.join(self.tmp.name, "partial")
        os.makedirs(partial, exist_ok=True)
        for name in ("summary.json", "jobs.csv", "ml.csv"):
            with open(os.path.join(self.pdpa, name), "rb") as src, open(os.path.join(partial, name), "wb") as dst:
                dst.write(src.read())
        r = report(partial, "--gantt", "--out", os.path.join(self.tmp.name, "x.png"))
        self.assertEqual(r.returncode, 2)
        self.assertIn(os.path.join(partial, "trace.json"), r.stderr)

    def test_help(self):
        r = report("--help")
        self.assertEqual(r.returncode, 0)
        self.assertIn("--gantt", r.stdout)


if __name__ == "__main__":
    unittest.main(verbosity=2)
