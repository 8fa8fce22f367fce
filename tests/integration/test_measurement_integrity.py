#!/usr/bin/python3
"""Measurement integrity under outside load (docs/selfanalyzer.md, "Outside load" and "Comparing like with
like"): the demo's two programs run under PDPA while busy loops that cosched does not control come and go
(0.7 s out of every 1.5 s on both CPUs). At the baseline size the efficiency is 1 by definition: the reports
in status --json must stay within [0.8, 1.25]; without the checks they read 1.4 to 3.2. And PDPA must not give
the serial job a second CPU more than once while its history says that CPU was wasted."""
import subprocess
import threading
import time
import unittest

from harness import RmTestCase, program, wait_for

WORK = ["--iterations", "100000", "--work-ms", "20", "--quiet"]


class OutsideLoad:
    """Two shell busy loops, on for 0.7 s every 1.5 s, started and stopped here (bounded by `close`)."""

    def __init__(self):
        self.stop = threading.Event()
        self.procs = []
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        while not self.stop.is_set():
            self.procs = [subprocess.Popen(["/bin/sh", "-c", "while :; do :; done"]) for _ in range(2)]
            self.stop.wait(0.7)
            self.kill()
            self.stop.wait(0.8)

    def kill(self):
        for p in self.procs:
            p.kill()
            p.wait()
        self.procs = []

    def close(self):
        self.stop.set()
        self.thread.join(timeout=10)
        self.kill()


class MeasurementUnderOutsideLoad(RmTestCase):
    def test_baseline_efficiency_stays_near_one_and_history_holds_back_the_serial_job(self):
        rm = self.start_rm(policy="pdpa", quantum_ms=100)
        load = OutsideLoad()
        try:
            serial = self.start_job([program("amdahl-gcc"), "--serial-fraction", "1.0"] + WORK, rm, request=2,
                                    launcher=["--malleable"])
            scalable = self.start_job([program("amdahl-clang"), "--serial-fraction", "0"] + WORK, rm, request=2,
                                      launcher=["--malleable"])
            readings = {serial.pid: [], scalable.pid: []}
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                for pid, seen in readings.items():
                    j = rm.job(pid)
                    if j and j["efficiency"] is not None and j["measured_cpus"] == 1:
                        seen.append((j["reports"], j["efficiency"]))
                time.sleep(0.2)
        finally:
            load.close()
        for pid, seen in readings.items():
            values = sorted({e for _, e in seen})
            self.assertTrue(values, f"job {pid} never reported at its 1-CPU baseline size")
            outside = [e for e in values if not 0.8 <= e <= 1.25]
            self.assertEqual(outside, [], f"job {pid}: efficiencies at 1 CPU against a 1-CPU baseline: {values}")
        # The serial job's allocation over the run, from the decision log: at most one claim of a second CPU
        # after it was first measured at 2 CPUs with an efficiency near 0.5.
        allocations = []
        for d in rm.decisions():
            for j in d["jobs"]:
                if j["id"] == rm_job_id(rm, serial.pid) and (not allocations or allocations[-1] != j["allocated"]):
                    allocations.append(j["allocated"])
        regrowths = sum(1 for a, b in zip(allocations, allocations[1:]) if a == 1 and b == 2)
        self.assertLessEqual(regrowths, 1, f"serial job's allocations: {allocations}")
        why = [w["reason"] for w in rm.request({"cmd": "why", "job": rm_job_id(rm, serial.pid)})["decisions"]]
        print("serial job:", allocations, "| contaminated samples:",
              (rm.job(serial.pid) or {}).get("contaminated_samples"))
        self.assertTrue(why, "why lists the serial job's decisions")


_ids = {}


def rm_job_id(rm, pid):
    if pid not in _ids:
        _ids[pid] = wait_for(lambda: (rm.job(pid) or {}).get("id"), what=f"job id of pid {pid}")
    return _ids[pid]


if __name__ == "__main__":
    unittest.main(verbosity=2)
