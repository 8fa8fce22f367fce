#!/usr/bin/python3
"""The co-scheduling policies on this machine with real rates (docs/performance.md, "Co-scheduling with learned
pairs on this machine"): four one-thread jobs on 2 CPUs under cosched-rm with a co-scheduling policy and the
real progress-rate sensor (app-reported work for the microbenchmarks, the SelfAnalyzer's iterations for the
relinked NPB kernels). Samples `cosched-ctl pairs --json` every second and prints the pair ranking and each
job's rate alone from the last sample taken while all four ran, the turnaround of each job, and the decision
log's groups.

    bench/coschedule/learned_pairs.py [--build DIR] [--policy symbiotic] [--set bbma|npb] [--seconds 20]
        [--param k=v ...]

Sets: bbma = BBMA, BBMA, nBBMA, nBBMA (ids 1-4); npb = BBMA, nBBMA, NPB CG class A, NPB EP class A.
"""
import argparse
import json
import os
import subprocess
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "../.."))


def jobs_of(name, seconds):
    if name == "bbma":
        return [["bbma", "--seconds", str(seconds), "--quiet"]] * 2 + [["nbbma", "--seconds", str(seconds), "--quiet"]] * 2
    # About `seconds` of wall time each under time sharing with four jobs on two CPUs (half a CPU each).
    return [["bbma", "--seconds", str(seconds), "--quiet"], ["nbbma", "--seconds", str(seconds), "--quiet"],
            ["npb-cg-clang-relinked", "A", "--iterations", str(int(12 * seconds))],
            ["npb-ep-clang-relinked", "A"]]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build/release"))
    ap.add_argument("--policy", default="symbiotic")
    ap.add_argument("--set", default="bbma", choices=["bbma", "npb"])
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--param", action="append", default=[])
    a = ap.parse_args()
    bindir = os.path.join(a.build, "bin")
    d = tempfile.mkdtemp(prefix="cosched-pairs-")
    sock = os.path.join(d, "rm.sock")
    log = os.path.join(d, "decisions.jsonl")
    env = dict(os.environ, OMP_NUM_THREADS="1", COSCHED_QUIET="1", COSCHED_SOCKET=sock,
               COSCHED_LOCK_DIR=os.path.join(d, "locks"))
    rm = subprocess.Popen([os.path.join(bindir, "cosched-rm"), "--foreground", "--socket", sock, "--cpus", "0-1",
                           "--policy", a.policy, "--log", log] + sum((["--param", p] for p in a.param), []),
                          env=env, stdout=subprocess.DEVNULL, stderr=open(os.path.join(d, "rm.err"), "w"))
    while not os.path.exists(sock):
        time.sleep(0.05)
    procs = []
    for argv in jobs_of(a.set, a.seconds):
        t0 = time.time()
        procs.append((argv[0], t0, subprocess.Popen([os.path.join(bindir, "cosched-run"), "--request", "1", "--",
                                                     os.path.join(bindir, argv[0])] + argv[1:], env=env,
                                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)))
        time.sleep(0.3)
    last = None
    ends = {}
    while len(ends) < len(procs):
        r = subprocess.run([os.path.join(bindir, "cosched-ctl"), "--socket", sock, "pairs", "--json"],
                           capture_output=True, text=True)
        if r.returncode == 0:
            p = json.loads(r.stdout)
            if p["pairs"] and len(p["pairs"]["jobs"]) == len(procs):
                last = p
        for i, (name, t0, proc) in enumerate(procs):
            if i not in ends and proc.poll() is not None:
                ends[i] = time.time() - t0
        time.sleep(1)
    subprocess.run([os.path.join(bindir, "cosched-ctl"), "--socket", sock, "shutdown"], capture_output=True)
    rm.wait(timeout=20)
    print(f"policy {a.policy}, set {a.set}: jobs " + ", ".join(f"{i + 1} {n}" for i, (n, _, _) in enumerate(procs)))
    if last:
        print("pairs, worst first (cost = ŝ(i|j) + ŝ(j|i), samples):")
        for r in last["ranked"]:
            print(f"  {r['jobs'][0]}+{r['jobs'][1]}  {r['cost']:.3f}  ({r['slowdowns'][0]:.3f}, "
                  f"{r['slowdowns'][1]:.3f})  n={r['samples']}")
        for j in last["pairs"]["jobs"]:
            print(f"  job {j['id']}: rate alone {j['alone_per_s']} /s ({j['source']}), progress {j['progress']:.1f}")
        x = last["pairs"]["exploration"]
        print(f"  exploration: {x['explored']} of {x['quanta']} quanta, predicted cost {x['predicted_cost']:.3f}")
    groups = {}
    with open(log) as f:
        for line in f:
            e = json.loads(line)
            if e["event"] == "quantum" and "groups" in e:
                for g in e["groups"]:
                    key = "+".join(str(i) for i in sorted(g))
                    groups[key] = groups.get(key, 0) + 1
    print("groups at quantum ticks: " + ", ".join(f"{k} {v}" for k, v in sorted(groups.items())))
    print("turnaround: " + ", ".join(f"{procs[i][0]} {t:.1f} s" for i, t in sorted(ends.items())))


if __name__ == "__main__":
    main()
