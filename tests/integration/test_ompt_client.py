#!/usr/bin/python3
"""Other OMPT tools keep working under cosched. libomp starts one tool; cosched-run gives that place to
libcosched and moves the user's OMP_TOOL_LIBRARIES to COSCHED_CLIENT_TOOL_LIBRARIES, and libcosched starts
the user's tool as its client and forwards to it (libruntime/ompt_client.hpp). Before, the user's tool never
loaded under cosched-run, and nothing said so.

The client is tools/ompt_region_counter.c (counts parallel regions, keeps state in the OMPT data words,
prints at finalize), and LLVM's Archer (libarcher.so, Debian's libomp-14-dev), a real OMPT tool: with a
ThreadSanitizer program it tells TSan about OpenMP's synchronisation, and without it TSan reports races
that are not there."""
import json
import os
import re
import shutil
import subprocess
import unittest

from harness import BIN, BUILD, RUN, RmTestCase, program, wait_for

COUNTER = os.path.join(BIN, "libompt_region_counter.so")
ARCHER = "/usr/lib/llvm-14/lib/libarcher.so"
ITERATIONS, REGIONS = 60, 3  # amdahl runs exactly ITERATIONS * REGIONS parallel regions (no calibration)
AMDAHL_ARGS = ["--iterations", str(ITERATIONS), "--regions", str(REGIONS), "--work-ms", "20",
               "--units-per-ms", "3000", "--quiet"]
COUNTER_LINE = re.compile(r"region-counter: parallel_begin (\d+) parallel_end (\d+) data_ok (\d+) "
                          r"implicit_begin (\d+) implicit_end (\d+) threads (\d+) get_callback (\d)")
NOT_CHAINED = "is not chained behind libcosched and will not run"


def counter_report(stderr):
    """The client's finalize line as numbers; fails if it printed none or several."""
    found = COUNTER_LINE.findall(stderr)
    if len(found) != 1:
        raise AssertionError(f"expected one region-counter line, got {len(found)}:\n{stderr}")
    keys = ("begin", "end", "data_ok", "implicit_begin", "implicit_end", "threads", "get_callback")
    return dict(zip(keys, map(int, found[0])))


def native(args, env):
    full = dict(os.environ, OMP_NUM_THREADS="2")
    full.update(env)
    return subprocess.run(args, capture_output=True, text=True, timeout=120, env=full)


