#!/usr/bin/python3
"""Co-scheduling policies (bas, fair, perf-fair, symbiotic) with real processes under the real RM.

- The learned interference matrix orders a known heavy pair above the light ones. Memory contention on this
  2-vCPU VM is a few percent, below the noise of a 100 ms rate, so the rates come from a replay file
  (--rate-sensor replay:FILE: two BBMAs run at half speed next to each other, 5 % slower next to an nBBMA,
  the nBBMAs unaffected), while everything else is real: the microbenchmarks run, the RM stops and resumes them,
  places the chosen groups, samples each job's interval with the partners its group really had, and the policy
  learns only from those samples. A wrong partner set, a slowdown inverted or a pair never explored fails it.
- With the real rate sensor (auto) the microbenchmarks' cosched_report_work gives app-work rates, each job gets
  a rate alone from an estimation quantum, and the chosen groups are in the decision log.
- On a modelled SMT machine (--topology 'package:1 core:2 pu:2') the members of a group get sibling PUs.
"""
import json
import os
import tempfile
import unittest

from harness import RmTestCase, program, wait_for

HIGH, LOW = "bbma", "nbbma"
# What the replay file says, in words: ids 1 and 2 are the BBMAs (started first), 3 and 4 the nBBMAs.
REPLAY = """\
alone * 1000
with 1 2 2.0
with 2 1 2.0
with 1 * 1.05
with 2 * 1.05
"""


def ranked(rm):
    return json.loads(rm.ctl("pairs", "--json").stdout)["ranked"]


class LearnedPairs(RmTestCase):
    def run_four(self, policy, *extra, seconds=14):
        with tempfile.NamedTemporaryFile("w", suffix=".rates", delete=False) as f:
            f.write(REPLAY)
        self.addCleanup(os.unlink, f.name)
        rm = self.start_rm("--rate-sensor", f"replay:{f.name}", *extra, policy=policy)
        env = {"OMP_NUM_THREADS": "1"}
        jobs = []
        for n, kind in enumerate((HIGH, HIGH, LOW, LOW), start=1):
            job = self.start_job([program(kind), "--seconds", str(seconds), "--quiet"], rm, request=1, env=env)
            j = wait_for(lambda: rm.job(job.pid), what=f"{kind} registered")
            self.assertEqual(j["id"], n, "the replay file names the jobs by their ids 1-4, in start order")
            jobs.append(job)
        return rm, jobs

    def check_ranking(self, rm, jobs):
        # Before the jobs end: the policy forgets a job that leaves.
        order = wait_for(lambda: (lambda r: r if len(r) == 6 else None)(ranked(rm)), timeout=30, interval=0.5,
                         what="all six pairs measured both ways")
        print("pairs, worst first: " + ", ".join(f"{p['jobs'][0]}+{p['jobs'][1]} {p['cost']:.3f}" for p in order))
        self.assertEqual(order[0]["jobs"], [1, 2], "BBMA+BBMA must be the worst pair")
        self.assertAlmostEqual(order[0]["cost"], 4.0, delta=0.1)  # ŝ = 2 both ways
        light = next(p for p in order if p["jobs"] == [3, 4])
        self.assertAlmostEqual(light["cost"], 2.0, delta=0.05)
        self.assertGreater(order[0]["cost"], light["cost"] + 1.5)
        table = rm.ctl("pairs").stdout
        self.assertRegex(table, r"1\+2\s+4\.\d+")
        status = rm.status()
        self.assertEqual(status["rate_sensor"].split(":")[0], "replay")
        for j in status["jobs"]:
            self.assertEqual(j["rate"]["source"], "replay")
        for job in jobs:
            self.assertEqual(job.wait(timeout=120), 0)

    def groups_logged(self, rm):
        groups = [d["groups"] for d in rm.decisions() if "groups" in d]
        self.assertGreater(len(groups), 10, "the decision log names the chosen groups")
        for g in groups:
            self.assertLessEqual(sum(len(x) for x in g), 2, f"2 CPUs without SMT: {g}")
        return groups

    def test_symbiotic_ranks_bbma_pair_worst_and_avoids_it(self):
        rm, jobs = self.run_four("symbiotic")
        self.check_ranking(rm, jobs)
        self.groups_logged(rm)
        # Quanta with all four jobs present: from the last arrival to the first departure.
        log = rm.decisions()
        first = max(i for i, d in enumerate(log) if d["event"] == "arrival")
        last = min((i for i, d in enumerate(log) if d["event"] == "departure"), default=len(log))
        together = {}
        for d in log[first:last]:
            if d["event"] != "quantum" or "groups" not in d:
                continue
            for x in d["groups"]:
                if len(x) == 2:
                    key = "+".join(str(i) for i in sorted(x))
                    together[key] = together.get(key, 0) + 1
        print(f"groups chosen at quantum ticks with all four jobs present: {together}")
        # After learning, BBMA+BBMA runs only when exploration revisits it (stale after 8 s).
        mixed = sum(together.get(k, 0) for k in ("1+3", "1+4", "2+3", "2+4"))
        self.assertGreater(mixed, 3 * together.get("1+2", 0), together)

    def test_perf_fair_with_exploration_ranks_bbma_pair_worst(self):
        rm, jobs = self.run_four("perf-fair", "--param", "explore=4")
        self.check_ranking(rm, jobs)
        self.groups_logged(rm)
        # Estimation quanta happened: every job got a rate alone (1000/s from the file).
        for j in rm.status()["pairs"]["jobs"]:
            self.assertAlmostEqual(j["alone_per_s"], 1000.0, delta=1e-6)


