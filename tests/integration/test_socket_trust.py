#!/usr/bin/python3
"""A forged RM. Whoever owns the socket's directory can put their own socket there (the non-root default
/tmp/cosched-<uid>/ can be created first by anyone), so cosched-rm refuses such a directory and creates its
own 0700, and every client (cosched-ctl, cosched-run's libcosched) refuses a directory or a server
(SO_PEERCRED) of another uid than its own or root's."""
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import unittest

from harness import BIN, CTL, NOBODY, RM, RUN, as_user, program, wait_for

# Answers every frame with a ctl_reply saying all is well: what an impostor would do.
IMPOSTOR = r"""
import os, socket, struct, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1]); s.listen(8)
print("listening", flush=True)
while True:
    c, _ = s.accept()
    try:
        c.recv(65536)
        body = b'{"ok": true, "policy": "forged", "params": {}, "jobs": []}'
        c.sendall(struct.pack("<IHHII", 0x43534844, 1, 5, len(body), 0) + body)
    except OSError:
        pass  # the client hung up on us
    c.close()
"""


class SocketTrust(unittest.TestCase):
    def setUp(self):
        if os.geteuid() != 0:
            self.skipTest("needs root to act as another user")
        self.base = tempfile.mkdtemp(prefix="cosched-trust-")
        os.chmod(self.base, 0o755)  # the other user must reach what is inside
        self.procs = []

    def tearDown(self):
        for p in self.procs:
            p.kill()
            p.wait()
        shutil.rmtree(self.base)

    def impostor(self, directory):
        path = os.path.join(directory, "rm.sock")
        p = subprocess.Popen(as_user(NOBODY) + [sys.executable, "-c", IMPOSTOR, path], stdout=subprocess.PIPE,
                             text=True)
        self.procs.append(p)
        self.assertEqual(p.stdout.readline().strip(), "listening")
        return path

    def other_users_dir(self, mode=0o755):
        d = os.path.join(self.base, "other")
        os.mkdir(d)
        os.chown(d, NOBODY, NOBODY)
        os.chmod(d, mode)
        return d

    def test_rm_refuses_a_directory_of_another_user(self):
        d = self.other_users_dir()
        r = subprocess.run([RM, "--foreground", "--socket", os.path.join(d, "rm.sock"), "--cpus", "0"],
                           capture_output=True, text=True, timeout=30)
        self.assertEqual(r.returncode, 1)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        self.assertIn(f"belongs to uid {NOBODY}", r.stderr)
        self.assertEqual(os.listdir(d), [])

    def test_rm_refuses_a_directory_others_may_write(self):
        d = os.path.join(self.base, "open")
        os.mkdir(d)
        os.chmod(d, 0o777)
        r = subprocess.run([RM, "--foreground", "--socket", os.path.join(d, "rm.sock"), "--cpus", "0"],
                           capture_output=True, text=True, timeout=30)
        self.assertEqual(r.returncode, 1)
        self.assertIn("writable by other users", r.stderr)

    def test_rm_creates_its_directory_0700(self):
        d = os.path.join(self.base, "mine")
        sock = os.path.join(d, "rm.sock")
        p = subprocess.Popen([RM, "--foreground", "--socket", sock, "--cpus", "0"], stderr=subprocess.DEVNULL)
        self.procs.append(p)
        wait_for(lambda: os.path.exists(sock) or p.poll() is not None, what="the RM socket")
        self.assertIsNone(p.poll())
        self.assertEqual(stat.S_IMODE(os.stat(d).st_mode), 0o700)

    def test_clients_refuse_a_directory_of_another_user(self):
        sock = self.impostor(self.other_users_dir())
        r = subprocess.run([CTL, "--socket", sock, "status"], capture_output=True, text=True, timeout=30)
        self.assertEqual(r.returncode, 3, r.stdout)
        self.assertIn(f"belongs to uid {NOBODY}", r.stderr)
        self.assertNotIn("forged", r.stdout)
        # A job does not register with the impostor: it runs natively, after one warning.
        r = subprocess.run([RUN, "--socket", sock, "--", program("amdahl-clang"), "--iterations", "2",
                            "--work-ms", "1"], capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(f"belongs to uid {NOBODY}", r.stderr)
        self.assertIn("running natively", r.stderr)

    def test_clients_refuse_a_server_of_another_user(self):
        shared = os.path.join(self.base, "shared")
        os.mkdir(shared)
        os.chmod(shared, 0o1777)  # like /tmp: root's, sticky, writable by all
        sock = self.impostor(shared)
        r = subprocess.run([CTL, "--socket", sock, "status"], capture_output=True, text=True, timeout=30)
        self.assertEqual(r.returncode, 3, r.stdout)
        self.assertIn(f"served by uid {NOBODY}", r.stderr)
        self.assertNotIn("forged", r.stdout)


if __name__ == "__main__":
    unittest.main(verbosity=2)
