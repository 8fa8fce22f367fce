#!/usr/bin/python3
"""Python programs whose OpenMP comes at import, under plain cosched-run (no flag): scikit-learn's KMeans,
a PyTorch convolution, XGBoost training and NumPy matrix products on OpenBLAS's OpenMP build, all from
Debian 12's packages. python3 itself links no OpenMP runtime: libgomp arrives with an extension module,
where cosched-run cannot see it. cosched-run preloads LLVM's libomp in front of every program that does
not bring libomp itself (libruntime/launcher/launch_env.cpp), so libgomp's GOMP_* calls land in libomp,
which loads libcosched.

Each program runs natively, then under an Equipartition RM and a PDPA RM on 2 CPUs while another job
arrives and leaves (test_packaged_apps.PackagedApp.run_managed): the RM must list it, with parallel
regions and the team mode it reads from the program, and what it prints must equal the native run's,
line for line. The packages come from scripts/setup; without one, its test skips and names it.
"""
import os
import subprocess
import unittest

import test_packaged_apps as packaged

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "python_apps")
PYTHON = "/usr/bin/python3"  # Debian's, which sees Debian's packages


class PythonApp(packaged.PackagedApp):
    tool = "python3"
    package = "python3"
    script = None
    args = ()

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        status = subprocess.run(["dpkg-query", "-W", "-f=${Status}", cls.package], capture_output=True, text=True)
        if "install ok installed" not in status.stdout:
            raise unittest.SkipTest(f"Debian package {cls.package} is not installed (scripts/setup installs it)")

    def argv(self):
        return [PYTHON, os.path.join(HERE, self.script)] + [str(a) for a in self.args]

    def native_output(self):
        r = subprocess.run(self.argv(), env=dict(packaged.NATIVE_ENV, **packaged.APP_ENV), capture_output=True,
                           text=True, timeout=300, cwd=self.dir)
        self.assertEqual(r.returncode, 0, r.stderr[-2000:])
        lines = r.stdout.splitlines()
        self.assertEqual(lines[-1], "libgomp mapped: True", f"{self.script} ran no libgomp: not the case under test")
        return lines

    def check_python_links_no_openmp(self):
        closure = packaged.loaded(os.path.realpath(PYTHON))
        self.assertFalse([n for n in closure if n.startswith(("libgomp", "libomp"))],
                         f"{PYTHON} loads an OpenMP runtime itself: not the case under test")

    def test_managed_with_no_flag_and_prints_the_native_results(self):
        self.check_python_links_no_openmp()
        native = self.native_output()
        for policy in ("equip", "pdpa"):
            with self.subTest(policy=policy):
                seen = self.run_managed(policy, self.argv())
                self.assertEqual(self.last_job.lines(), native, f"{self.script} under {policy} printed other results")
                self.assertNotIn("never reached the resource manager", self.last_job.stderr())
                self.stop_started()


class SklearnKMeans(PythonApp):
    package = "python3-sklearn"
    script = "kmeans.py"
    args = (6,)
    # Resizable until the library sets its thread count (omp_set_num_threads, a num_threads clause).
    expect_mode = frozenset({"resizable", "fixed: omp_set_num_threads", "fixed: num_threads clause"})


class TorchConv(PythonApp):
    package = "python3-torch"
    script = "torch_conv.py"
    args = (30,)
    # Resizable until the library sets its thread count (omp_set_num_threads, a num_threads clause).
    expect_mode = frozenset({"resizable", "fixed: omp_set_num_threads", "fixed: num_threads clause"})


class XGBoostTrain(PythonApp):
    package = "python3-xgboost"
    script = "xgb_train.py"
    args = (60,)
    # Resizable until the library sets its thread count (omp_set_num_threads, a num_threads clause).
    expect_mode = frozenset({"resizable", "fixed: omp_set_num_threads", "fixed: num_threads clause"})


class NumpyOpenBlas(PythonApp):
    package = "libopenblas0-openmp"
    script = "numpy_matmul.py"
    args = (20,)
    # Resizable until the library sets its thread count (omp_set_num_threads, a num_threads clause).
    expect_mode = frozenset({"resizable", "fixed: omp_set_num_threads", "fixed: num_threads clause"})


del PythonApp  # a base, not a test: only its subclasses run

if __name__ == "__main__":
    unittest.main()