class ClientTool(RmTestCase):
    def assert_complete(self, report, regions):
        """Every region seen begin and end, every data word the client wrote came back to it."""
        self.assertEqual(report["begin"], regions, report)
        self.assertEqual(report["end"], regions, report)
        self.assertEqual(report["implicit_begin"], report["implicit_end"], report)
        self.assertGreaterEqual(report["implicit_begin"], regions, report)
        self.assertEqual(report["data_ok"], report["end"] + 2 * report["implicit_end"] + 1, report)
        self.assertEqual(report["get_callback"], 1, report)

    def run_managed(self, rm, args, env, launcher=()):
        """Runs `args` under cosched-run; returns (stderr, the job's status while it ran)."""
        job = self.start_job(args, rm=rm, env=dict({"OMP_NUM_THREADS": "2", "COSCHED_DEBUG": "1"}, **env),
                             launcher=launcher)

        def listed():
            jobs = json.loads(rm.ctl("status", "--json").stdout)["jobs"]
            return next((j for j in jobs if j["pid"] == job.pid), None)

        seen = wait_for(listed, timeout=30, interval=0.05, what="the job in cosched-ctl status --json")
        self.assertEqual(job.wait(), 0, job.stderr())
        return job.stderr(), seen

    def test_client_sees_every_region_while_the_job_is_managed(self):
        amdahl = [program("amdahl-clang")] + AMDAHL_ARGS
        alone = native(amdahl, {"OMP_TOOL_LIBRARIES": COUNTER})
        self.assertEqual(alone.returncode, 0, alone.stderr)
        native_report = counter_report(alone.stderr)
        self.assert_complete(native_report, ITERATIONS * REGIONS)

        rm = self.start_rm(cpus="0-1")
        stderr, seen = self.run_managed(rm, amdahl, {"OMP_TOOL_LIBRARIES": COUNTER})
        self.assertEqual(seen["requested"], 2, seen)
        self.assertGreaterEqual(seen["allocated"], 1, seen)
        report = counter_report(stderr)
        self.assertEqual(report["begin"], native_report["begin"], stderr)
        self.assert_complete(report, ITERATIONS * REGIONS)
        self.assertNotIn(NOT_CHAINED, stderr)
        # libcosched saw the same regions (COSCHED_DEBUG summary, printed by our finalize), and the client's
        # finalize ran first.
        summary = re.search(r"cosched: job \d+: (\d+) regions", stderr)
        self.assertIsNotNone(summary, stderr)
        self.assertEqual(int(summary.group(1)), ITERATIONS * REGIONS, stderr)
        self.assertLess(stderr.index("region-counter: parallel_begin"), summary.start(), stderr)

    def test_gcc_program_moved_onto_libomp_gets_its_client(self):
        # libgomp has no OMPT: natively the tool sees nothing; under cosched-run the program runs on libomp,
        # and the client sees every region (worked out by hand: ITERATIONS * REGIONS).
        rm = self.start_rm(cpus="0-1")
        stderr, _ = self.run_managed(rm, [program("amdahl-gcc")] + AMDAHL_ARGS, {"OMP_TOOL_LIBRARIES": COUNTER})
        self.assert_complete(counter_report(stderr), ITERATIONS * REGIONS)

    def test_relinked_program_chains_omp_tool_libraries(self):
        # A program that links libcosched keeps OMP_TOOL_LIBRARIES; libomp starts libcosched from the
        # program's address space without reading it, so libcosched reads the list itself.
        rm = self.start_rm(cpus="0-1")
        stderr, _ = self.run_managed(rm, [program("amdahl-clang-relinked")] + AMDAHL_ARGS,
                                     {"OMP_TOOL_LIBRARIES": COUNTER})
        self.assert_complete(counter_report(stderr), ITERATIONS * REGIONS)

    def test_client_runs_when_the_job_runs_natively(self):
        # No RM at the socket: libcosched stays inactive, the client still runs (all its callbacks direct).
        sock = os.path.join(self.start_rm(cpus="0-1").dir, "nobody-here.sock")
        r = subprocess.run([RUN, "--socket", sock, "--", program("amdahl-clang")] + AMDAHL_ARGS,
                           capture_output=True, text=True, timeout=120,
                           env=dict(os.environ, OMP_NUM_THREADS="2", OMP_TOOL_LIBRARIES=COUNTER))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assert_complete(counter_report(r.stderr), ITERATIONS * REGIONS)

    def test_clients_that_cannot_be_chained_are_named(self):
        rm = self.start_rm(cpus="0-1")
        amdahl = [program("amdahl-clang")] + AMDAHL_ARGS
        missing = os.path.join(rm.dir, "libmissing.so")
        # As libomp does with OMP_TOOL_LIBRARIES, the first library that starts is the client: here the one
        # after two that cannot be (not there; no ompt_start_tool), each named in one line.
        stderr, _ = self.run_managed(rm, amdahl, {"OMP_TOOL_LIBRARIES": f"{missing}:libm.so.6:{COUNTER}"})
        lines = [line for line in stderr.splitlines() if NOT_CHAINED in line]
        self.assertEqual(len(lines), 2, stderr)
        self.assertIn(missing, lines[0])
        self.assertIn("libm.so.6", lines[1])
        self.assertIn("has no ompt_start_tool", lines[1])
        self.assert_complete(counter_report(stderr), ITERATIONS * REGIONS)
        # Another copy of libcosched would register the job twice.
        copy = os.path.join(rm.dir, "libcosched-copy.so")
        shutil.copy(os.path.join(BUILD, "libruntime/libcosched.so"), copy)
        stderr, _ = self.run_managed(rm, amdahl, {"OMP_TOOL_LIBRARIES": copy})
        lines = [line for line in stderr.splitlines() if NOT_CHAINED in line]
        self.assertEqual(len(lines), 1, stderr)
        self.assertIn("another copy of libcosched", lines[0])
        self.assertEqual(len(re.findall(r"cosched: job \d+: \d+ regions", stderr)), 1, stderr)
        # A tool that declines to start.
        stderr, _ = self.run_managed(rm, amdahl, {"OMP_TOOL_LIBRARIES": COUNTER, "REGION_COUNTER_DECLINE": "1"})
        lines = [line for line in stderr.splitlines() if NOT_CHAINED in line]
        self.assertEqual(len(lines), 1, stderr)
        self.assertIn("returned NULL", lines[0])
        self.assertNotIn("region-counter:", stderr)

    def test_verbose_names_the_clients(self):
        rm = self.start_rm(cpus="0-1")
        r = subprocess.run([RUN, "-v", "--socket", rm.socket, "--", program("amdahl-clang"), "--iterations", "1",
                            "--work-ms", "1", "--units-per-ms", "100", "--quiet"],
                           capture_output=True, text=True, timeout=60,
                           env=dict(os.environ, OMP_NUM_THREADS="2", OMP_TOOL_LIBRARIES=COUNTER))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(f"cosched-run: OMPT tools started by libcosched as its clients: {COUNTER}", r.stderr)
        self.assertIn(f"cosched-run: COSCHED_CLIENT_TOOL_LIBRARIES={COUNTER}", r.stderr)
        self.assertEqual(counter_report(r.stderr)["begin"], 1)


