#!/usr/bin/python3
"""Docs that match the code: every long option a command prints in its `--help` is named somewhere in
README.md or docs/, every command exits 0 on `--help`, and every field of `cosched-ctl status --json` (top
level, machine, and per job, before and after the first speedup report) is named in docs/usage.md. A new
option or field without a line of documentation fails here, naming it."""
import os
import re
import subprocess
import unittest

from harness import BUILD, RmTestCase, program, wait_for

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "../.."))
COMMANDS = {
    "cosched-rm": [os.path.join(BUILD, "rm/cosched-rm")],
    "cosched-ctl": [os.path.join(BUILD, "rm/ctl/cosched-ctl")],
    "cosched-run": [os.path.join(BUILD, "libruntime/launcher/cosched-run")],
    "qsubmit": [os.path.join(BUILD, "qs/qsubmit/qsubmit")],
    "cosched-sim": [os.path.join(BUILD, "sim/cosched-sim")],
    "cosched-swfgen": [os.path.join(BUILD, "sim/gen/cosched-swfgen")],
    "cosched-report": ["/usr/bin/python3", os.path.join(ROOT, "scripts/cosched-report")],
    "compare-native": ["/usr/bin/python3", os.path.join(ROOT, "bench/compare-native")],
    "scripts/demo": ["bash", os.path.join(ROOT, "scripts/demo")],
}
LONG_OPTION = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]+")


def documentation():
    paths = [os.path.join(ROOT, "README.md")]
    for d, _, files in os.walk(os.path.join(ROOT, "docs")):
        paths += [os.path.join(d, f) for f in files if f.endswith(".md")]
    return "\n".join(open(p, encoding="utf-8").read() for p in paths)


class EveryOptionIsDocumented(unittest.TestCase):
    def test_help_options_appear_in_the_docs(self):
        docs = set(LONG_OPTION.findall(documentation()))
        missing = []
        for name, argv in COMMANDS.items():
            if not os.path.exists(argv[-1]):
                continue  # a component left out of this build
            with self.subTest(command=name):
                r = subprocess.run(argv + ["--help"], capture_output=True, text=True, timeout=30)
                self.assertEqual(r.returncode, 0, f"{name} --help: {r.stderr}")
                options = set(LONG_OPTION.findall(r.stdout + r.stderr)) - {"--help"}
                self.assertTrue(options, f"{name} --help lists no options")
                missing += [f"{name} {o}" for o in sorted(options - docs)]
        self.assertEqual(missing, [], "options in --help that README.md and docs/ never mention")



class EveryStatusFieldIsDocumented(RmTestCase):
    def test_status_json_fields_appear_in_usage_md(self):
        usage = open(os.path.join(ROOT, "docs/usage.md"), encoding="utf-8").read()
        documented = set(re.findall(r"`([a-z_]+)`", usage))
        rm = self.start_rm("--baseline", "always")
        job = self.start_job([program("amdahl-clang"), "--iterations", "100000", "--work-ms", "20", "--quiet"],
                             rm, request=2)
        before = wait_for(lambda: rm.job(job.pid), what="the job in status")
        after = rm.wait_for_report(job.pid)
        self.assertEqual(set(before), set(after), "a job's keys must not depend on whether it has reported")
        status = rm.status()
        fields = set(status) | set(status["machine"]) | set(after)
        self.assertEqual(sorted(fields - documented), [], "status --json fields docs/usage.md never names")


if __name__ == "__main__":
    unittest.main(verbosity=2)
