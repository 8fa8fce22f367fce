#!/usr/bin/python3
"""Packaged OpenMP applications from Debian, unmodified, under cosched-run: GROMACS (`gmx mdrun`, libgomp
through libgromacs.so.7) and GraphicsMagick (`gm convert`, libgomp through libGraphicsMagick-Q16.so.3).
Neither executable links libgomp itself; the tests check that with readelf/ldd first.

Each runs natively, then under cosched-run with an Equipartition RM and with a PDPA RM on 2 CPUs, while
another job arrives and leaves during the run. The RM must list it (status --json: pid, parallel regions,
its team mode), and its results must equal the native run's, bit for bit: GROMACS's energy file (`-reprod`
makes mdrun bitwise reproducible for one thread count; `-ntomp 2` fixes it) and GraphicsMagick's image.

The applications come from scripts/setup (`gromacs`, `graphicsmagick`); without one, its tests skip and say
which package is missing.

cosched-run finds libgomp in each program's dependency closure (libruntime/launcher/elf_closure.cpp) and
preloads libomp by itself: the tests pass no `--gomp`.
"""
import os
import re
import shutil
import subprocess
import tempfile
import time
import unittest

from harness import RmTestCase, program, thread_names, wait_for

# Threads that wait sleep instead of spinning, natively and under cosched alike: on a shared 2-CPU machine
# (load average 20 during a parallel build) mdrun's spinning barriers made a 2-second native run take over
# two minutes. The results do not depend on it.
APP_ENV = {"OMP_NUM_THREADS": "2", "OMP_WAIT_POLICY": "passive"}
# ~0.3 CPU-s: long enough for a few 0.1-s status polls to see it (a 6-iteration job, 0.15 CPU-s, ended
# between two polls in a CI run), short enough to leave while the application still runs.
OTHER_JOB = ["--serial-fraction", "0", "--iterations", "12", "--work-ms", "25"]
NATIVE_ENV = {k: v for k, v in os.environ.items()
              if not k.startswith(("COSCHED_", "OMP_TOOL", "KMP_")) and k != "LD_PRELOAD"}


def needed(path):
    """The executable's own DT_NEEDED entries (readelf -d)."""
    out = subprocess.run(["readelf", "-d", path], capture_output=True, text=True, check=True).stdout
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out)


def loaded(path):
    """{soname: path} the loader resolves for the program (ldd): the whole closure."""
    out = subprocess.run(["ldd", path], capture_output=True, text=True, check=True).stdout
    return dict(re.findall(r"^\s*(\S+) => (\S+)", out, re.M))


def library_bringing(closure, runtime):
    """The libraries of the closure whose own DT_NEEDED names `runtime`."""
    return [name for name, path in closure.items() if runtime in needed(path)]


