#!/usr/bin/python3
"""The daemon's CPU cost per quantum while it time-shares 64 jobs (docs/performance.md, "Time sharing").

    bench/time_sharing/daemon_cost.py BUILD_DIR [JOBS] [SECONDS] [POLICY] [STOP_WITH]

Starts cosched-rm (2 CPUs, --quantum-ms 100) with POLICY (gang), JOBS (64) Amdahl jobs asking for 2 CPUs
each, waits until all are admitted, then reads the RM's own CPU time (utime + stime, /proc) and its decision
count over SECONDS (10) and prints CPU time per quantum and per decision. Under gang on 2 CPUs every quantum
stops one job and resumes another."""
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time

build = sys.argv[1]
jobs_n = int(sys.argv[2]) if len(sys.argv) > 2 else 64
seconds = float(sys.argv[3]) if len(sys.argv) > 3 else 10
policy = sys.argv[4] if len(sys.argv) > 4 else "gang"
stop_with = sys.argv[5] if len(sys.argv) > 5 else "auto"


def status(path):
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.connect(path)
        body = json.dumps({"cmd": "status"}).encode()
        s.sendall(struct.pack("<IHHII", 0x43534844, 1, 4, len(body), 0) + body)
        header = b""
        while len(header) < 16:
            header += s.recv(16 - len(header))
        n = struct.unpack("<IHHII", header)[3]
        data = b""
        while len(data) < n:
            data += s.recv(n - len(data))
    return json.loads(data)


def cpu_s(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


d = tempfile.mkdtemp(prefix="cosched-bench-")
sock = os.path.join(d, "rm.sock")
rm = subprocess.Popen([os.path.join(build, "rm/cosched-rm"), "--foreground", "--socket", sock, "--cpus", "0-1",
                       "--policy", policy, "--stop-with", stop_with, "--quantum-ms", "100"],
                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
procs = []
try:
    while not os.path.exists(sock):
        time.sleep(0.05)
    for _ in range(jobs_n):
        procs.append(subprocess.Popen([os.path.join(build, "libruntime/launcher/cosched-run"), "--socket", sock,
                                       "--request", "2", "--quiet", "--", os.path.join(build, "bin/amdahl-clang"),
                                       "--work-ms", "10", "--iterations", "1000000", "--quiet"],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    while len(status(sock)["jobs"]) < jobs_n:
        time.sleep(0.2)
    time.sleep(1)
    s0, c0, t0 = status(sock), cpu_s(rm.pid), time.monotonic()
    time.sleep(seconds)
    s1, c1, t1 = status(sock), cpu_s(rm.pid), time.monotonic()
    quanta = (s1["uptime_s"] - s0["uptime_s"]) / 0.1
    decisions = s1["decisions"] - s0["decisions"]
    stops = sum(j["stops"] for j in s1["jobs"]) - sum(j["stops"] for j in s0["jobs"])
    print(f"policy {policy}, stopping {s1['stopping']}, {jobs_n} jobs, {t1 - t0:.1f} s: RM CPU {c1 - c0:.3f} s, "
          f"{quanta:.0f} quanta, {decisions} decisions, {stops} resumes: "
          f"{(c1 - c0) / quanta * 1e3:.3f} ms CPU per quantum, {(c1 - c0) / max(decisions, 1) * 1e3:.3f} ms per decision")
finally:
    for p in procs:
        try:
            p.send_signal(signal.SIGKILL)
        except ProcessLookupError:
            pass
    rm.send_signal(signal.SIGTERM)
    rm.wait()
    for p in procs:
        p.wait()
    shutil.rmtree(d, ignore_errors=True)
