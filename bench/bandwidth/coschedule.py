#!/usr/bin/python3
"""Bandwidth-aware co-scheduling on this machine (docs/performance.md, "Bandwidth-aware co-scheduling on this
machine"): two BBMAs and two nBBMAs of one thread each, a fixed amount of work each, on 2 CPUs, run natively
(Linux alone) and under cosched-rm with gang, quanta-window (app-reported bytes; counter-free) and
quanta-window pick=random. Prints each job kind's mean turnaround per run, its ratio to native, and, for the
counter-free run, the counter-free estimate next to the bytes the programs report.

    bench/bandwidth/coschedule.py [--build DIR] [--repeat 3] [--bbma-iterations 300] [--nbbma-iterations 700]
"""
import argparse
import json
import os
import socket
import statistics
import struct
import subprocess
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def result(text):
    line = [l for l in text.splitlines() if l.startswith("result ")][-1].split()
    return {line[i]: line[i + 1] for i in range(2, len(line) - 1, 2)}


def status(sock):
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(10)
        s.connect(sock)
        payload = json.dumps({"cmd": "status"}).encode()
        s.sendall(struct.pack("<IHHII", 0x43534844, 1, 4, len(payload), 0) + payload)
        head = b""
        while len(head) < 16:
            head += s.recv(16 - len(head))
        n = struct.unpack("<IHHII", head)[3]
        body = b""
        while len(body) < n:
            body += s.recv(n - len(body))
    return json.loads(body)


def bbma_rate(bindir):
    env = dict(os.environ, OMP_NUM_THREADS="1", COSCHED_QUIET="1", COSCHED_SOCKET="/nonexistent/rm.sock")
    return statistics.median(float(result(subprocess.run(["taskset", "-c", "0", os.path.join(bindir, "bbma"),
                                                          "--seconds", "1", "--quiet"], env=env, capture_output=True,
                                                         text=True).stdout)["gbps"]) for _ in range(3)) * 1e9


def one_run(build, a, rm_args, sample):
    """Turnarounds {kind: [s, s]} of the four jobs; with `sample`, the (app, counter-free) estimate pairs."""
    bindir = os.path.join(build, "bin")
    jobs = [("bbma", a.bbma_iterations), ("bbma", a.bbma_iterations), ("nbbma", a.nbbma_iterations),
            ("nbbma", a.nbbma_iterations)]
    d = tempfile.mkdtemp(prefix="cosched-bw-")
    sock = os.path.join(d, "rm.sock")
    rm = None
    env = dict(os.environ, OMP_NUM_THREADS="1", COSCHED_QUIET="1", KMP_AFFINITY="disabled",
               COSCHED_LOCK_DIR=os.path.join(d, "locks"))
    if rm_args is not None:
        rm = subprocess.Popen([os.path.join(build, "rm/cosched-rm"), "--foreground", "--socket", sock, "--cpus", "0-1",
                               "--log-level", "warn"] + rm_args, env=env, stderr=subprocess.DEVNULL)
        while not os.path.exists(sock):
            time.sleep(0.02)
    procs = []
    t0 = time.monotonic()
    for kind, n in jobs:
        cmd = [os.path.join(bindir, kind), "--iterations", str(n), "--quiet"]
        if rm is not None:
            cmd = [os.path.join(build, "libruntime/launcher/cosched-run"), "--socket", sock, "--request", "1", "--"] + cmd
        else:
            env["COSCHED_SOCKET"] = "/nonexistent/rm.sock"
        procs.append((kind, subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env=env)))
    ends = {}
    pairs = []
    while len(ends) < len(procs):
        for i, (kind, p) in enumerate(procs):
            if i not in ends and p.poll() is not None:
                ends[i] = time.monotonic() - t0
        if sample and rm is not None:
            try:
                for j in status(sock)["jobs"]:
                    e = (j.get("bandwidth") or {}).get("estimates", {})
                    if "app-reported" in e and "counter-free" in e and j["state"] == "running":
                        pairs.append((j["command"].split()[0].rsplit("/", 1)[-1], e["app-reported"], e["counter-free"]))
            except OSError:
                pass
        time.sleep(0.2)
    for _, p in procs:
        p.communicate()
    if rm is not None:
        rm.terminate()
        rm.wait()
    subprocess.run(["rm", "-rf", d])
    out = {}
    for i, (kind, _) in enumerate(procs):
        out.setdefault(kind, []).append(ends[i])
    return out, pairs


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(HERE, "../../build/release"))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--bbma-iterations", type=int, default=300)
    ap.add_argument("--nbbma-iterations", type=int, default=700)
    ap.add_argument("--calibration", default="", help="cosched-rm options from scripts/calibrate-bandwidth")
    a = ap.parse_args()
    b = bbma_rate(os.path.join(a.build, "bin"))
    cal = a.calibration.split() if a.calibration else ["--thread-bandwidth", f"{b:.0f}", "--mem-bandwidth", f"{b:.0f}"]
    runs = {
        "native (Linux)": None,
        "gang": ["--policy", "gang"],
        "quanta-window, app-reported": ["--policy", "quanta-window", "--sensor", "app", "--mem-bandwidth", f"{b:.0f}"],
        "quanta-window, counter-free": ["--policy", "quanta-window", "--sensor", "auto"] + cal,
        "quanta-window pick=random": ["--policy", "quanta-window", "--param", "pick=random", "--mem-bandwidth", f"{b:.0f}"],
    }
    with open("/proc/loadavg") as f:
        load0 = f.read().split()[0]
    times = {name: {"bbma": [], "nbbma": []} for name in runs}
    pairs = []
    for _ in range(a.repeat):
        for name, args in runs.items():
            t, p = one_run(a.build, a, args, sample=name == "quanta-window, counter-free")
            for kind in t:
                times[name][kind] += t[kind]
            pairs += p
    native = {k: statistics.median(v) for k, v in times["native (Linux)"].items()}
    print(f"BBMA alone here: {b / 1e9:.2f} GB/s (B given to the policies); counter-free calibration: {' '.join(cal)}")
    print("| run | BBMA turnaround, s (median) | vs native | nBBMA turnaround, s | vs native | both, vs native |")
    print("|---|---|---|---|---|---|")
    for name in runs:
        tb, tn = statistics.median(times[name]["bbma"]), statistics.median(times[name]["nbbma"])
        both = (tb + tn) / (native["bbma"] + native["nbbma"])
        print(f"| {name} | {tb:.2f} | {tb / native['bbma']:.2f} | {tn:.2f} | {tn / native['nbbma']:.2f} | {both:.2f} |")
    for kind in ("bbma", "nbbma"):
        p = [(app, cf) for k, app, cf in pairs if k == kind]
        if p:
            app = statistics.median(x for x, _ in p)
            cf = statistics.median(y for _, y in p)
            err = statistics.median(abs(y - x) for x, y in p)
            print(f"{kind}: {len(p)} status samples; app-reported median {app / 1e9:.3f} GB/s, counter-free median "
                  f"{cf / 1e9:.3f} GB/s, median |counter-free - app-reported| {err / 1e9:.3f} GB/s")
    with open("/proc/loadavg") as f:
        print(f"load average before / after: {load0} / {f.read().split()[0]}")


if __name__ == "__main__":
    main()
