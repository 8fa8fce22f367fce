#!/usr/bin/python3
"""cosched-rm in the background, as an operator starts it: the messages file is where usage.md says
(the socket's path with .log for .sock), also on a first start when the socket's directory (a fresh
/run/cosched) does not exist yet; the launching shell gets its terminal back; a start-up error is printed
once on the terminal and once in the messages file."""
import os
import shutil
import subprocess
import tempfile
import unittest

from harness import CTL, RM, wait_for


class DaemonMode(unittest.TestCase):
    def setUp(self):
        self.base = tempfile.mkdtemp(prefix="cosched-it-daemon-")
        # Stands for a fresh /run: the RM's directory under it does not exist yet.
        self.socket = os.path.join(self.base, "run", "cosched", "rm.sock")
        self.messages = os.path.join(self.base, "run", "cosched", "rm.log")
        self.env = dict(os.environ, COSCHED_LOCK_DIR=os.path.join(self.base, "locks"))

    def tearDown(self):
        if os.path.exists(self.socket):
            subprocess.run([CTL, "--socket", self.socket, "shutdown"], capture_output=True, timeout=20)
            wait_for(lambda: not os.path.exists(self.socket), timeout=15, what="the RM to stop")
        shutil.rmtree(self.base, ignore_errors=True)

    def start(self, *extra):
        # A daemon that kept the launcher's stdout/stderr would hold these pipes open: run() would not return.
        return subprocess.run([RM, "--socket", self.socket, "--cpus", "0", "--enforce", "none"] + list(extra),
                              capture_output=True, text=True, timeout=20, env=self.env)

    def test_messages_file_is_created_next_to_the_socket_on_a_fresh_run_dir(self):
        r = self.start("--log-level", "debug")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual((r.stdout, r.stderr), ("", ""), "the daemon wrote to the launching terminal")
        self.assertTrue(os.path.exists(self.socket))
        self.assertTrue(os.path.isfile(self.messages), f"no {self.messages}: {os.listdir(os.path.dirname(self.socket))}")
        self.assertEqual(os.stat(os.path.dirname(self.socket)).st_mode & 0o777, 0o700)
        subprocess.run([CTL, "--socket", self.socket, "status"], capture_output=True, timeout=20, check=True)
        wait_for(lambda: os.path.getsize(self.messages) > 0, timeout=10, what="a line in the messages file")

    def test_start_up_error_is_printed_once(self):
        r = self.start("--policy", "no-such-policy")
        self.assertEqual(r.returncode, 1, r.stderr)
        lines = [line for line in r.stderr.splitlines() if line.strip()]
        self.assertEqual(len(lines), 1, f"expected one error line, got: {r.stderr!r}")
        self.assertIn("no-such-policy", lines[0])
        with open(self.messages) as f:
            self.assertEqual(f.read().count("no-such-policy"), 1)

    def test_explicit_messages_file(self):
        elsewhere = os.path.join(self.base, "rm-messages.txt")
        r = self.start("--messages", elsewhere)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(os.path.isfile(elsewhere))
        self.assertFalse(os.path.exists(self.messages))


if __name__ == "__main__":
    unittest.main()
