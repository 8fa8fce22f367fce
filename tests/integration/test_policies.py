#!/usr/bin/python3
"""Space-sharing policies on real jobs (PDPA paper §4): PDPA shrinks a job that does not scale once it is
measured and then lets another job start (its multiprogramming-level rule); Equipartition does neither."""
import unittest

from harness import RmTestCase, measure_in_bounds, program, wait_for

WORK = ["--iterations", "100000", "--work-ms", "30", "--quiet"]
# The Amdahl program adapts to any team size, so it says so (cosched-run --malleable): its 1-CPU baseline then
# runs one thread. Without the opt-in, cosched never gives it a team of 1 (docs/architecture.md, rule 7).
MALLEABLE = ["--malleable"]
# A job alone defers its baseline under the default --baseline auto (docs/selfanalyzer.md, "A baseline waits
# while a job is alone"); the PDPA cases judge one job alone, so they ask for the paper's rule: a baseline at
# once.
MEASURE_ALONE = ("--baseline", "always")


class Pdpa(RmTestCase):
    def test_non_scalable_job_is_judged_dec_and_gives_its_cpu_to_a_newcomer(self):
        rm = self.start_rm(*MEASURE_ALONE, policy="pdpa")
        job = self.start_job([program("amdahl-clang"), "--serial-fraction", "1.0"] + WORK, rm, request=2,
                             launcher=MALLEABLE)
        wait_for(lambda: (rm.job(job.pid) or {}).get("allocated") == 2, what="NO_REF allocation of 2")
        self.assertFalse(rm.status()["may_start"], "no free CPU yet: may-start must say no")
        # Measured below target_eff: DEC. Nobody else could use the CPU a step down frees (nothing queued, no
        # other job), so the job keeps it as a loan, which counts as free for admission.
        # Under outside load the job may withhold its report and say why: then there is nothing to judge.
        j = rm.wait_for_report_unless_loaded(job.pid, also=lambda x: x["policy_state"] == "DEC",
                                             what="PDPA to judge it DEC")
        if j is None:
            return
        self.assertLess(j["efficiency"], 0.7)
        wait_for(lambda: rm.status()["may_start"], timeout=10, what="may-start yes")
        r = rm.ctl("may-start", check=False)
        self.assertEqual(r.returncode, 0, r.stdout)
        self.assertTrue(r.stdout.startswith("yes"), r.stdout)
        why = rm.ctl("why", str(j["id"])).stdout
        self.assertIn("DEC", why)
        self.assertIn("target_eff", why)
        # A newcomer takes the lent CPU back: one CPU each.
        other = self.start_job([program("amdahl-clang"), "--serial-fraction", "0"] + WORK, rm, request=2,
                               launcher=MALLEABLE)
        wait_for(lambda: rm.job(job.pid)["allocated"] == 1 and (rm.job(other.pid) or {}).get("allocated") == 1,
                 timeout=30, interval=0.1, what="the lent CPU taken back by the newcomer")
        self.assertEqual(len(rm.job(job.pid)["cpus"]), 1)

    def test_scalable_job_keeps_its_cpus(self):
        def smallest_allocation_after_judgement():
            rm = self.start_rm(*MEASURE_ALONE, policy="pdpa")
            job = self.start_job([program("amdahl-clang"), "--serial-fraction", "0"] + WORK, rm, request=2,
                             launcher=MALLEABLE)
            judged = rm.wait_for_report_unless_loaded(
                job.pid, also=lambda j: j["policy_state"] in ("INC", "STABLE", "DEC"), what="a PDPA judgement")
            if judged is None:  # withheld under outside load (said why): unjudged, it keeps its CPUs
                allocated = rm.last_seen["allocated"]
                job.kill()
                rm.stop()
                return allocated, ["no judgement under outside load"]
            seen = [judged]
            for _ in range(3):  # still 2 after a few more reports
                n = seen[-1]["reports"]
                wait_for(lambda: rm.job(job.pid)["reports"] > n, timeout=30, what="another report")
                seen.append(rm.job(job.pid))
            job.kill()
            rm.stop()
            return min(j["allocated"] for j in seen), seen

        allocated, seen, tries = measure_in_bounds(smallest_allocation_after_judgement, 2, 2, cleanup=self.stop_started)
        self.assertEqual(allocated, 2, (tries, seen))


