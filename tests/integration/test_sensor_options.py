#!/usr/bin/python3
"""The sensor layer's options on the real machine (docs/usage.md, cosched-rm options; docs/architecture.md,
"Sensors"):

- status states how often jobs are sampled: once per RM quantum, so 2 samples per 200 ms quanta-window
  quantum (Antonopoulos et al. §4: "twice per scheduling quantum"), with the window of 5 and the unit;
- --calibration FILE reads the counter-free sensor's b, B and k (B also the policies' bus capacity), explicit
  options win over it, and a malformed file is one error line naming the file and the field;
- --calibrate measures them at start with the microbenchmarks and saves them with --calibration FILE;
  scripts/calibrate-bandwidth --output writes a file the RM reads;
- --papi-event names a PAPI event instead of the presets: on a machine where PAPI cannot count it, one
  error naming the event under --sensor papi, and the reason PAPI is unavailable under auto;
- --also-sensor app shows what a program reports next to the counter-free estimate, which alone feeds the
  job's window.
"""
import json
import os
import subprocess
import tempfile
import time
import unittest

from harness import BUILD, BIN, RM, RmTestCase, program, wait_for

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "../.."))


def start_failure(*args):
    """cosched-rm that must refuse to start: (exit status, stderr)."""
    with tempfile.TemporaryDirectory(prefix="cosched-it-") as d:
        env = dict(os.environ, COSCHED_LOCK_DIR=os.path.join(d, "locks"))
        r = subprocess.run([RM, "--foreground", "--socket", os.path.join(d, "rm.sock"), "--cpus", "0-1"] + list(args),
                           capture_output=True, text=True, timeout=60, env=env)
    return r.returncode, r.stderr


def write_calibration(path, b=33.4e9, B=46.55e9, k=0.7):
    with open(path, "w") as f:
        json.dump({"cosched_calibration": 1, "thread_bandwidth": b, "mem_bandwidth": B, "contention": k,
                   "pair_bandwidth": 25.6e9, "by": "test"}, f)


