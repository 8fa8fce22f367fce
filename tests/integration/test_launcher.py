#!/usr/bin/python3
"""Command lines that cannot work. cosched-run on programs that cannot be run: one clear error line and the shell's exit status (127: not
found, 126: found but not executable). A directory used to abort it (uncaught std::__ios_failure, exit 134),
also when found on PATH, and a FIFO with the exec bit made it hang."""
import json
import os
import shutil
import stat
import subprocess
import tempfile
import unittest

from harness import RM, RUN, RmTestCase, program, wait_for


class UnrunnablePrograms(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="cosched-run-")
        self.socket = os.path.join(self.dir, "none.sock")  # no RM: these fail before they would look for one

    def tearDown(self):
        shutil.rmtree(self.dir)

    def run_it(self, *command, env=None):
        full = dict(os.environ, **(env or {}))
        return subprocess.run([RUN, "--socket", self.socket, "--"] + list(command), capture_output=True, text=True,
                              timeout=30, env=full)

    def assert_one_line(self, r, rc, text):
        self.assertEqual(r.returncode, rc, r.stderr)
        lines = r.stderr.splitlines()
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertIn(text, lines[0])

    def test_directory(self):
        d = os.path.join(self.dir, "prog")
        os.mkdir(d, 0o755)
        self.assert_one_line(self.run_it(d), 126, "Is a directory")

    def test_directory_on_path(self):
        os.mkdir(os.path.join(self.dir, "prog"), 0o755)
        self.assert_one_line(self.run_it("prog", env={"PATH": self.dir}), 127, "prog: command not found")

    def test_executable_fifo(self):
        f = os.path.join(self.dir, "fifo")
        os.mkfifo(f)
        os.chmod(f, 0o755)
        self.assert_one_line(self.run_it(f), 126, "not a regular file")

    def test_missing_and_not_executable(self):
        self.assert_one_line(self.run_it(os.path.join(self.dir, "absent")), 127, "No such file or directory")
        self.assert_one_line(self.run_it("cosched-no-such-program", env={"PATH": self.dir}), 127,
                             "command not found")
        f = os.path.join(self.dir, "script")
        with open(f, "w") as out:
            out.write("#!/bin/sh\nexit 0\n")
        os.chmod(f, stat.S_IRUSR | stat.S_IWUSR)
        self.assert_one_line(self.run_it(f), 126, "Permission denied")