class PackagedApp(RmTestCase):
    """Runs one application natively and under cosched-run; subclasses say which and how to compare."""

    tool = None      # the executable's name on PATH
    package = None   # the Debian package that installs it
    library = None   # the library that brings libgomp
    expect_mode = None

    @classmethod
    def setUpClass(cls):
        cls.exe = shutil.which(cls.tool)
        if cls.exe is None:
            raise unittest.SkipTest(f"{cls.tool} is not installed (Debian package {cls.package}; scripts/setup installs it)")
        cls.exe = os.path.realpath(cls.exe)

    def setUp(self):
        super().setUp()
        self.dir = tempfile.mkdtemp(prefix=f"cosched-{self.tool}-")

    def tearDown(self):
        super().tearDown()
        shutil.rmtree(self.dir, ignore_errors=True)

    def check_openmp_comes_through_a_library(self):
        self.assertFalse([n for n in needed(self.exe) if n.startswith(("libgomp", "libomp"))],
                         f"{self.exe} links an OpenMP runtime itself: not the case under test")
        closure = loaded(self.exe)
        self.assertIn("libgomp.so.1", closure, f"{self.exe} does not load libgomp")
        self.assertIn(self.library, library_bringing(closure, "libgomp.so.1"))

    def run_native(self, argv):
        r = subprocess.run(argv, env=dict(NATIVE_ENV, **APP_ENV), capture_output=True, text=True, timeout=300,
                           cwd=self.dir)
        self.assertEqual(r.returncode, 0, r.stderr[-2000:])

    def run_managed(self, policy, argv):
        """Runs argv under cosched-run with a `policy` RM on CPUs 0-1; a second job arrives once it is
        registered and leaves before it ends. Returns what status --json said about it, entry by entry."""
        rm = self.start_rm(policy=policy)
        job = self.start_job(argv, rm, env=APP_ENV, launcher=())
        seen, other_seen, shared = [], [], []
        threads = set()  # the names of its threads while the RM listed it
        other = None
        other_left_first = False
        while job.proc.poll() is None:
            jobs = rm.status()["jobs"]
            mine = [j for j in jobs if j["pid"] == job.pid]
            seen += mine
            threads |= set(thread_names(job.pid)) if mine else set()
            if mine and other is None:
                other = self.start_job([program("amdahl-clang")] + OTHER_JOB, rm, request=2)
            if other is not None:
                others = [j for j in jobs if j["pid"] == other.pid]
                other_seen += [(j, len(mine)) for j in others]
                shared += mine if others else []
                other_left_first = other_left_first or (other.proc.poll() is not None and job.proc.poll() is None)
            time.sleep(0.1)
        self.assertEqual(job.wait(), 0, job.stderr()[-2000:])
        name = " ".join(os.path.basename(a) for a in argv if not a.startswith("-"))[:40]
        self.assertTrue(seen, f"the {policy} RM never listed {name}: {job.stderr()[-2000:]}")
        self.assertIsNotNone(other, "no second job was started")
        self.assertTrue(other_seen and all(both for _, both in other_seen),
                        f"the second job was not listed while {name} ran")
        self.assertEqual(other.wait(timeout=60), 0, other.stderr())
        self.assertTrue(other_left_first, f"the second job did not leave while {name} ran (make the run longer)")
        self.assertGreater(max(j["regions"] for j in seen), 0, f"{name} ran no parallel region under cosched")
        # libcosched followed the RM: its watcher and sampler ran in the job (OpenBLAS's static TLS once kept
        # them from starting, and libcosched ran natively while the RM listed the job: test_tool_threads.py).
        self.assertNotIn("running natively", job.stderr(), f"{name}: libcosched gave up")
        self.assertTrue({"cosched-watcher", "cosched-sampler"} <= threads, f"{name}: threads seen {sorted(threads)}")
        modes = {j["team_mode"] for j in seen if j["team_mode"] != "unknown"}
        if isinstance(self.expect_mode, frozenset):  # modes it may show over its run (set once it sets its team)
            self.assertTrue(modes and modes <= self.expect_mode, f"{name}: team modes {modes}")
        else:
            self.assertEqual(modes, {self.expect_mode})
        if policy == "equip":  # two jobs on 2 CPUs: one CPU each while both are there
            self.assertIn(1, {j["allocated"] for j in shared}, f"{name} kept both CPUs while the other job ran")
        self.last_job = job  # its output, for a subclass that compares it
        return seen