class Archer(RmTestCase):
    """LLVM's Archer chained behind libcosched, with ThreadSanitizer programs."""

    def setUp(self):
        super().setUp()
        if not os.path.exists(ARCHER):
            self.skipTest(f"{ARCHER} is not installed (Debian libomp-14-dev)")
        # TSan's own advice with Archer: libomp is not instrumented.
        self.env = {"ARCHER_OPTIONS": "verbose=1", "TSAN_OPTIONS": "ignore_noninstrumented_modules=1",
                    "OMP_NUM_THREADS": "2"}

    def races(self, stderr):
        return stderr.count("WARNING: ThreadSanitizer: data race")

    def test_archer_chained_keeps_tsan_quiet_on_a_race_free_program(self):
        prog = [program("tsan-reduction")]
        without = native(prog, dict(self.env, OMP_TOOL="disabled"))
        self.assertGreater(self.races(without.stderr), 0,
                           "without Archer TSan should report libomp's synchronisation as races")
        alone = native(prog, dict(self.env, OMP_TOOL_LIBRARIES=ARCHER))
        self.assertIn("Archer detected OpenMP application with TSan", alone.stdout)
        self.assertEqual(self.races(alone.stderr), 0, alone.stderr)

        rm = self.start_rm(cpus="0-1")
        job = self.start_job(prog, rm=rm, env=dict(self.env, OMP_TOOL_LIBRARIES=ARCHER))
        self.assertEqual(job.wait(), 0, job.stderr())
        # The program may end between two status polls on a loaded machine: the decision log keeps its arrival.
        arrivals = [d for d in rm.decisions() if d["event"] == "arrival" and
                    any(j.get("pid") == job.pid for j in d.get("jobs", []))]
        self.assertTrue(arrivals, f"the TSan job (pid {job.pid}) never registered with the RM")
        stderr = job.stderr()
        self.assertIn("Archer detected OpenMP application with TSan", "\n".join(job.lines()))
        self.assertNotIn(NOT_CHAINED, stderr)
        self.assertEqual(self.races(stderr), 0, stderr)
        self.assertEqual(job.lines()[-1], alone.stdout.splitlines()[-1])

    def test_archer_chained_still_finds_a_real_race(self):
        prog = [program("tsan-race")]
        alone = native(prog, dict(self.env, OMP_TOOL_LIBRARIES=ARCHER))
        self.assertEqual(self.races(alone.stderr), 1, alone.stderr)
        rm = self.start_rm(cpus="0-1")
        job = self.start_job(prog, rm=rm, env=dict(self.env, OMP_TOOL_LIBRARIES=ARCHER))
        job.wait()
        self.assertIn("Archer detected OpenMP application with TSan", "\n".join(job.lines()))
        self.assertEqual(self.races(job.stderr()), 1, job.stderr())

    def test_archer_declining_on_a_program_without_tsan_is_named(self):
        rm = self.start_rm(cpus="0-1")
        job = self.start_job([program("amdahl-clang")] + AMDAHL_ARGS, rm=rm,
                             env=dict(self.env, OMP_TOOL_LIBRARIES=ARCHER))
        self.assertEqual(job.wait(), 0, job.stderr())
        self.assertIn("Archer detected OpenMP application without TSan stopping operation", "\n".join(job.lines()))
        lines = [line for line in job.stderr().splitlines() if NOT_CHAINED in line]
        self.assertEqual(len(lines), 1, job.stderr())
        self.assertIn(ARCHER, lines[0])
        self.assertIn("returned NULL", lines[0])


if __name__ == "__main__":
    unittest.main(verbosity=2)
