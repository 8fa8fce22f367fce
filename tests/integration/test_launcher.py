#!/usr/bin/python3
"""Command lines that cannot work. cosched-run on programs that cannot be run: one clear error line and the shell's exit status (127: not
found, 126: found but not executable). A directory used to abort it (uncaught std::__ios_failure, exit 134),
also when found on PATH, and a FIFO with the exec bit made it hang."""
import os
import shutil
import stat
import subprocess
import tempfile
import unittest

from harness import RM, RUN


class UnrunnablePrograms(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="cosched-run-")
        self.socket = os.path.join(self.dir, "none.sock")  # no RM: these fail before they would look for one

    def tearDown(self):
        shutil.rmtree(self.dir)

    def run_it(self, *command, env=None):
        full = dict(os.environ, **(env or {}))
        return subprocess.run([RUN, "--socket", self.socket, "--"] + list(command), capture_output=True, text=True,
                              timeout=30, env=full)

    def assert_one_line(self, r, rc, text):
        self.assertEqual(r.returncode, rc, r.stderr)
        lines = r.stderr.splitlines()
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertIn(text, lines[0])

    def test_directory(self):
        d = os.path.join(self.dir, "prog")
        os.mkdir(d, 0o755)
        self.assert_one_line(self.run_it(d), 126, "Is a directory")

    def test_directory_on_path(self):
        os.mkdir(os.path.join(self.dir, "prog"), 0o755)
        self.assert_one_line(self.run_it("prog", env={"PATH": self.dir}), 127, "prog: command not found")

    def test_executable_fifo(self):
        f = os.path.join(self.dir, "fifo")
        os.mkfifo(f)
        os.chmod(f, 0o755)
        self.assert_one_line(self.run_it(f), 126, "not a regular file")

    def test_missing_and_not_executable(self):
        self.assert_one_line(self.run_it(os.path.join(self.dir, "absent")), 127, "No such file or directory")
        self.assert_one_line(self.run_it("cosched-no-such-program", env={"PATH": self.dir}), 127,
                             "command not found")
        f = os.path.join(self.dir, "script")
        with open(f, "w") as out:
            out.write("#!/bin/sh\nexit 0\n")
        os.chmod(f, stat.S_IRUSR | stat.S_IWUSR)
        self.assert_one_line(self.run_it(f), 126, "Permission denied")


class RmCommandLine(unittest.TestCase):
    def test_empty_cpu_list_is_an_error(self):
        # `cosched-rm --cpus ''` (an unset shell variable) silently managed every CPU.
        d = tempfile.mkdtemp(prefix="cosched-rm-cli-")
        try:
            for value in ("", " "):
                r = subprocess.run([RM, "--foreground", "--socket", os.path.join(d, "rm.sock"), "--cpus", value],
                                   capture_output=True, text=True, timeout=30)
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertEqual(r.stderr.strip(), f"cosched-rm: --cpus '{value}': empty CPU list")
                self.assertFalse(os.path.exists(os.path.join(d, "rm.sock")))
        finally:
            shutil.rmtree(d)


if __name__ == "__main__":
    unittest.main(verbosity=2)
