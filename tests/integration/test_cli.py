#!/usr/bin/python3
"""One command-line convention for every cosched command (docs/usage.md, "Exit status"): `--version`
everywhere (one version), 0 for --help and --version, 2 for a usage error (never CLI11's own 105/106/109),
3 when the resource manager cannot be reached (cosched-ctl, qsubmit --socket), and a cosched-ctl that
says it timed out when the RM does not answer."""
import os
import re
import shutil
import socket
import subprocess
import tempfile
import unittest

from harness import BUILD, CTL, RM, RmTestCase

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "../.."))
REPORT = os.path.join(ROOT, "scripts/cosched-report")
TOOLS = {
    "cosched-rm": [RM],
    "cosched-ctl": [CTL],
    "cosched-run": [os.path.join(BUILD, "libruntime/launcher/cosched-run")],
    "qsubmit": [os.path.join(BUILD, "qs/qsubmit/qsubmit")],
    "cosched-sim": [os.path.join(BUILD, "sim/cosched-sim")],
    "cosched-swfgen": [os.path.join(BUILD, "sim/gen/cosched-swfgen")],
    "cosched-report": ["/usr/bin/python3", REPORT],
}
W3 = os.path.join(ROOT, "examples/workloads/w3-mini.swf")


def run(argv, timeout=30, **kw):
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, **kw)


class EveryTool(unittest.TestCase):
    def test_version_is_one_version_everywhere(self):
        versions = {}
        for name, argv in TOOLS.items():
            with self.subTest(tool=name):
                r = run(argv + ["--version"])
                self.assertEqual(r.returncode, 0, r.stderr)
                m = re.fullmatch(rf"{re.escape(name)} (\d+\.\d+\.\d+)", r.stdout.strip())
                self.assertIsNotNone(m, f"{name} --version printed {r.stdout!r}")
                versions[name] = m.group(1)
        self.assertEqual(len(set(versions.values())), 1, versions)

    def test_unknown_option_is_a_usage_error(self):
        for name, argv in TOOLS.items():
            with self.subTest(tool=name):
                r = run(argv + ["--no-such-option"])
                self.assertEqual(r.returncode, 2, f"{name}: {r.stderr}")
                self.assertTrue(r.stderr.strip(), f"{name}: a usage error without a message")

    def test_bad_values_and_missing_arguments_are_usage_errors(self):
        cases = [
            [RM, "--quantum-ms", "0"],
            [RM, "--enforce", "sometimes"],
            [CTL],                                        # no subcommand
            [CTL, "why"],                                 # no job
            TOOLS["qsubmit"],                             # no workload
            TOOLS["cosched-sim"] + [W3, "--cpus", "4"],   # no --policy
            TOOLS["cosched-sim"] + [W3, "--policy", "equip", "--cpus", "0"],
            TOOLS["cosched-swfgen"] + ["--jobs", "ten"],
            TOOLS["cosched-report"],                      # no run directory
            TOOLS["cosched-report"] + ["/nonexistent-run-dir", "--no-figure"],
            TOOLS["cosched-run"] + ["--request", "many", "--", "true"],
        ]
        for argv in cases:
            with self.subTest(argv=" ".join(os.path.basename(a) for a in argv)):
                r = run(argv)
                self.assertEqual(r.returncode, 2, r.stderr)

    def test_sim_help_says_which_options_are_required(self):
        r = run(TOOLS["cosched-sim"] + ["--help"])
        self.assertEqual(r.returncode, 0)
        policy_line = next(line for line in r.stdout.splitlines() if line.strip().startswith("-p,--policy"))
        self.assertIn("required", policy_line)
        r = run(TOOLS["cosched-sim"] + [W3, "--cpus", "4"])
        self.assertIn("--policy is required", r.stderr)

    def test_report_help_names_every_output_format(self):
        r = run(TOOLS["cosched-report"] + ["--help"])
        for fmt in ("png", "svg", "pdf"):
            self.assertIn(fmt, r.stdout)

    def test_scripts_print_their_own_help(self):
        for script in ("scripts/test", "scripts/demo", "scripts/loaded-suite"):
            with self.subTest(script=script):
                r = run(["bash", os.path.join(ROOT, script), "--help"])
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertIn(f"Usage: {script}", r.stdout)
                self.assertNotIn("set -e", r.stdout)
                self.assertNotIn("ctest [options]", r.stdout)  # ctest's own help


class BashCompletion(unittest.TestCase):
    """scripts/completion/cosched.bash offers what each program's --help lists."""

    def complete(self, *words):
        script = (f'source {os.path.join(ROOT, "scripts/completion/cosched.bash")}\n'
                  f'COMP_WORDS=({" ".join(repr(w) for w in words)}); COMP_CWORD={len(words) - 1}\n'
                  f'_cosched_complete {words[0]}; printf "%s\\n" "${{COMPREPLY[@]}}"\n')
        env = dict(os.environ, PATH=os.path.join(BUILD, "bin") + ":" + os.environ["PATH"])
        r = run(["bash", "-c", script], env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        return set(r.stdout.split())

    def test_subcommands_options_and_policies(self):
        self.assertIn("history", self.complete("cosched-ctl", "hi"))
        self.assertEqual(self.complete("cosched-ctl", "sta"), {"status"})
        self.assertIn("--format", self.complete("cosched-ctl", "status", "--f"))
        self.assertIn("--accounting", self.complete("cosched-rm", "--acc"))
        self.assertIn("pdpa", self.complete("cosched-rm", "--policy", ""))
        self.assertIn("--time-scale", self.complete("qsubmit", "--time"))


class CannotReachTheRm(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="cosched-it-cli-")
        os.chmod(self.dir, 0o700)
        self.addCleanup(shutil.rmtree, self.dir, True)
        self.socket = os.path.join(self.dir, "rm.sock")

    def test_ctl_without_an_rm_exits_3(self):
        r = run([CTL, "--socket", self.socket, "status"])
        self.assertEqual(r.returncode, 3, r.stderr)
        self.assertIn(self.socket, r.stderr)

    def test_ctl_says_it_timed_out(self):
        # A peer that accepts and never answers: what a stopped (SIGSTOP) or wedged RM looks like.
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as silent:
            silent.bind(self.socket)
            silent.listen(4)
            r = run([CTL, "--socket", self.socket, "--timeout-ms", "300", "status"])
        self.assertEqual(r.returncode, 3, r.stderr)
        self.assertIn("timed out after 300 ms", r.stderr)
        self.assertNotIn("socket error", r.stderr)

    def test_qsubmit_with_an_unreachable_socket_exits_3(self):
        r = run(TOOLS["qsubmit"] + [W3, "--socket", self.socket, "--out", os.path.join(self.dir, "out")])
        self.assertEqual(r.returncode, 3, r.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.dir, "out")), "qsubmit wrote results without an RM")


class AnsweredRequests(RmTestCase):
    def test_ctl_statuses_with_an_rm(self):
        rm = self.start_rm(policy="pdpa")
        self.assertEqual(rm.ctl("may-start", check=False).returncode, 0)
        self.assertEqual(rm.ctl("why", "99", check=False).returncode, 1)       # no such job: answered "no"
        self.assertEqual(rm.ctl("set", "step=0", check=False).returncode, 1)   # refused by the policy
        self.assertEqual(rm.ctl("set", "oops", check=False).returncode, 2)     # not NAME=VALUE


if __name__ == "__main__":
    unittest.main(verbosity=2)
