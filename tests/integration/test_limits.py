#!/usr/bin/python3
"""The RM under exhaustion: out of file descriptors, peers that leave frames half-sent. It must neither spin
nor flood its log, and it must serve again once the cause is gone."""
import os
import shutil
import signal
import socket
import subprocess
import time
import unittest

from harness import (MSG_CTL_REPLY, MSG_CTL_REQUEST, MSG_REFUSED, RmTestCase, frame, program, raw_connect,
                     read_frame, wait_for)
from test_protocol import assert_idle


def try_status(path):
    """The status reply, or None when the RM refused or did not answer."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(5)
            s.connect(path)
            s.sendall(frame(MSG_CTL_REQUEST, b'{"cmd":"status"}'))
            msg_type, _ = read_frame(s)
            return msg_type == MSG_CTL_REPLY
    except OSError:
        return False


class Exhaustion(RmTestCase):
    def test_out_of_file_descriptors(self):
        # Under 64 fds and 100 idle connections, accept() failed with EMFILE in a tight loop: 100 % CPU,
        # ~450,000 log lines a second, and `status` timed out.
        if shutil.which("prlimit") is None:
            self.skipTest("prlimit (util-linux) not installed")
        rm = self.start_rm("--client-timeout-ms", "1500")
        subprocess.run(["prlimit", f"--pid={rm.proc.pid}", "--nofile=64:64"], check=True)
        t0 = time.monotonic()
        held = [raw_connect(rm.socket) for _ in range(100)]
        wait_for(lambda: "Too many open files" in rm.messages_text(), what="the RM to run out of fds")
        assert_idle(self, rm.proc.pid)
        # Peers beyond the limit are told why at once instead of waiting in the backlog.
        refused = 0
        for s in held:
            s.setblocking(False)
            try:
                head = s.recv(16)
                refused += len(head) == 16
            except BlockingIOError:
                pass
        self.assertGreater(refused, 0, "no peer was told the RM is out of fds")
        # The idle ones are dropped after --client-timeout-ms, and the RM serves again.
        wait_for(lambda: try_status(rm.socket), timeout=30, what="status to be answered again")
        elapsed = time.monotonic() - t0
        lines = [l for l in rm.messages_text().splitlines() if "accept:" in l]
        self.assertLessEqual(len(lines), 3 * (elapsed + 1), f"{len(lines)} accept lines in {elapsed:.1f} s")
        self.assertIn("no request", rm.messages_text())
        for s in held:
            s.close()

    def test_half_sent_frame_times_out(self):
        rm = self.start_rm("--client-timeout-ms", "300")
        s = raw_connect(rm.socket)
        s.settimeout(30)
        s.sendall(frame(MSG_CTL_REQUEST, b'{"cmd":"status"}')[:10])
        msg_type, body = read_frame(s)
        self.assertEqual(msg_type, MSG_REFUSED)
        self.assertIn(b"half-sent", body)
        self.assertEqual(s.recv(1), b"")  # then closed
        s.close()
        self.assertIn("a frame left half-sent", rm.messages_text())
        self.assertTrue(try_status(rm.socket))


class DecisionHistory(RmTestCase):
    def test_history_keeps_changes_and_the_log_keeps_everything(self):
        # Each history entry used to list every running job, so one `decisions` reply reached 32 MB.
        rm = self.start_rm()
        first = self.start_job([program("amdahl-clang"), "--iterations", "100000", "--work-ms", "10"], rm, request=1)
        wait_for(lambda: rm.job(first.pid), what="the first job")
        second = self.start_job([program("amdahl-clang"), "--iterations", "100000", "--work-ms", "10"], rm,
                                request=1)
        wait_for(lambda: rm.job(second.pid), what="the second job")
        second_id = rm.job(second.pid)["id"]
        history = rm.request({"cmd": "decisions"})["decisions"]
        arrival = [d for d in history if d["event"] == "arrival" and d["subject"] == second_id]
        self.assertEqual(len(arrival), 1, history)
        self.assertEqual([j["id"] for j in arrival[0]["jobs"]], [second_id], "only what changed")
        logged = wait_for(lambda: [d for d in rm.decisions() if d["event"] == "arrival" and
                                   d["subject"] == second_id], what="the arrival in the --log file")
        self.assertEqual(len(logged[0]["jobs"]), 2, "the log file lists every job")


class RealTimePriority(RmTestCase):
    """--rt-priority: the RM runs at SCHED_FIFO, guarded by RLIMIT_RTTIME, and a SIGXCPU (what the kernel sends
    when the guard's soft limit is reached) returns it to normal scheduling while it keeps serving."""

    @staticmethod
    def policy_and_priority(pid):
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        # After "(comm)": field 3 (state) is fields[0], so field N is fields[N - 3]; 40 rt_priority, 41 policy.
        return int(fields[41 - 3]), int(fields[40 - 3])

    def test_fifo_guarded_and_demoted_by_sigxcpu(self):
        rm = self.start_rm("--rt-priority", "3")
        wait_for(lambda: "SCHED_FIFO" in rm.messages_text() or "normal priority" in rm.messages_text(),
                 what="the RM to set its scheduling")
        if "staying at normal priority" in rm.messages_text():
            self.skipTest("no permission for SCHED_FIFO here (CAP_SYS_NICE, or a cgroup without real-time runtime)")
        self.assertEqual(self.policy_and_priority(rm.proc.pid), (1, 3), "SCHED_FIFO at priority 3")
        with open(f"/proc/{rm.proc.pid}/limits") as f:
            line = next(l for l in f if l.startswith("Max realtime timeout"))
        self.assertEqual(line.split()[3:5], ["200000", "2000000"], line)
        self.assertEqual(rm.status()["realtime"], 3)
        # Jobs are still served while it is real-time.
        job = self.start_job([program("amdahl-clang"), "--iterations", "20", "--work-ms", "2"], rm=rm)
        self.assertEqual(job.wait(timeout=60), 0)

        os.kill(rm.proc.pid, signal.SIGXCPU)
        wait_for(lambda: self.policy_and_priority(rm.proc.pid) == (0, 0), what="the RM back at SCHED_OTHER")
        self.assertIsNone(rm.status()["realtime"])
        wait_for(lambda: "back to normal scheduling" in rm.messages_text(), what="the demotion in the log")
        self.assertIsNone(rm.proc.poll(), "the RM survives the demotion")

    def test_off_by_default(self):
        rm = self.start_rm()
        self.assertEqual(self.policy_and_priority(rm.proc.pid)[0], 0)
        self.assertIsNone(rm.status()["realtime"])


if __name__ == "__main__":
    unittest.main(verbosity=2)
