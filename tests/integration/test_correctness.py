#!/usr/bin/python3
"""A resized team must never change a program's result (docs/architecture.md, "Team sizes a program can
observe"). Programs with the habits of real codes (examples/correctness/team_patterns.c), built with clang and
gcc, verify against their serial reference under PDPA's baseline and measurement, under Equipartition and DSS
while other jobs arrive and leave, and a property test checks the guarantees from inside thousands of regions
while grants change every few milliseconds.

The jobs ask for 4 threads on this 2-CPU machine (OMP_NUM_THREADS=4): a read of omp_get_max_threads() must
return 4 while the grant is 1 or 2, so every guarantee is exercised (with a request of 2 the smallest team
cosched may choose, 2, would already be the request)."""
import threading
import time
import unittest

from harness import RmTestCase, program, wait_for

PATTERNS = ["slots", "startup", "setnum", "roles", "branch", "nested"]
EXTRA = {"setnum": ["--threads", "3"]}  # neither the grant (1 or 2) nor the program's value (4)
COMPILERS = ["clang", "gcc"]
NEIGHBOUR = ["--iterations", "100000", "--work-ms", "20", "--quiet"]


def teams_of(line):
    """{team: count} from a 'verified regions R teams T:K ...' line."""
    parts = line.split()
    out = {}
    for p in parts[parts.index("teams") + 1:]:
        t, k = p.split(":")
        out[int(t)] = int(k)
    return out


class Churn:
    """Short malleable jobs that arrive and leave one after another, so the grants of the job under test
    change every few hundred milliseconds (arrival: 2 → 1 CPU, departure: 1 → 2)."""

    def __init__(self, case, rm):
        self.case, self.rm = case, rm
        self.stop = threading.Event()
        self.started = 0
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        while not self.stop.is_set():
            job = self.case.start_job([program("amdahl-clang"), "--iterations", "8", "--work-ms", "20", "--quiet",
                                       "--units-per-ms", "5000"], self.rm, request=2, quiet=True,
                                      launcher=["--malleable"])
            self.started += 1
            job.wait(timeout=60)
            self.stop.wait(0.1)

    def close(self):
        self.stop.set()
        self.thread.join(timeout=90)