class RealRates(RmTestCase):
    def test_app_work_rates_and_rates_alone(self):
        rm = self.start_rm(policy="symbiotic")
        env = {"OMP_NUM_THREADS": "1"}
        jobs = [self.start_job([program(k), "--seconds", "14", "--quiet"], rm, request=1, env=env)
                for k in (HIGH, LOW, LOW)]
        for job in jobs:
            wait_for(lambda: rm.job(job.pid), what="registered")

        # An estimate taken before a job's first cosched_report_work counts regions (its arrays are still being
        # touched: seconds with a build running beside the suite). The policy expires it at the first app-work
        # sample and measures the job again: a regions estimate that is not expired is a fault. An estimation
        # quantum that gives no sample puts the job off for 20 quanta, so the jobs run 14 s: under a load average
        # of 8, 8-s jobs ended before every one had an estimate.
        def all_alone():
            ended = [job.pid for job in jobs if job.proc.poll() is not None]
            self.assertFalse(ended, "jobs ended before each had a rate alone")
            p = rm.status()["pairs"]
            return p if p and len(p["jobs"]) == 3 and all(
                j["alone_per_s"] and (j["source"] == "app-work" or j["expired"]) for j in p["jobs"]) else None
        p = wait_for(all_alone, timeout=30, interval=0.2, what="a rate alone for every job, in app-work or expired")
        for j in p["jobs"]:
            if j["source"] == "app-work":
                self.assertGreater(j["alone_per_s"], 1e5)  # writes per second: millions here
        st = rm.status()
        for j in st["jobs"]:
            if j["rate"] is not None:
                self.assertEqual(j["rate"]["source"], "app-work", f"job {j['id']}: {j['rate']}")
        for job in jobs:
            self.assertEqual(job.wait(timeout=60), 0)
        self.assertTrue(any("groups" in d for d in rm.decisions()))


class SmtSiblings(RmTestCase):
    def test_groups_share_cores_on_a_modelled_smt_machine(self):
        # Two cores of two PUs each (hwloc: PUs 0,1 on core 0 and 2,3 on core 1): four one-CPU jobs run at
        # once, two per core. --enforce none on a modelled machine: the allocations are what status shows.
        rm = self.start_rm("--topology", "package:1 core:2 pu:2", policy="symbiotic", cpus="0-3")
        env = {"OMP_NUM_THREADS": "1"}
        jobs = [self.start_job([program(LOW), "--seconds", "4", "--quiet"], rm, request=1, env=env) for _ in range(4)]
        for job in jobs:
            wait_for(lambda: rm.job(job.pid), what="registered")

        def grouped():
            d = [x for x in rm.decisions() if "groups" in x and sum(len(g) for g in x["groups"]) == 4]
            return d[-1] if d else None
        d = wait_for(grouped, timeout=20, interval=0.2, what="a decision with all four jobs grouped")
        cpus = {j["id"]: j["cpus"] for j in d["jobs"]}
        for g in d["groups"]:
            self.assertEqual(len(g), 2, d["groups"])
            a, b = (cpus[i] for i in g)
            self.assertEqual(len(a.split(",")), 1)
            # Siblings: PUs 2k and 2k+1 of one core.
            self.assertEqual(int(a) // 2, int(b) // 2, f"group {g} on {a} and {b}: not one core")
            self.assertNotEqual(a, b)
        for job in jobs:
            self.assertEqual(job.wait(timeout=60), 0)


if __name__ == "__main__":
    unittest.main(verbosity=2)
