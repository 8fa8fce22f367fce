#!/usr/bin/python3
"""Bandwidth-aware co-scheduling on this machine (docs/performance.md, "Bandwidth-aware co-scheduling on this
machine"): the shape of Antonopoulos et al.'s experiments at 2 CPUs — two instances of an NPB kernel (relinked:
they report their analytic traffic, docs/npb.md) plus two microbenchmarks, one thread each, a fixed amount of
work each, all started together — run natively (Linux alone) and under cosched-rm with quanta-window, once with
the app-reported sensor and once with the counter-free one (app-reported bytes observed next to it with
--also-sensor app, never used by the policy). Sets (the paper's three, halved): A = 2 NPB + 2 BBMA, B = 2 NPB +
2 nBBMA, C = 2 NPB + BBMA + nBBMA; `micro` = 2 BBMA + 2 nBBMA (no NPB).

Prints per set each job kind's median turnaround and its ratio to native, and, from `status --json` sampled
during the counter-free runs, each kind's counter-free estimate against the bytes it reports.

    bench/bandwidth/coschedule.py --calibration FILE [--set A --set B --set C] [--repeat 3] [--build DIR]
        [--npb mg --npb-class W --npb-iterations 200] [--bbma-iterations 400] [--nbbma-iterations 3000] [--gang]
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
SETS = {"A": ["npb", "npb", "bbma", "bbma"], "B": ["npb", "npb", "nbbma", "nbbma"],
        "C": ["npb", "npb", "bbma", "nbbma"], "micro": ["bbma", "bbma", "nbbma", "nbbma"]}


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


def command(build, a, kind):
    bindir = os.path.join(build, "bin")
    if kind == "npb":
        return [os.path.join(bindir, f"npb-{a.npb}-clang-relinked"), a.npb_class, "--iterations", str(a.npb_iterations)]
    n = a.bbma_iterations if kind == "bbma" else a.nbbma_iterations
    return [os.path.join(bindir, kind), "--iterations", str(n), "--quiet"]


def kind_of(cmdline):
    prog = cmdline.split()[0].rsplit("/", 1)[-1]
    return "npb" if prog.startswith("npb-") else prog


def one_run(build, a, kinds, rm_args, sample):
    """Turnarounds {kind: [s, ...]}; with `sample`, (kind, app-reported, counter-free) triples from status."""
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
    else:
        env["COSCHED_SOCKET"] = "/nonexistent/rm.sock"
    procs = []
    t0 = time.monotonic()
    for kind in kinds:
        cmd = command(build, a, kind)
        if rm is not None:
            cmd = [os.path.join(build, "libruntime/launcher/cosched-run"), "--socket", sock, "--request", "1", "--"] + cmd
        procs.append((kind, subprocess.Popen(cmd, stdout=subprocess.DEVNULL, env=env)))
    ends = {}
    triples = []
    while len(ends) < len(procs):
        for i, (kind, p) in enumerate(procs):
            if i not in ends and p.poll() is not None:
                ends[i] = time.monotonic() - t0
        if sample and rm is not None:
            try:
                for j in status(sock)["jobs"]:
                    e = (j.get("bandwidth") or {}).get("estimates", {})
                    if "app-reported" in e and "counter-free" in e and j["state"] == "running":
                        triples.append((kind_of(j["command"]), e["app-reported"], e["counter-free"]))
            except OSError:
                pass
        time.sleep(0.2)
    for _, p in procs:
        p.wait()
    if rm is not None:
        rm.terminate()
        rm.wait()
    subprocess.run(["rm", "-rf", d])
    out = {}
    for i, (kind, _) in enumerate(procs):
        out.setdefault(kind, []).append(ends[i])
    return out, triples


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(HERE, "../../build/release"))
    ap.add_argument("--set", action="append", choices=sorted(SETS), help="job sets to run (default A, B, C)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--npb", default="mg", help="NPB kernel (relinked clang build), default mg")
    ap.add_argument("--npb-class", default="W")
    ap.add_argument("--npb-iterations", type=int, default=200)
    ap.add_argument("--bbma-iterations", type=int, default=400)
    ap.add_argument("--nbbma-iterations", type=int, default=3000)
    ap.add_argument("--calibration", required=True, help="calibration file (scripts/calibrate-bandwidth --output)")
    ap.add_argument("--gang", action="store_true", help="also run plain gang scheduling")
    a = ap.parse_args()
    sets = a.set or ["A", "B", "C"]
    runs = {"native (Linux)": None}
    if a.gang:
        runs["gang"] = ["--policy", "gang"]
    runs["quanta-window, app-reported"] = ["--policy", "quanta-window", "--sensor", "app", "--calibration", a.calibration]
    runs["quanta-window, counter-free"] = ["--policy", "quanta-window", "--sensor", "counter-free", "--also-sensor", "app",
                                           "--calibration", a.calibration]
    with open(a.calibration) as f:
        cal = json.load(f)
    print(f"calibration {a.calibration}: b {cal['thread_bandwidth'] / 1e9:.2f} GB/s, B {cal['mem_bandwidth'] / 1e9:.2f} GB/s, "
          f"k {cal['contention']}")
    for name in sets:
        kinds = SETS[name]
        with open("/proc/loadavg") as f:
            load0 = f.read().split()[0]
        times = {run: {} for run in runs}
        triples = []
        for _ in range(a.repeat):
            for run, args in runs.items():
                t, p = one_run(a.build, a, kinds, args, sample=run.endswith("counter-free"))
                for kind, v in t.items():
                    times[run].setdefault(kind, []).extend(v)
                triples += p
        present = sorted(set(kinds), key=kinds.index)
        native = {k: statistics.median(v) for k, v in times["native (Linux)"].items()}
        label = {"npb": f"{a.npb.upper()}.{a.npb_class}", "bbma": "BBMA", "nbbma": "nBBMA"}
        print(f"\nset {name}: {' + '.join(label[k] for k in kinds)}, {a.repeat} repeats, load {load0}")
        print("| run | " + " | ".join(f"{label[k]} s | vs native" for k in present) + " | all, vs native |")
        print("|---|" + "---|---|" * len(present) + "---|")
        for run in runs:
            cells = []
            for k in present:
                m = statistics.median(times[run][k])
                cells.append(f"{m:.2f} | {m / native[k]:.2f}")
            total = sum(statistics.median(times[run][k]) * kinds.count(k) for k in present)
            base = sum(native[k] * kinds.count(k) for k in present)
            print(f"| {run} | " + " | ".join(cells) + f" | {total / base:.2f} |")
        for k in present:
            p = [(x, y) for kk, x, y in triples if kk == k]
            if p:
                app = statistics.median(x for x, _ in p)
                cf = statistics.median(y for _, y in p)
                err = statistics.median(abs(y - x) for x, y in p)
                print(f"{label[k]}: {len(p)} status samples; app-reported median {app / 1e9:.2f} GB/s, counter-free "
                      f"median {cf / 1e9:.2f} GB/s, median |counter-free - app-reported| {err / 1e9:.2f} GB/s")
        with open("/proc/loadavg") as f:
            print(f"load average after: {f.read().split()[0]}")


if __name__ == "__main__":
    main()
