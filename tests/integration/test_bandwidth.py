#!/usr/bin/python3
"""Memory bandwidth on the real machine: the sensor layer.

- The RM names the bandwidth sensor it uses in `cosched-ctl status` (and --json), and logs one line per
  hardware backend that does not work here, saying why. On a machine without a PMU (this CI's VM) that is
  the counter-free sensor; on one with a PMU, perf_event. The test states which and checks the log agrees.
- A program that reports its traffic with cosched_report_bytes (the microbenchmarks) shows it in status:
  BBMA moves gigabytes per second, nBBMA next to nothing, in a window of at most 5 samples.
"""
import json
import re
import unittest

from harness import RmTestCase, program, wait_for

HIGH, LOW = "bbma", "nbbma"


class SensorChoice(RmTestCase):
    def test_status_names_the_sensor_and_the_log_says_why_others_are_not(self):
        rm = self.start_rm()
        sensor = rm.status()["sensor"]
        chain = sensor["chain"]
        unavailable = {u["name"]: u["why"] for u in sensor["unavailable"]}
        # Every hardware backend either works (in the chain) or is listed with a reason, logged once.
        for pmu in ("perf_event", "papi"):
            self.assertTrue(pmu in chain or unavailable.get(pmu), f"{pmu}: neither in {chain} nor explained")
        log = rm.messages_text()
        for name, why in unavailable.items():
            lines = [l for l in log.splitlines() if f"{name}: unavailable: " in l]
            self.assertEqual(len(lines), 1, f"one log line for {name}:\n{log}")
            self.assertIn(why, lines[0])
        # The honest first working backend: perf_event where there is a PMU, else PAPI, else counter-free
        # (app-reported serves only the programs that call it).
        expected = next((b for b in chain if b != "app-reported"), None)
        self.assertEqual(sensor["backend"], expected)
        if "perf_event" in unavailable and "papi" in unavailable:
            self.assertEqual(sensor["backend"], "counter-free")
            print(f"sensor here: counter-free (perf_event: {unavailable['perf_event']}; papi: {unavailable['papi']})")
        self.assertEqual(chain[-2:], ["app-reported", "counter-free"])
        self.assertEqual(sensor["unit"], "bytes/s")
        self.assertEqual(sensor["window"], 5)
        self.assertIn(f"sensor {sensor['backend']}", rm.ctl("status").stdout)
        self.assertEqual(json.loads(rm.ctl("status", "--json").stdout)["sensor"]["backend"], sensor["backend"])
        self.assertRegex(log, r"bandwidth sensor: " + re.escape(sensor["backend"]))


class AppReported(RmTestCase):
    def test_bbma_and_nbbma_report_their_traffic(self):
        rm = self.start_rm()
        env = {"OMP_NUM_THREADS": "1"}
        high = self.start_job([program(HIGH), "--seconds", "6", "--quiet"], rm, request=1, env=env)
        low = self.start_job([program(LOW), "--seconds", "6", "--quiet"], rm, request=1, env=env)

        def sampled(job, n):
            j = rm.job(job.pid)
            return j if j and j["bandwidth"] and j["bandwidth"]["samples"] >= n else None
        h = wait_for(lambda: sampled(high, 5), timeout=20, interval=0.1, what="5 samples of BBMA")
        l = wait_for(lambda: sampled(low, 5), timeout=20, interval=0.1, what="5 samples of nBBMA")
        print(f"BBMA {h['bandwidth']['window_bytes_per_s'] / 1e9:.2f} GB/s, "
              f"nBBMA {l['bandwidth']['window_bytes_per_s'] / 1e6:.3f} MB/s (app-reported, window of 5)")
        for j in (h, l):
            self.assertEqual(j["bandwidth"]["source"], "app-reported")
            self.assertEqual(j["bandwidth"]["samples"], 5)
            self.assertIn("app-reported", j["bandwidth"]["estimates"])
        self.assertGreater(h["bandwidth"]["window_bytes_per_s"], 1e9)  # gigabytes per second from memory
        self.assertLess(l["bandwidth"]["window_bytes_per_s"], 1e7)     # a cache-resident loop
        # Both ran with the SelfAnalyzer's explicit iterations: the counter-free sensor saw them too.
        self.assertIsNotNone(h["bandwidth"]["slowdown"])
        table = rm.ctl("status", "--format", "job,bw,bw_source,command").stdout
        self.assertIn("app-reported", table)
        for job in (high, low):
            self.assertEqual(job.wait(timeout=60), 0)


if __name__ == "__main__":
    unittest.main(verbosity=2)