class Gromacs(PackagedApp):
    tool = "gmx"
    package = "gromacs"
    library = "libgromacs.so.7"
    expect_mode = "fixed: omp_set_num_threads"  # mdrun sets its OpenMP thread count from -ntomp
    steps = "1400"  # about 2 s here: the second job (0.3 CPU-s) leaves before mdrun ends, also beside a build

    def skip_unless_mdrun_runs_on_this_cpu(self):
        """Debian's mdrun reads the time stamp counter with rdtscp and refuses to start on a CPU without it
        (a firecracker guest's AMD EPYC here): it cannot run at all, managed or not."""
        with open("/proc/cpuinfo") as f:
            flags = next((line.split(":", 1)[1].split() for line in f if line.startswith("flags")), [])
        if "rdtscp" in flags:
            return
        probe = subprocess.run(self.mdrun("probe"), env=dict(NATIVE_ENV, **APP_ENV), capture_output=True,
                               text=True, timeout=300, cwd=self.dir)
        if probe.returncode != 0 and "rdtscp" in probe.stderr:
            self.skipTest("this CPU lacks the rdtscp instruction, which Debian's gmx mdrun was built to use "
                          "(GMX_USE_RDTSCP): mdrun refuses to start here")

    def build_water_box(self):
        """216 SPC waters in spc216.gro's own box (1.86 nm: an equilibrated box, no overlaps at the
        boundary), PME, 0.8 nm cut-offs, no thermostat (nothing random), energies every 10 steps."""
        gmx = [self.exe, "-quiet"]
        subprocess.run(gmx + ["solvate", "-cs", "spc216.gro", "-box", "1.86206", "1.86206", "1.86206", "-o",
                              "water.gro"], cwd=self.dir, check=True, capture_output=True)
        with open(os.path.join(self.dir, "water.gro")) as f:
            waters = sum(1 for line in f if line[10:15].strip() == "OW")
        self.assertEqual(waters, 216)
        with open(os.path.join(self.dir, "topol.top"), "w") as f:
            f.write('#include "oplsaa.ff/forcefield.itp"\n#include "oplsaa.ff/spc.itp"\n\n'
                    f"[ system ]\nwater\n\n[ molecules ]\nSOL {waters}\n")
        with open(os.path.join(self.dir, "md.mdp"), "w") as f:
            f.write("integrator = md\ndt = 0.002\nnsteps = 100\ncutoff-scheme = Verlet\ncoulombtype = PME\n"
                    "rcoulomb = 0.8\nrvdw = 0.8\ntcoupl = no\npcoupl = no\ngen-vel = no\n"
                    "nstcalcenergy = 10\nnstenergy = 10\nnstlog = 10\n")
        subprocess.run(gmx + ["grompp", "-f", "md.mdp", "-c", "water.gro", "-p", "topol.top", "-o", "md.tpr"],
                       cwd=self.dir, check=True, capture_output=True)

    def mdrun(self, name):
        return [self.exe, "-quiet", "mdrun", "-s", os.path.join(self.dir, "md.tpr"), "-ntmpi", "1", "-ntomp", "2",
                "-pin", "off", "-reprod", "-nsteps", self.steps, "-deffnm", os.path.join(self.dir, name)]

    def energies(self, name):
        """The last energies md.log printed, {term: text} (5 digits: for messages; the check compares the
        energy files byte for byte)."""
        with open(os.path.join(self.dir, f"{name}.log")) as f:
            blocks = f.read().split("   Energies (kJ/mol)\n")
        self.assertGreater(len(blocks), 1, f"no energies in {name}.log")
        lines = blocks[-1].splitlines()
        out = {}
        for names, values in zip(lines[0::2], lines[1::2]):
            if not values.strip():
                break
            keys = [names[i:i + 15].strip() for i in range(0, len(names), 15)]
            out.update(zip(keys, values.split()))
        return out

    def assert_same_energies(self, name):
        with open(os.path.join(self.dir, "native.edr"), "rb") as a, open(os.path.join(self.dir, f"{name}.edr"), "rb") as b:
            same = a.read() == b.read()
        self.assertTrue(same, f"{name}'s energies differ from the native run's: {self.energies(name)} against "
                              f"{self.energies('native')}")
        self.assertIn("Total Energy", self.energies(name))

    def test_mdrun_under_equip_and_pdpa_is_managed_and_reproduces_native_energies(self):
        self.check_openmp_comes_through_a_library()
        self.build_water_box()
        self.skip_unless_mdrun_runs_on_this_cpu()
        self.run_native(self.mdrun("native"))
        for policy in ("equip", "pdpa"):
            with self.subTest(policy=policy):
                seen = self.run_managed(policy, self.mdrun(policy))
                self.assertEqual({j["team"] for j in seen if j["team"] > 0}, {2}, "mdrun's team is -ntomp's 2")
                self.assert_same_energies(policy)
                self.stop_started()


class GraphicsMagick(PackagedApp):
    tool = "gm"
    package = "graphicsmagick"
    library = "libGraphicsMagick-Q16.so.3"
    expect_mode = "fixed: omp_set_num_threads"  # GraphicsMagick sets its thread count at start-up

    def convert(self, out):
        # A generated gradient (no input file), blurred, sharpened and resized: each step is an OpenMP loop
        # over rows whose pixels do not depend on the team size, so the image is the same for any team.
        # 2000x2000: long enough that the second job registers and leaves while it runs, also when a build
        # beside the suite slows the second job's start (at 1400x1400 a loaded run ended first).
        return [self.exe, "convert", "-size", "2000x2000", "gradient:red-blue", "-blur", "0x5", "-sharpen", "0x2",
                "-resize", "80%", "-blur", "0x5", os.path.join(self.dir, out)]

    def test_convert_under_equip_and_pdpa_is_managed_and_writes_the_native_image(self):
        self.check_openmp_comes_through_a_library()
        self.run_native(self.convert("native.ppm"))
        with open(os.path.join(self.dir, "native.ppm"), "rb") as f:
            native = f.read()
        for policy in ("equip", "pdpa"):
            with self.subTest(policy=policy):
                self.run_managed(policy, self.convert(f"{policy}.ppm"))
                with open(os.path.join(self.dir, f"{policy}.ppm"), "rb") as f:
                    self.assertTrue(f.read() == native, f"the image written under {policy} differs from the native one")
                self.stop_started()


if __name__ == "__main__":
    unittest.main()