class TeamGuarantees(RmTestCase):
    def run_pattern(self, rm, binary, pattern, iterations=300, extra=(), env=None, launcher=()):
        job = self.start_job([program(binary), "--pattern", pattern, "--iterations", str(iterations), "--quiet"]
                             + list(extra), rm, env=dict({"OMP_NUM_THREADS": "4"}, **(env or {})), launcher=launcher)
        rc = job.wait(timeout=240)
        out = job.lines()
        last = out[-1] if out else ""
        self.assertEqual(rc, 0, f"{binary} --pattern {pattern}: {last}\n{job.stderr()}")
        self.assertTrue(last.startswith("verified"), f"{binary} --pattern {pattern}: {last}")
        return teams_of(last)

    def all_patterns_verify(self, rm):
        seen = {}
        for compiler in COMPILERS:
            for pattern in PATTERNS:
                seen[(compiler, pattern)] = self.run_pattern(rm, f"team-patterns-{compiler}", pattern,
                                                             extra=EXTRA.get(pattern, ()))
        return seen

    def test_pdpa_baseline_and_measurement(self):
        rm = self.start_rm("--baseline", "always", policy="pdpa", quantum_ms=50)
        self.start_job([program("amdahl-clang"), "--serial-fraction", "0.5"] + NEIGHBOUR, rm, request=2, quiet=True,
                       launcher=["--malleable"])
        seen = self.all_patterns_verify(rm)
        # Team sizes seen inside the regions: after a read, the value read (4); never above it.
        for (compiler, pattern), teams in seen.items():
            self.assertLessEqual(max(teams), 4, (compiler, pattern, teams))
            if pattern == "slots":
                self.assertEqual(set(teams), {4}, (compiler, teams))
            if pattern == "setnum":
                self.assertEqual(set(teams), {3}, (compiler, teams))
            if pattern == "roles":
                self.assertEqual(set(teams), {2}, (compiler, teams))

    def test_equipartition_while_jobs_arrive_and_leave(self):
        rm = self.start_rm(policy="equip", quantum_ms=50)
        churn = Churn(self, rm)
        try:
            seen = self.all_patterns_verify(rm)
        finally:
            churn.close()
        self.assertGreater(churn.started, 3, "the neighbours came and went")
        # The start-up pattern read 4 once: its later regions are cosched's (2 threads on 1 or 2 CPUs).
        for compiler in COMPILERS:
            self.assertIn(2, seen[(compiler, "startup")], seen[(compiler, "startup")])

    def test_dss_while_jobs_arrive_and_leave(self):
        rm = self.start_rm(policy="dss", quantum_ms=50)
        churn = Churn(self, rm)
        try:
            self.all_patterns_verify(rm)
        finally:
            churn.close()

    def test_equal_efficiency_while_jobs_arrive_and_leave(self):
        rm = self.start_rm(policy="equal_eff", quantum_ms=50)
        churn = Churn(self, rm)
        try:
            self.all_patterns_verify(rm)
        finally:
            churn.close()

    def test_threadprivate_data_keeps_one_team(self):
        rm = self.start_rm(policy="equip", quantum_ms=50)
        churn = Churn(self, rm)
        try:
            for compiler in COMPILERS:
                teams = self.run_pattern(rm, f"team-threadprivate-{compiler}", "threadprivate", iterations=200)
                self.assertEqual(set(teams), {4}, (compiler, teams))
        finally:
            churn.close()

    def test_property_guarantees_hold_at_every_region(self):
        # Grants change every few ms: a 20 ms quantum and neighbours arriving and leaving all the time. Every
        # region checks rules 1, 2 and 7 from inside (team_patterns --pattern property).
        rm = self.start_rm(policy="equip", quantum_ms=20)
        churn = Churn(self, rm)
        try:
            for compiler in COMPILERS:
                teams = self.run_pattern(rm, f"team-patterns-{compiler}", "property", iterations=4000)
                self.assertEqual(set(teams), {2, 4}, f"{compiler}: cosched's team (2) and the value read (4)")
                teams = self.run_pattern(rm, f"team-patterns-{compiler}", "property", iterations=4000,
                                         extra=["--allow-one"], launcher=["--malleable"])
                self.assertLessEqual(max(teams), 4, teams)
        finally:
            churn.close()


class RealIterationStructure(RmTestCase):
    """The SelfAnalyzer on the structure of real codes: a time step of 490 regions in inner loops of periods 1
    to 26, plus 2 regions taken only when the team read in serial code is above 1 (a hydrodynamics proxy)."""

    def test_a_step_of_hundreds_of_regions_is_locked_whatever_the_grant(self):
        rm = self.start_rm("--baseline", "always", policy="equip", quantum_ms=50)
        job = self.start_job([program("team-patterns-gcc"), "--pattern", "steps", "--iterations", "100000",
                              "--quiet"], rm, env={"OMP_NUM_THREADS": "4"})
        j = wait_for(lambda: (lambda s: s if s and s["period"] > 400 else None)(rm.job(job.pid)), timeout=60,
                     interval=0.1, what="the time step locked")
        # The program reads 4 in serial code whatever the grant, so its two team-only regions are always run.
        self.assertEqual(j["period"], 492, j)
        # Neighbours come and go (grants 2 -> 1 -> 2): the step stays locked at the same period, and no
        # measurement is thrown away because of its structure (a restart for noisy times may happen).
        def loop_restarts_since(t0):
            why = rm.request({"cmd": "why", "job": j["id"]})["decisions"]
            return [d for d in why if d["t"] >= t0 and d["reason"] == "measurement restarted: another loop was locked"]

        t0 = rm.status()["uptime_s"]
        churn = Churn(self, rm)
        try:
            time.sleep(3)
            periods = set()
            for _ in range(20):
                periods.add(rm.job(job.pid)["period"])
                time.sleep(0.1)
            restarts = loop_restarts_since(t0)
        finally:
            churn.close()
        self.assertEqual(periods, {492})
        self.assertEqual(restarts, [], "the structure changed while the grants did")


