#!/usr/bin/python3
"""The RM trusts nothing on its socket: garbage, wrong versions, oversized or short frames and bad JSON each
give one error line and a dropped connection, while the RM keeps serving real jobs."""
import json
import struct
import unittest

from harness import (MSG_CTL_REPLY as CTL_REPLY, MSG_CTL_REQUEST as CTL_REQUEST, MSG_REFUSED as REFUSED,
                     MSG_REGISTER as REGISTER, RmTestCase, frame, program, raw_connect, read_frame as read_reply,
                     wait_for)


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

    def test_policy_errors_are_reported(self):
        r = self.rm.ctl("policy", "nosuch", check=False)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("unknown policy 'nosuch'", r.stderr)
        self.assert_still_serving()


if __name__ == "__main__":
    unittest.main(verbosity=2)