class SensorOptions(RmTestCase):
    def setUp(self):
        super().setUp()
        self.dir = tempfile.mkdtemp(prefix="cosched-it-sensors-")

    def tearDown(self):
        super().tearDown()
        for f in os.listdir(self.dir):
            os.unlink(os.path.join(self.dir, f))
        os.rmdir(self.dir)

    def test_status_states_samples_per_quantum_window_and_unit(self):
        rm = self.start_rm(policy="quanta-window")
        s = rm.status()["sensor"]
        self.assertEqual(s["sampling"], {"every_ms": 100, "quantum_ms": 200, "samples_per_quantum": 2})
        self.assertEqual((s["window"], s["unit"]), (5, "bytes/s"))
        self.assertIn("2 sample(s) per 200 ms quantum, window 5, bytes/s", rm.ctl("status").stdout)
        # A policy without a quantum of its own: one sample per RM quantum.
        rm.ctl("policy", "equip")
        self.assertEqual(rm.status()["sensor"]["sampling"], {"every_ms": 100, "quantum_ms": 100, "samples_per_quantum": 1})

    def test_calibration_file_is_read_options_win_bad_files_are_one_error(self):
        path = os.path.join(self.dir, "cal.json")
        write_calibration(path)
        rm = self.start_rm("--calibration", path)
        st = rm.status()
        cal = st["sensor"]["calibration"]
        self.assertEqual((cal["thread_bandwidth"], cal["mem_bandwidth"], cal["contention"]), (33.4e9, 46.55e9, 0.7))
        self.assertEqual(cal["source"], f"file {path}")
        self.assertEqual(st["machine"]["mem_bandwidth"], 46.55e9)  # the policies' B too
        rm.stop()
        rm = self.start_rm("--calibration", path, "--contention", "2")
        cal = rm.status()["sensor"]["calibration"]
        self.assertEqual((cal["thread_bandwidth"], cal["contention"]), (33.4e9, 2))
        self.assertIn("options override", cal["source"])
        with open(path, "w") as f:
            f.write('{"cosched_calibration": 1, "thread_bandwidth": 3e10, "mem_bandwidth": "fast"}')
        rc, err = start_failure("--calibration", path)
        self.assertNotEqual(rc, 0)
        lines = [l for l in err.splitlines() if l.strip()]
        self.assertEqual(len(lines), 1, err)
        self.assertIn(path, lines[0])
        self.assertIn("mem_bandwidth", lines[0])

    def test_calibrate_at_start_measures_and_saves(self):
        out = os.path.join(self.dir, "measured.json")
        rm = self.start_rm("--calibrate", "--calibrate-seconds", "0.2", "--calibration", out, start_timeout=120)
        cal = rm.status()["sensor"]["calibration"]
        self.assertEqual(cal["source"], f"measured at start, saved to {out}")
        self.assertGreater(cal["thread_bandwidth"], 1e8)
        self.assertGreater(cal["mem_bandwidth"], 1e8)
        with open(out) as f:
            saved = json.load(f)
        self.assertEqual(saved["cosched_calibration"], 1)
        self.assertEqual((saved["thread_bandwidth"], saved["mem_bandwidth"]), (cal["thread_bandwidth"], cal["mem_bandwidth"]))
        self.assertEqual(saved["cpus"], "0-1")
        print(f"measured at start: b {cal['thread_bandwidth'] / 1e9:.1f} GB/s, B {cal['mem_bandwidth'] / 1e9:.1f} GB/s, "
              f"k {cal['contention']:.2f}")
        rc, err = start_failure("--calibrate", "--topology", "core:4 pu:1")
        self.assertNotEqual(rc, 0)
        self.assertIn("--calibrate", err)

    def test_the_scripts_file_is_what_the_rm_reads(self):
        out = os.path.join(self.dir, "script.json")
        subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "scripts/calibrate-bandwidth"), "--bin", BIN,
                        "--seconds", "0.2", "--repeat", "1", "--output", out], check=True, capture_output=True,
                       timeout=120)
        with open(out) as f:
            saved = json.load(f)
        rm = self.start_rm("--calibration", out)
        cal = rm.status()["sensor"]["calibration"]
        self.assertEqual((cal["thread_bandwidth"], cal["mem_bandwidth"]), (saved["thread_bandwidth"], saved["mem_bandwidth"]))

    def test_papi_event_replaces_the_presets(self):
        rm = self.start_rm("--papi-event", "COSCHED_NO_SUCH_EVENT")
        s = rm.status()["sensor"]
        why = {u["name"]: u["why"] for u in s["unavailable"]}
        self.assertNotIn("papi", s["chain"])
        self.assertIn("COSCHED_NO_SUCH_EVENT", why["papi"])
        rc, err = start_failure("--sensor", "papi", "--papi-event", "COSCHED_NO_SUCH_EVENT")
        self.assertNotEqual(rc, 0)
        self.assertIn("COSCHED_NO_SUCH_EVENT", err)

    def test_an_observed_sensor_is_shown_and_never_used(self):
        path = os.path.join(self.dir, "cal.json")
        write_calibration(path)
        rm = self.start_rm("--sensor", "counter-free", "--also-sensor", "app", "--calibration", path)
        self.assertEqual(rm.status()["sensor"]["observed"], ["app-reported"])
        job = self.start_job([program("bbma"), "--seconds", "30", "--quiet"], rm, request=1,
                             env={"OMP_NUM_THREADS": "1"})
        j = wait_for(lambda: (lambda j: j if j and (j["bandwidth"] or {}).get("estimates", {}).get("app-reported") else None)(
            rm.job(job.pid)), timeout=30, what="BBMA's reported rate in estimates")
        self.assertGreater(j["bandwidth"]["estimates"]["app-reported"], 1e9)
        self.assertNotEqual(j["bandwidth"]["source"], "app-reported")  # null, or counter-free once it reads
        job.kill()


if __name__ == "__main__":
    unittest.main()
