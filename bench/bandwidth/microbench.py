#!/usr/bin/python3
"""Memory bandwidth of this machine as the microbenchmarks see it (docs/performance.md, "Memory bandwidth"):
each configuration --runs times for --seconds, natively (no RM), medians of the bytes per wall second and per
CPU second of the program's threads (the rate while running: on a shared machine the two differ).

    bench/bandwidth/microbench.py [--bin DIR] [--runs 5] [--seconds 2]
"""
import argparse
import os
import statistics
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))


def result(text):
    line = [l for l in text.splitlines() if l.startswith("result ")][-1].split()
    return {line[i]: line[i + 1] for i in range(2, len(line) - 1, 2)}


def run(specs, secs, bindir):
    """[(program, cpus, threads)] started together; their result dicts."""
    procs = []
    for prog, cpus, threads in specs:
        env = dict(os.environ, OMP_NUM_THREADS=str(threads), KMP_AFFINITY="disabled", COSCHED_QUIET="1",
                   COSCHED_SOCKET="/nonexistent/rm.sock")
        procs.append(subprocess.Popen(["taskset", "-c", cpus, os.path.join(bindir, prog), "--seconds", str(secs),
                                       "--quiet"], stdout=subprocess.PIPE, text=True, env=env))
    return [result(p.communicate()[0]) for p in procs]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=os.path.join(HERE, "../../build/release/bin"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=2)
    a = ap.parse_args()
    configs = [
        ("bbma, 1 thread", [("bbma", "0", 1)]),
        ("bbma, 2 threads", [("bbma", "0-1", 2)]),
        ("nbbma, 1 thread", [("nbbma", "0", 1)]),
        ("stream-copy, 1 thread", [("stream-copy", "0", 1)]),
        ("stream-copy, 2 threads", [("stream-copy", "0-1", 2)]),
        ("bbma ‖ bbma (CPU 0 ‖ CPU 1)", [("bbma", "0", 1), ("bbma", "1", 1)]),
        ("bbma ‖ nbbma", [("bbma", "0", 1), ("nbbma", "1", 1)]),
        ("stream-copy ‖ stream-copy", [("stream-copy", "0", 1), ("stream-copy", "1", 1)]),
    ]
    with open("/proc/loadavg") as f:
        load0 = f.read().split()[0]
    print("| configuration | GB/s (wall), each program | GB/s per CPU second, each program |")
    print("|---|---|---|")
    for name, specs in configs:
        rows = [run(specs, a.seconds, a.bin) for _ in range(a.runs)]
        wall = [statistics.median(float(r[i]["gbps"]) for r in rows) for i in range(len(specs))]
        cpu = [statistics.median(float(r[i]["gbps_per_cpu"]) for r in rows) for i in range(len(specs))]
        print(f"| {name} | {' ‖ '.join(f'{w:.2f}' for w in wall)} | {' ‖ '.join(f'{c:.2f}' for c in cpu)} |", flush=True)
    with open("/proc/loadavg") as f:
        print(f"\nload average before / after: {load0} / {f.read().split()[0]}")


if __name__ == "__main__":
    main()
