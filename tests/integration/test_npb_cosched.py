#!/usr/bin/python3
"""NPB-class kernels under cosched: every kernel verifies at class S when run through cosched-run with a
live RM (clang and gcc builds, plain and relinked), and the SelfAnalyzer finds the iterative structure of
CG, MG and BT in the unmodified binaries and reports a speedup; the relinked builds report each iteration's
memory traffic, the figure docs/npb.md's formulas give, and status --json shows it."""
import re
import time
import unittest

from harness import RmTestCase, program, wait_for

KERNELS = ("ep", "cg", "mg", "is", "ft", "bt")


def mg_traffic(top):
    """docs/npb.md, MG: per V-cycle and residual, with G_k the bytes of the level-k grid."""
    g = lambda k: 8 * (2 ** k + 2) ** 3
    b = sum(g(k) + 2 * g(k - 1) for k in range(2, top + 1))  # restrictions
    b += 5 * g(1)
    b += sum(10 * g(k) + g(k - 1) for k in range(2, top))
    return b + 13 * g(top) + g(top - 1)


# Memory traffic per iteration from docs/npb.md's formulas, worked out here from the class parameters (CG's
# nonzero count is what the program prints: the matrix generator merges duplicates).
TRAFFIC = {
    "ep": lambda out: 0,
    "cg": lambda out: (lambda n, nnz: 26 * (12 * nnz + 8 * (n + 1)) + 2528 * n)(
        *map(int, re.search(r"n=(\d+), (\d+) nonzeros", out).groups())),
    "mg": lambda out: mg_traffic(7),             # class W: 128^3
    "is": lambda out: 20 * 2 ** 23 + 16 * 2 ** 19,  # class A: N keys of 4 bytes, K ranks of 8
    "ft": lambda out: 168 * 256 * 256 * 128,     # class A: P points
    "bt": lambda out: 824 * 24 ** 3,             # class W: n^3 points
}
# Runs long enough (about a second or more) for status to be read while they iterate.
TRAFFIC_ARGS = {"ep": ["A"], "cg": ["W", "--iterations", "400"], "mg": ["W", "--iterations", "200"],
                "is": ["A"], "ft": ["A"], "bt": ["W", "--iterations", "400"]}


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

    def test_relinked_kernels_report_their_traffic(self):
        # --sensor app: the policies' bandwidth comes from what the programs report (cosched_report_bytes).
        rm = self.start_rm("--sensor", "app")
        for kernel in KERNELS:
            with self.subTest(kernel=kernel):
                job = self.start_job([program(f"npb-{kernel}-clang-relinked")] + TRAFFIC_ARGS[kernel], rm, request=2)
                line = wait_for(lambda: re.search(r"Memory traffic\s+=\s+(\d+) bytes per iteration",
                                                  "\n".join(job.lines())), timeout=60, what=f"{kernel}: the traffic line")
                printed = int(line.group(1))
                self.assertEqual(printed, TRAFFIC[kernel]("\n".join(job.lines())), f"{kernel}: docs/npb.md's formula")
                # While it runs: status shows the program's running total, a whole number of iterations'
                # traffic (EP reports 0: a reading, not a silence), and, once a quantum has been sampled,
                # the app-reported rate.
                totals, rates = [], []
                while job.proc.poll() is None:
                    j = rm.job(job.pid)
                    if j is not None and j["bytes_reported"] is not None:
                        totals.append(j["bytes_reported"])
                        est = (j["bandwidth"] or {}).get("estimates", {})
                        if "app-reported" in est:
                            rates.append(est["app-reported"])
                    time.sleep(0.01)
                self.assertEqual(job.wait(timeout=120), 0, job.stderr()[-500:])
                self.assertTrue(totals, f"{kernel}: status never showed bytes_reported while it ran")
                if printed == 0:
                    self.assertEqual(set(totals), {0})
                    continue
                self.assertGreater(max(totals), 0)
                for t in totals:
                    self.assertEqual(t % printed, 0, f"{kernel}: {t} is not a multiple of {printed}")
                if kernel in ("cg", "mg", "bt"):  # a second or more of iterations: whole quanta sampled
                    self.assertTrue(rates and max(rates) > 0, f"{kernel}: no app-reported rate in status")

    def check_period_found(self, binary, args, period):
        rm = self.start_rm("--baseline", "always")
        # NPB kernels adapt to any team size; opting in lets the 1-CPU baseline run one thread, so a job alone
        # on 2 CPUs has two team sizes to compare (docs/architecture.md, rule 7).
        job = self.start_job([program(binary)] + args, rm, request=2, launcher=["--malleable"])

        # A set-up phase can be iterative too (CG's matrix generation repeats a few regions; a slow build is
        # still in it at the first report), so wait for the report of the outer loop, with the period docs/npb.md
        # gives for one time step; a detector that never finds it fails here.
        j = rm.wait_for_report_unless_loaded(job.pid, also=lambda j: j["period"] == period, timeout=120,
                                             what=f"{binary}: a speedup report of the outer loop (period {period})")
        if j is None:  # its report withheld under outside load (it said why): the period is in status anyway
            j = rm.last_seen
        else:
            self.assertGreater(j["speedup"], 0)
        self.assertEqual(j["period"], period, j)
        job.kill()
        return j

    @staticmethod
    def described(j):
        if j["speedup"] is None:
            return f"period {j['period']}, no speedup under outside load ({j['no_speedup']})"
        return f"period {j['period']} speedup {j['speedup']:.2f} at {j['measured_cpus']} CPUs"

    def test_cg_period_detected(self):
        j = self.check_period_found("npb-cg-gcc", ["W", "--iterations", "400"], 79)
        print("CG:", self.described(j))

    def test_mg_period_detected(self):
        j = self.check_period_found("npb-mg-clang", ["S", "--iterations", "3000"], 36)
        print("MG:", self.described(j))

    def test_bt_period_detected(self):
        # Six regions per time step: right-hand side (2), x, y and z solves, update.
        j = self.check_period_found("npb-bt-clang", ["S", "--iterations", "20000"], 6)
        print("BT:", self.described(j))


if __name__ == "__main__":
    unittest.main(verbosity=2)
