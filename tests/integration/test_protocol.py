#!/usr/bin/python3
"""The RM trusts nothing on its socket: garbage, wrong versions, oversized or short frames and bad JSON each
give one error line and a dropped connection, while the RM keeps serving real jobs."""
import json
import os
import struct
import subprocess
import sys
import time
import unittest

from harness import (MSG_CTL_REPLY as CTL_REPLY, MSG_CTL_REQUEST as CTL_REQUEST, MSG_REFUSED as REFUSED,
                     MSG_REGISTER as REGISTER, RmTestCase, frame, program, raw_connect, read_frame as read_reply,
                     wait_for)


def cpu_seconds(pid):
    """User + system CPU time of `pid` so far, from /proc/<pid>/stat."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def assert_idle(test, pid, seconds=1.0):
    """Fails when `pid` burns most of a CPU while it should be idle (a busy loop uses all of it)."""
    before, t0 = cpu_seconds(pid), time.monotonic()
    time.sleep(seconds)
    used, wall = cpu_seconds(pid) - before, time.monotonic() - t0
    test.assertLess(used, 0.3 * wall, f"pid {pid} used {used:.2f} s of CPU in {wall:.2f} s: a busy loop")


# A job that registers by hand, sends a second register frame on the same connection, prints the type of
# each reply, then holds its registration until its stdin closes.
TWICE = r"""
import socket, struct, sys
sys.path.insert(0, sys.argv[2])
from harness import frame, read_frame, MSG_REGISTER
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
body = struct.pack("<iI", 1, 0) + b"twice".ljust(240, b"\0")
for _ in range(2):
    s.sendall(frame(MSG_REGISTER, body))
    print(read_frame(s)[0], flush=True)
