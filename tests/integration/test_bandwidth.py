#!/usr/bin/python3
"""Memory bandwidth on the real machine: the sensor layer.

- The RM names the bandwidth sensor it uses in `cosched-ctl status` (and --json), and logs one line per
  hardware backend that does not work here, saying why. On a machine without a PMU (this CI's VM) that is
  the counter-free sensor; on one with a PMU, perf_event. The test states which and checks the log agrees.
"""
import json
import re
import unittest

from harness import RmTestCase


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


if __name__ == "__main__":
    unittest.main(verbosity=2)
