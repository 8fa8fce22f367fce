#!/usr/bin/python3
"""NPB-class kernels under cosched: every kernel verifies at class S when run through cosched-run with a
live RM (clang and gcc builds, plain and relinked), and the SelfAnalyzer finds the iterative structure of
CG, MG and BT in the unmodified binaries and reports a speedup."""
import unittest

from harness import RmTestCase, program

KERNELS = ("ep", "cg", "mg", "is", "ft", "bt")


class NpbUnderCosched(RmTestCase):
    def test_every_kernel_verifies_at_class_s(self):
        rm = self.start_rm()
        failures = []
        for kernel in KERNELS:
            for compiler in ("clang", "gcc"):
                for variant in ("", "-relinked"):
                    name = f"npb-{kernel}-{compiler}{variant}"
                    job = self.start_job([program(name), "S"], rm, request=2)
                    rc = job.wait(timeout=120)
                    out = "\n".join(job.lines())
                    if rc != 0 or "VERIFICATION SUCCESSFUL" not in out:
                        failures.append(f"{name}: exit {rc}\n{job.stderr()[-500:]}")
                    elif "no resource manager" in job.stderr():
                        failures.append(f"{name}: did not register with the RM")
        self.assertEqual(failures, [])
        decisions = [d for d in rm.decisions() if d["event"] == "arrival"]
        self.assertEqual(len(decisions), 4 * len(KERNELS), "every run registered with the RM")

    def check_period_found(self, binary, args, period):
        rm = self.start_rm("--baseline", "always")
        # NPB kernels adapt to any team size; opting in lets the 1-CPU baseline run one thread, so a job alone
        # on 2 CPUs has two team sizes to compare (docs/architecture.md, rule 7).
        job = self.start_job([program(binary)] + args, rm, request=2, launcher=["--malleable"])

        # A set-up phase can be iterative too (CG's matrix generation repeats a few regions; a slow build is
        # still in it at the first report), so wait for the report of the outer loop, with the period docs/npb.md
        # gives for one time step; a detector that never finds it fails here.
        j = rm.wait_for_report(job.pid, also=lambda j: j["period"] == period, timeout=120,
                               what=f"{binary}: a speedup report of the outer loop (period {period})")
        self.assertEqual(j["period"], period, j)
        self.assertGreater(j["speedup"], 0)
        job.kill()
        return j

    def test_cg_period_detected(self):
        j = self.check_period_found("npb-cg-gcc", ["W", "--iterations", "400"], 79)
        print(f"CG: period {j['period']} speedup {j['speedup']:.2f} at {j['measured_cpus']} CPUs")

    def test_mg_period_detected(self):
        j = self.check_period_found("npb-mg-clang", ["S", "--iterations", "3000"], 36)
        print(f"MG: period {j['period']} speedup {j['speedup']:.2f} at {j['measured_cpus']} CPUs")

    def test_bt_period_detected(self):
        # Six regions per time step: right-hand side (2), x, y and z solves, update.
        j = self.check_period_found("npb-bt-clang", ["S", "--iterations", "20000"], 6)
        print(f"BT: period {j['period']} speedup {j['speedup']:.2f} at {j['measured_cpus']} CPUs")


if __name__ == "__main__":
    unittest.main(verbosity=2)