def expected_sum(n):
    """sum over i = 1..n of (i mod 7) * i (libompwork.so's ompwork_sum), worked out per residue class:
    the terms i = r, r + 7, ... <= n form an arithmetic series."""
    total = 0
    for r in range(1, 7):
        if r > n:
            break
        count = (n - r) // 7 + 1
        total += r * (count * r + 7 * count * (count - 1) // 2)
    return total


NEVER_REACHED = "never reached the resource manager"


class ProgramRuntimes(RmTestCase):
    """cosched-run decides from every library the program loads, and a program that never reaches the RM
    says so at exit (docs/usage.md, "Run a program under it")."""

    N = 4000000

    def setUp(self):
        super().setUp()
        self.dir = tempfile.mkdtemp(prefix="cosched-runtimes-")

    def tearDown(self):
        super().tearDown()
        shutil.rmtree(self.dir)

    def run_it(self, *args, socket=None, timeout=120, env=None):
        cmd = [RUN, "--socket", socket or os.path.join(self.dir, "no-rm.sock")] + list(args)
        full = {k: v for k, v in dict(os.environ, **(env or {})).items() if v is not None}  # None: unset
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=full)

    def check_sums(self, lines, iterations):
        sums = [int(line.split()[5]) for line in lines if line.startswith("iter ")]
        self.assertEqual(sums, [expected_sum(self.N)] * iterations)

    def listed(self, rm, pid):
        status = json.loads(rm.ctl("status", "--json").stdout)
        return next((j for j in status["jobs"] if j["pid"] == pid), None)

    def wait_registered(self, rm, job, name):
        """Waits for the job's end and checks that the RM registered it; returns its status entry if the job
        was seen listed while it ran (None if it ended first). Polled in-process (rm.job): a cosched-ctl per
        poll costs ~100 ms of CPU in the ASan build, and a CI run there once saw a job end between two polls.
        The decision log's arrival record is the proof of registration that cannot be missed."""
        listed = wait_for(lambda: rm.job(job.pid) or job.proc.poll() is not None, timeout=30,
                          what=f"{name} listed by the RM or ended")
        self.assertEqual(job.wait(), 0, job.stderr())
        arrivals = [d for d in rm.decisions() if d["event"] == "arrival"
                    and any(j.get("pid") == job.pid for j in d.get("jobs", []))]
        self.assertTrue(arrivals, f"{name}: no arrival of pid {job.pid} in the decision log; "
                                  f"stderr: {job.stderr()}")
        return listed if isinstance(listed, dict) else None

    def test_openmp_through_a_library_is_registered_without_gomp(self):
        # omp-via-lib is not built with -fopenmp: libgomp comes through libompwork.so's DT_NEEDED only.
        verbose = self.run_it("-v", "--", program("omp-via-lib"), "1", "1000")
        self.assertEqual(verbose.returncode, 0, verbose.stderr)
        self.assertIn("GNU libgomp: ", verbose.stderr)
        self.assertIn("loaded by omp-via-lib → libompwork.so → libgomp.so.1; libomp is preloaded", verbose.stderr)
        self.assertIn("COSCHED_GOMP=1", verbose.stderr)
        rm = self.start_rm(cpus="0-1")
        iterations = 150
        job = self.start_job([program("omp-via-lib"), str(iterations), str(self.N)], rm, request=2)
        listed = self.wait_registered(rm, job, "omp-via-lib")
        if listed is not None:  # seen while it ran: on any run but a very slow one, at 150 iterations
            self.assertIn("omp-via-lib", listed["command"])
        self.check_sums(job.lines(), iterations)
        self.assertNotIn(NEVER_REACHED, job.stderr())

    def test_program_without_openmp_gets_no_warning(self):
        # With an RM and without one: cosched has nothing to say to a program that runs no OpenMP.
        rm = self.start_rm(cpus="0-1")
        for socket in (rm.socket, None):
            r = self.run_it("--", "/bin/sh", "-c", "echo plain; /bin/true", socket=socket)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stdout, "plain\n")
            self.assertEqual(r.stderr, "")

    def test_program_that_dlopens_libgomp_is_managed_with_no_flag(self):
        # omp-dlopen loads its OpenMP library with dlopen: nothing in its dependencies shows libgomp, as with
        # python3 importing scikit-learn. libomp is preloaded all the same, so libgomp's entry points resolve
        # to it and the program registers.
        verbose = self.run_it("-v", "--", program("omp-dlopen"), "1", "1000")
        self.assertEqual(verbose.returncode, 0, verbose.stderr)
        self.assertIn("libraries it loads; libomp is preloaded, so that a libgomp it loads later", verbose.stderr)
        rm = self.start_rm(cpus="0-1")
        managed = self.start_job([program("omp-dlopen"), "40", str(self.N)], rm, request=2)
        self.wait_registered(rm, managed, "omp-dlopen")
        self.check_sums(managed.lines(), 40)
        self.assertNotIn(NEVER_REACHED, managed.stderr())
        # --gomp, the default now, is still accepted.
        again = self.start_job([program("omp-dlopen"), "40", str(self.N)], rm, request=2, launcher=["--gomp"])
        self.wait_registered(rm, again, "omp-dlopen --gomp")

    def test_no_gomp_program_never_registers_and_says_so_once_at_exit(self):
        # Under --no-gomp omp-dlopen runs on libgomp, which cannot load cosched. It still computes the right
        # sums, and says at exit why it was not managed.
        rm = self.start_rm(cpus="0-1")
        iterations = 20
        job = self.start_job([program("omp-dlopen"), str(iterations), str(self.N)], rm, launcher=["--no-gomp"])
        while job.proc.poll() is None:  # the RM never lists it while it runs
            self.assertIsNone(self.listed(rm, job.pid))
        self.assertEqual(job.wait(), 0, job.stderr())
        self.check_sums(job.lines(), iterations)
        lines = job.stderr().splitlines()
        self.assertEqual(len(lines), 1, job.stderr())
        self.assertIn(f"omp-dlopen (pid {job.pid}) {NEVER_REACHED}: it ran libgomp", lines[0])
        self.assertIn("without LLVM libomp preloaded in front of it (cosched-run --no-gomp", lines[0])
        # --quiet silences it.
        quiet = self.run_it("--quiet", "--no-gomp", "--", program("omp-dlopen"), "1", "1000", socket=rm.socket)
        self.assertEqual((quiet.returncode, quiet.stderr), (0, ""))
        # -v says what --no-gomp did; --gomp and --no-gomp exclude each other.
        verbose = self.run_it("-v", "--no-gomp", "--", program("omp-dlopen"), "1", "1000")
        self.assertIn("; libomp is not preloaded (--no-gomp)", verbose.stderr)
        self.assertNotIn("libomp.so", next(l for l in verbose.stderr.splitlines() if "LD_PRELOAD=" in l))
        both = self.run_it("--gomp", "--no-gomp", "--", "/bin/true")
        self.assertNotEqual(both.returncode, 0)
        self.assertIn("excludes", both.stderr)

    def test_unreachable_rm_is_one_line(self):
        # The RM that could not be reached is named when registration fails, and not again at exit.
        socket = os.path.join(self.dir, "absent.sock")
        r = self.run_it("--", program("omp-via-lib"), "2", "1000", socket=socket)
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stderr.splitlines()
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertIn(f"cosched: no resource manager (cannot connect to {socket}", lines[0])

    def test_unsteerable_runtime_runs_natively_after_one_line(self):
        # A stand-in for Intel's runtime: a library named libiomp5.so; the program prints what cosched-run
        # would have changed in its environment.
        with open(os.path.join(self.dir, "iomp.c"), "w") as f:
            f.write("int omp_get_max_threads(void) { return 1; }\n")
        with open(os.path.join(self.dir, "main.c"), "w") as f:
            f.write('#include <stdio.h>\n#include <stdlib.h>\nint omp_get_max_threads(void);\n'
                    'int main(void) { const char* p = getenv("LD_PRELOAD"); const char* t = getenv("OMP_TOOL_LIBRARIES");\n'
                    '  printf("%d %s %s\\n", omp_get_max_threads(), p ? p : "-", t ? t : "-"); return 0; }\n')
        lib = os.path.join(self.dir, "libiomp5.so")
        prog = os.path.join(self.dir, "iomp-prog")
        subprocess.run(["gcc", "-shared", "-fPIC", "-Wl,-soname,libiomp5.so", "-o", lib,
                        os.path.join(self.dir, "iomp.c")], check=True)
        subprocess.run(["gcc", "-o", prog, os.path.join(self.dir, "main.c"), lib, "-Wl,-rpath," + self.dir],
                       check=True)
        rm = self.start_rm(cpus="0-1")
        r = self.run_it("--", prog, socket=rm.socket, env={"LD_PRELOAD": None, "OMP_TOOL_LIBRARIES": None})
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, "1 - -\n")
        lines = r.stderr.splitlines()
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertIn("loads libiomp5.so (Intel's OpenMP runtime, through iomp-prog → libiomp5.so), which "
                      "cosched cannot steer: it runs natively", lines[0])

    def test_script_is_named_with_verbose(self):
        script = os.path.join(self.dir, "job.sh")
        with open(script, "w") as f:
            f.write("#!/bin/sh\nexit 0\n")
        os.chmod(script, 0o755)
        r = self.run_it("-v", "--", script)
        self.assertEqual(r.returncode, 0, r.stderr)
        notes = [line for line in r.stderr.splitlines() if "is a script" in line]
        self.assertEqual(notes, [f"cosched-run: {script} is a script (#!): the libraries of the programs it runs "
                                 "cannot be read; libomp is preloaded, so that those that use libgomp (gcc builds) "
                                 "are managed"])

    def test_script_running_a_gcc_program_is_managed_with_no_flag(self):
        # The script's own bytes say nothing about libgomp; omp-dlopen, which it runs, hides it too.
        script = os.path.join(self.dir, "job.sh")
        with open(script, "w") as f:
            f.write(f"#!/bin/sh\nexec {program('omp-dlopen')} 40 {self.N}\n")
        os.chmod(script, 0o755)
        rm = self.start_rm(cpus="0-1")
        job = self.start_job([script], rm, request=2)
        self.wait_registered(rm, job, "job.sh")
        self.check_sums(job.lines(), 40)


class RmCommandLine(unittest.TestCase):
    def test_empty_cpu_list_is_an_error(self):
        # `cosched-rm --cpus ''` (an unset shell variable) silently managed every CPU.
        d = tempfile.mkdtemp(prefix="cosched-rm-cli-")
        try:
            for value in ("", " "):
                r = subprocess.run([RM, "--foreground", "--socket", os.path.join(d, "rm.sock"), "--cpus", value],
                                   capture_output=True, text=True, timeout=30)
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertEqual(r.stderr.strip(), f"cosched-rm: --cpus '{value}': empty CPU list")
                self.assertFalse(os.path.exists(os.path.join(d, "rm.sock")))
        finally:
            shutil.rmtree(d)


if __name__ == "__main__":
    unittest.main(verbosity=2)
