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
        self.assertIn("pdf", r.stdout)

    def test_pdf(self):
        out = os.path.join(self.tmp.name, "report.pdf")
        r = report(self.native, self.pdpa, "--out", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out, "rb") as f:
            self.assertEqual(f.read(5), b"%PDF-")


def load_report_module():
    """The script as a module, to look at what it draws (it has no .py suffix)."""
    import importlib.machinery
    import importlib.util
    loader = importlib.machinery.SourceFileLoader("cosched_report", REPORT)
    module = importlib.util.module_from_spec(importlib.util.spec_from_loader("cosched_report", loader))
    loader.exec_module(module)
    return module


class Figure(unittest.TestCase):
    """What the figure shows: job counts on whole ticks, equal runs still both visible, a title naming
    the workload and time scale."""

    def runs(self):
        ml = [(0.0, 0), (1.0, 1), (2.5, 2), (4.0, 1), (6.0, 0)]
        summary = {"workload": "/somewhere/w3-mini.swf", "time_scale": 0.5}
        return [{"label": "native", "ml": ml, "summary": summary}, {"label": "pdpa", "ml": ml, "summary": summary}]

    def test_ml_panel(self):
        rep = load_report_module()
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots()
        try:
            rep.draw_ml(ax, self.runs())
            fig.canvas.draw()
            ticks = [t for t in ax.get_yticks() if ax.get_ylim()[0] <= t <= ax.get_ylim()[1]]
            self.assertTrue(ticks)
            self.assertTrue(all(float(t).is_integer() for t in ticks), f"fractional ticks on a job count: {ticks}")
            first, second = ax.get_lines()[:2]
            self.assertNotEqual(list(first.get_ydata()), list(second.get_ydata()),
                                "equal runs drawn on top of each other")
            self.assertNotEqual(first.get_linestyle(), second.get_linestyle())
        finally:
            plt.close(fig)

    def test_title_names_workload_and_time_scale(self):
        rep = load_report_module()
        self.assertEqual(rep.figure_title(self.runs()), "w3-mini.swf, time scale 0.5")


if __name__ == "__main__":
    unittest.main(verbosity=2)
