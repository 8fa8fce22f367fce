#!/usr/bin/python3
"""bench/compare-native end to end on its tiny configuration: it exits 0, prints a table per compiler with a
row per policy and one for the static-partition oracle (--oracle), and every ratio in it is a finite positive number (its values are for docs/performance.md,
never asserted)."""
import math
import os
import subprocess
import unittest

ROOT = os.path.join(os.path.dirname(__file__), "../..")
BUILD = os.environ.get("COSCHED_BUILD_DIR", os.path.join(ROOT, "build/release"))


class CompareNative(unittest.TestCase):
    def test_quick_run_gives_finite_ratios_for_every_policy(self):
        r = subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "bench/compare-native"), "--quick", "--oracle",
                            "--build", BUILD], capture_output=True, text=True, timeout=280)
        self.assertEqual(r.returncode, 0, r.stderr[-2000:])
        tables, current = {}, None
        for line in r.stdout.splitlines():
            if line.startswith("## "):
                current = line.split()[1]
                tables[current] = {}
            elif current and line.split() and line.split()[0] in ("equip", "pdpa", "oracle"):
                fields = line.split()
                # policies: response, execution, /oracle; the oracle row: response, execution
                n = 2 if fields[0] == "oracle" else 3
                tables[current][fields[0]] = tuple(float(x) for x in fields[1:1 + n])
        self.assertEqual(sorted(tables), ["clang", "gcc"], r.stdout)
        for compiler, rows in tables.items():
            self.assertEqual(sorted(rows), ["equip", "oracle", "pdpa"], (compiler, r.stdout))
            for policy, ratios in rows.items():
                for v in ratios:
                    self.assertTrue(math.isfinite(v) and v > 0, (compiler, policy, ratios))


if __name__ == "__main__":
    unittest.main(verbosity=2)
