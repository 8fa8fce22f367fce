#!/usr/bin/python3
"""Docs that match the code: every long option a command prints in its `--help` is named somewhere in
README.md or docs/, every command exits 0 on `--help`, and every field of `cosched-ctl status --json` (top
level, machine, and per job, before and after the first speedup report) is named in docs/usage.md. A new
option or field without a line of documentation fails here, naming it. The exit-status table of usage.md
covers every command (test_cli.py checks the programs behave so), and the man pages built from --help carry
every option and that table's rows."""
import os
import re
import subprocess
import unittest

from harness import BUILD, RmTestCase, program, wait_for

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "../.."))
COMMANDS = {
    "cosched-rm": [os.path.join(BUILD, "rm/cosched-rm")],
    "cosched-ctl": [os.path.join(BUILD, "ctl/cosched-ctl")],
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


class PolicyTableMatchesTheRegistry(unittest.TestCase):
    """docs/usage.md's table of policies and parameters is what the policies' own tables give."""

    def test_usage_md_holds_the_registry_table(self):
        out = subprocess.run(COMMANDS["cosched-sim"] + ["--list-policies", "--markdown"], capture_output=True,
                             text=True, check=True).stdout
        usage = open(os.path.join(ROOT, "docs/usage.md"), encoding="utf-8").read()
        m = re.search(r"<!-- policies-table: begin[^>]*-->\n(.*?)<!-- policies-table: end -->", usage, re.S)
        self.assertIsNotNone(m, "docs/usage.md has no policies-table markers")
        self.assertEqual(m.group(1), out, "docs/usage.md's policy table differs from "
                         "`cosched-sim --list-policies --markdown`: paste its output between the markers")
        # Every policy of the registry has a row (a table that lists 10 of 15 fails here too).
        names = [line.split("\t")[0] for line in subprocess.run(
            COMMANDS["cosched-sim"] + ["--list-policies"], capture_output=True, text=True, check=True).stdout.splitlines()]
        self.assertGreaterEqual(len(names), 15)
        for name in names:
            self.assertIn("| `" + name + "` |", m.group(1))


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



MAN_PAGES = {"cosched-rm": 8, "cosched-ctl": 1, "cosched-run": 1, "qsubmit": 1, "cosched-sim": 1,
             "cosched-swfgen": 1, "cosched-report": 1}


def exit_table():
    """{status: (meaning, [commands])} from docs/usage.md's "Exit status" section."""
    with open(os.path.join(ROOT, "docs/usage.md"), encoding="utf-8") as f:
        usage = f.read()
    section = usage.split("## Exit status", 1)[1].split("\n## ", 1)[0]
    table = {}
    for m in re.finditer(r"^\|\s*(\d+)\s*\|(.*)\|(.*)\|\s*$", section, re.M):
        table[int(m.group(1))] = (m.group(2).strip(), [c.strip() for c in m.group(3).split(",")])
    return table


def statuses_for(name):
    return sorted(s for s, (_, commands) in exit_table().items()
                  if "all" in commands or any(c == name or c.startswith(name + " ") for c in commands))


class ExitStatusTable(unittest.TestCase):
    def test_one_convention_covers_every_command(self):
        table = exit_table()
        self.assertEqual(sorted(table), [0, 1, 2, 3], "usage.md's table: 0 ok, 1 failure, 2 usage, 3 no RM")
        for name in MAN_PAGES:
            with self.subTest(command=name):
                self.assertIn(0, statuses_for(name))
                self.assertIn(2, statuses_for(name))
        self.assertEqual([n for n in MAN_PAGES if 3 in statuses_for(n)], ["cosched-ctl", "qsubmit"])

    def test_help_texts_agree_with_the_table(self):
        for name, argv in COMMANDS.items():
            if name not in MAN_PAGES:
                continue
            r = subprocess.run(argv + ["--help"], capture_output=True, text=True, timeout=30)
            m = re.search(r"Exit status:([^\n]*)", r.stdout)
            if m:
                with self.subTest(command=name):
                    said = {int(s) for s in re.findall(r"(?<![\w.-])(\d)(?= )", m.group(1))}
                    self.assertLessEqual(said, set(statuses_for(name)), f"{name} --help: {m.group(0)}")


def man_text(path):
    """A page's text as a reader sees the words: roff's escaped minus back to '-'."""
    with open(path, encoding="utf-8") as f:
        return f.read().replace("\\-", "-").replace("\\e", "\\")


class ManPages(unittest.TestCase):
    def test_every_command_has_a_page_with_its_options_and_exit_statuses(self):
        for name, section in MAN_PAGES.items():
            with self.subTest(command=name):
                path = os.path.join(BUILD, "man", f"man{section}", f"{name}.{section}")
                self.assertTrue(os.path.exists(path), f"{path} was not built")
                page = man_text(path)
                self.assertTrue(page.startswith(f".TH {name.upper()} {section} "), page[:80])
                r = subprocess.run(COMMANDS[name] + ["--help"], capture_output=True, text=True, timeout=30)
                options = set(LONG_OPTION.findall(r.stdout)) - {"--help"}
                missing = sorted(o for o in options if o not in page)
                self.assertEqual(missing, [], f"{name}({section}) lacks options of --help")
                exit_part = page.split(".SH EXIT STATUS", 1)[1].split(".SH ", 1)[0]
                listed = sorted(int(s) for s in re.findall(r"\\fB(\d+)\\fR", exit_part))
                self.assertEqual(listed, statuses_for(name), f"{name}({section}) EXIT STATUS")

    def test_ctl_page_describes_every_subcommand(self):
        page = man_text(os.path.join(BUILD, "man", "man1", "cosched-ctl.1"))
        for sub in ("status", "why", "policy", "set", "may-start", "policies", "shutdown", "history", "pairs"):
            self.assertIn(f".SS {sub}", page)
        self.assertIn("--format", page)


class EveryStatusFieldIsDocumented(RmTestCase):
    def test_status_json_fields_appear_in_usage_md(self):
        usage = open(os.path.join(ROOT, "docs/usage.md"), encoding="utf-8").read()
        documented = set(re.findall(r"`([a-z_]+)`", usage))
        rm = self.start_rm("--baseline", "always")
        job = self.start_job([program("amdahl-clang"), "--iterations", "100000", "--work-ms", "20", "--quiet"],
                             rm, request=2, launcher=["--malleable"])
        before = wait_for(lambda: rm.job(job.pid), what="the job in status")
        # Under outside load the job may withhold its report (it says why): its keys are compared then too.
        after = rm.wait_for_report_unless_loaded(job.pid) or rm.last_seen
        self.assertEqual(set(before), set(after), "a job's keys must not depend on whether it has reported")
        status = rm.status()
        fields = set(status) | set(status["machine"]) | set(after)
        self.assertEqual(sorted(fields - documented), [], "status --json fields docs/usage.md never names")


if __name__ == "__main__":
    unittest.main(verbosity=2)