sys.stdin.read()
"""


def closed_by_peer(sock):
    try:
        while sock.recv(4096):
            pass
        return True
    except OSError:
        return True


class BadPeers(RmTestCase):
    def setUp(self):
        super().setUp()
        self.rm = self.start_rm()
        self.job = self.start_job([program("amdahl-clang"), "--iterations", "100000", "--work-ms", "10"],
                                  self.rm, request=2)
        wait_for(lambda: self.rm.job(self.job.pid), what="the job to register")

    def assert_still_serving(self):
        st = self.rm.status()
        self.assertEqual([j["pid"] for j in st["jobs"]], [self.job.pid])
        self.assertEqual(st["jobs"][0]["allocated"], 2)
        self.assertIsNone(self.rm.proc.poll(), "the RM died")

    def test_garbage_bytes(self):
        s = raw_connect(self.rm.socket)
        s.sendall(b"GET / HTTP/1.0\r\n\r\n" + bytes(range(256)))
        self.assertTrue(closed_by_peer(s))
        wait_for(lambda: "bad magic" in self.rm.messages_text(), what="an error line")
        self.assert_still_serving()

    def test_wrong_protocol_version(self):
        s = raw_connect(self.rm.socket)
        s.sendall(frame(CTL_REQUEST, b'{"cmd":"status"}', version=99))
        msg_type, body = read_reply(s)
        self.assertEqual(msg_type, REFUSED)
        self.assertIn(b"version", body)
        wait_for(lambda: "protocol version mismatch" in self.rm.messages_text(), what="an error line")
        self.assert_still_serving()

    def test_oversized_frame(self):
        s = raw_connect(self.rm.socket)
        s.sendall(frame(CTL_REQUEST, b"", length=1 << 30))
        msg_type, body = read_reply(s)
        self.assertEqual(msg_type, REFUSED)
        self.assertIn(b"too large", body)
        self.assert_still_serving()

    def test_short_register_message(self):
        s = raw_connect(self.rm.socket)
        s.sendall(frame(REGISTER, b"\x02\x00\x00\x00"))
        msg_type, body = read_reply(s)
        self.assertEqual(msg_type, REFUSED)
        self.assertIn(b"expected", body)
        self.assert_still_serving()

    def test_register_request_out_of_range(self):
        s = raw_connect(self.rm.socket)
        body = struct.pack("<iI", -5, 0) + b"evil\0".ljust(240, b"\0")
        s.sendall(frame(REGISTER, body))
        msg_type, reply = read_reply(s)
        self.assertEqual(msg_type, REFUSED)
        self.assertIn(b"request=-5", reply)
        self.assert_still_serving()

    def test_bad_json_and_unknown_command(self):
        for payload, expect in ((b"{not json", "not a JSON object"), (b'{"cmd": 3}', "cmd"),
                                (b'{"cmd": "explode"}', "unknown command"), (b'{"cmd": "why", "job": "x"}', "job")):
            s = raw_connect(self.rm.socket)
            s.sendall(frame(CTL_REQUEST, payload))
            msg_type, body = read_reply(s)
            self.assertEqual(msg_type, CTL_REPLY)
            reply = json.loads(body)
            self.assertFalse(reply["ok"])
            self.assertIn(expect, reply["error"])
        self.assert_still_serving()

    def test_wrongly_typed_fields(self):
        # {"cmd":"policy","name":123} used to abort the RM with an uncaught nlohmann::json::type_error.
        for payload, field in ((b'{"cmd":"policy","name":123}', "name"), (b'{"cmd":"policy","name":null}', "name"),
                               (b'{"cmd":"policy","name":[1]}', "name"), (b'{"cmd":"policy","name":true}', "name"),
                               (b'{"cmd":"set","params":{"step":[2]}}', "step"),
                               (b'{"cmd":"set","params":"step=2"}', "params"),
                               (b'{"cmd":"decisions","since":"now"}', "since"),
                               (b'{"cmd":"why","job":null}', "job")):
            s = raw_connect(self.rm.socket)
            s.sendall(frame(CTL_REQUEST, payload))
            msg_type, body = read_reply(s)
            self.assertEqual(msg_type, CTL_REPLY, payload)
            reply = json.loads(body)
            self.assertFalse(reply["ok"])
            self.assertIn(f"'{field}'", reply["error"])
        self.assert_still_serving()

    def test_unknown_message_type_is_refused(self):
        s = raw_connect(self.rm.socket)
        s.sendall(frame(9, b"{}"))
        msg_type, body = read_reply(s)
        self.assertEqual(msg_type, REFUSED)
        self.assertIn(b"unexpected message type 9", body)
        self.assert_still_serving()

    def test_second_register_frame(self):
        # Used to be refused, then the RM spun at 100 % CPU until the job disconnected.
        here = os.path.dirname(os.path.abspath(__file__))
        p = subprocess.Popen([sys.executable, "-c", TWICE, self.rm.socket, here], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
        try:
            self.assertEqual(p.stdout.readline().strip(), "2")  # register_ok
            self.assertEqual(p.stdout.readline().strip(), str(REFUSED))
            wait_for(lambda: self.rm.job(p.pid), what="the hand-made job to stay registered")
            assert_idle(self, self.rm.proc.pid)
            self.assertIn("second registration refused", self.rm.messages_text())
        finally:
            p.stdin.close()
            p.wait(timeout=10)
        wait_for(lambda: self.rm.job(p.pid) is None, what="the hand-made job to leave")
        self.assert_still_serving()

    def test_policy_errors_are_reported(self):
        r = self.rm.ctl("policy", "nosuch", check=False)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("unknown policy 'nosuch'", r.stderr)
        self.assert_still_serving()


class ParameterChanges(RmTestCase):
    def test_set_is_all_or_nothing(self):
        # `set high_eff=0.95 step=0` exited 1 but left high_eff = 0.95 applied.
        rm = self.start_rm(policy="pdpa")
        before = rm.status()["params"]
        r = rm.ctl("set", "high_eff=0.95", "step=0", check=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn("step='0'", r.stderr)
        self.assertEqual(rm.status()["params"], before)

        # Accepted together, in either order of constraint (target_eff < high_eff), then a new decision.
        decided = rm.status()["decisions"]
        rm.ctl("set", "target_eff=0.96", "high_eff=0.98", "step=3")
        params = rm.status()["params"]
        self.assertEqual((params["target_eff"], params["high_eff"], params["step"]), ("0.96", "0.98", "3"))
        wait_for(lambda: any(d["event"] == "param_change" for d in rm.decisions()), what="a param_change decision")
        self.assertGreater(rm.status()["decisions"], decided)


if __name__ == "__main__":
    unittest.main(verbosity=2)