class WhyListsStateChanges(RmTestCase):
    def test_a_state_change_without_a_new_allocation_is_in_why(self):
        # A job holding its whole request that is judged (NO_REF → STABLE or INC, or DEC) changes state; when
        # its allocation stays, `why` must still say so, as the decision log and status do.
        rm = self.start_rm(*MEASURE_ALONE, policy="pdpa")
        job = self.start_job([program("amdahl-clang"), "--serial-fraction", "0"] + WORK, rm, request=2,
                             launcher=MALLEABLE)
        # (UNMEASURED is no judgement: a report that comes more than 10 iterations after the period was found,
        # on a loaded machine, still gets one.)
        judged = ("STABLE", "INC", "DEC")
        j = rm.wait_for_report_unless_loaded(job.pid, also=lambda j: j["policy_state"] in judged,
                                             what="a PDPA judgement")
        if j is None:  # withheld under outside load (said why): no judgement to find in why
            return
        reasons = [d["reason"] for d in rm.request({"cmd": "why", "job": j["id"]})["decisions"]]
        self.assertTrue(any(r.startswith(("STABLE", "INC", "DEC")) for r in reasons), reasons)


class Equipartition(RmTestCase):
    def test_first_job_keeps_its_request_and_never_runs_below_it(self):
        # Equipartition uses no speedup, so the RM tells the job to skip the SelfAnalyzer's baseline: every
        # region runs with the full allocation from the first to the last.
        rm = self.start_rm(policy="equip")
        job = self.start_job([program("amdahl-clang"), "--serial-fraction", "1.0", "--iterations", "60",
                              "--work-ms", "20"], rm, request=2, launcher=MALLEABLE)
        wait_for(lambda: (rm.job(job.pid) or {}).get("phase") == "measuring", timeout=30, what="measuring")
        self.assertEqual(rm.job(job.pid)["allocated"], 2)
        self.assertEqual(job.wait(), 0)
        teams = job.teams()
        self.assertEqual(len(teams), 60)
        self.assertEqual(set(teams), {"2"}, teams)

    def test_switching_to_pdpa_starts_a_baseline(self):
        rm = self.start_rm(policy="equip")
        job = self.start_job([program("amdahl-clang"), "--serial-fraction", "1.0"] + WORK, rm, request=2,
                             launcher=MALLEABLE)
        wait_for(lambda: (rm.job(job.pid) or {}).get("phase") == "measuring", timeout=30, what="measuring")
        # One allocation, no baseline: no iteration times to compare (its waiting-time efficiency needs none).
        self.assertIsNone(rm.job(job.pid)["measured_speedup"])
        rm.ctl("policy", "pdpa")
        # Alone, its baseline waits (--baseline auto): nothing would take the CPUs it might give up.
        j = wait_for(lambda: rm.job(job.pid), what="the job after the switch")
        self.assertTrue(j["baseline_waits"], j)
        # A second job arrives and takes its share: the first is measured, at the CPU it keeps, and judged.
        # (Under outside load it may withhold its report instead, and say why.)
        self.start_job([program("amdahl-clang"), "--serial-fraction", "0"] + WORK, rm, request=2, launcher=MALLEABLE)
        wait_for(lambda: not rm.job(job.pid)["baseline_waits"], what="the first job's baseline no longer waiting")
        rm.wait_for_report_unless_loaded(job.pid, also=lambda j: j["policy_state"] in ("INC", "STABLE", "DEC"),
                                         what="PDPA to measure the job and judge it")


class RuntimeSwitch(RmTestCase):
    def test_policy_switch_and_parameters(self):
        rm = self.start_rm(policy="equip")
        st = rm.status()
        self.assertEqual(st["policy"], "equip")
        r = rm.ctl("policy", "pdpa", "target_eff=0.6", "--json")
        self.assertIn('"policy": "pdpa"', r.stdout)
        st = rm.status()
        self.assertEqual(st["policy"], "pdpa")
        self.assertEqual(float(st["params"]["target_eff"]), 0.6)
        bad = rm.ctl("set", "target_eff=2", check=False)
        self.assertNotEqual(bad.returncode, 0)
        self.assertIn("target_eff", bad.stderr)
        self.assertEqual(float(rm.status()["params"]["target_eff"]), 0.6)


if __name__ == "__main__":
    unittest.main(verbosity=2)