class TeamModeIsReported(RmTestCase):
    """status --json and why say, per job, whether cosched may resize its teams, and why not."""

    def mode_of(self, rm, args, launcher=(), env=None):
        job = self.start_job(args, rm, env=dict({"OMP_NUM_THREADS": "4"}, **(env or {})), launcher=launcher)
        j = wait_for(lambda: (lambda s: s if s and s["regions"] > 20 else None)(rm.job(job.pid)), timeout=30,
                     what=f"regions of {args[0]}")
        job.kill()
        return j

    def test_each_reason(self):
        rm = self.start_rm(policy="equip")
        long = ["--iterations", "100000", "--quiet"]
        cases = [
            ([program("team-patterns-clang"), "--pattern", "startup"] + long, (), None, "resizable", True),
            ([program("team-patterns-gcc"), "--pattern", "setnum"] + long, (), None, "fixed: omp_set_num_threads",
             False),
            ([program("team-patterns-clang"), "--pattern", "roles"] + long, (), None, "fixed: num_threads clause",
             False),
            ([program("team-patterns-gcc"), "--pattern", "roles"] + long, (), None, "fixed: num_threads clause",
             False),
            ([program("team-threadprivate-gcc"), "--pattern", "threadprivate"] + long, (), None,
             "fixed: threadprivate", False),
            ([program("team-threadprivate-clang"), "--pattern", "threadprivate"] + long, (), None,
             "fixed: threadprivate", False),
            ([program("team-patterns-clang"), "--pattern", "startup"] + long, ("--fixed-team",), None,
             "fixed: --fixed-team", False),
            ([program("team-patterns-clang"), "--pattern", "startup"] + long, ("--no-wrap",), None,
             "fixed: no interposer", False),
            ([program("team-patterns-gcc"), "--pattern", "startup"] + long, ("--malleable",), None, "malleable", True),
            ([program("team-patterns-gcc"), "--pattern", "startup"] + long, (), {"OMP_DYNAMIC": "true"}, "malleable",
             True),
        ]
        for args, launcher, env, mode, resizable in cases:
            j = self.mode_of(rm, args, launcher, env)
            self.assertEqual((j["team_mode"], j["resizable"]), (mode, resizable), (args, launcher, env, j))

    def test_why_says_when_the_team_differs_from_the_grant(self):
        rm = self.start_rm(policy="equip")
        job = self.start_job([program("team-patterns-gcc"), "--pattern", "setnum", "--threads", "3",
                              "--iterations", "100000", "--quiet"], rm, env={"OMP_NUM_THREADS": "4"})
        j = wait_for(lambda: (lambda s: s if s and s["team"] == 3 else None)(rm.job(job.pid)), timeout=30,
                     what="the program's team of 3")
        reasons = [d["reason"] for d in rm.request({"cmd": "why", "job": j["id"]})["decisions"]]
        self.assertIn("team fixed: omp_set_num_threads", reasons)
        self.assertTrue(any("formed team 3 differs from the 2 CPU(s) granted" in r for r in reasons), reasons)


class LauncherSaysWhatItSets(RmTestCase):
    def test_verbose_prints_the_environment(self):
        job = self.start_job([program("team-patterns-gcc"), "--pattern", "slots", "--iterations", "1", "--quiet"],
                             socket_path="/nonexistent/cosched.sock", quiet=True, launcher=["-v"])
        self.assertEqual(job.wait(), 0, job.stderr())
        err = job.stderr()
        for name in ("OMP_TOOL_LIBRARIES=", "KMP_AFFINITY=disabled", "LD_PRELOAD=", "COSCHED_SOCKET="):
            self.assertIn(f"cosched-run: {name}", err)


if __name__ == "__main__":
    unittest.main(verbosity=2)
