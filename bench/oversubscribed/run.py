#!/usr/bin/python3
"""Oversubscribed regions with and without libcosched lowering libomp's blocktime (docs/performance.md,
"Oversubscribed regions"; libruntime/spin_control.hpp).

    bench/oversubscribed/run.py BUILD_DIR [--repeats 5] [--threads 2] [--program amdahl-clang] [-- PROGRAM ARGS...]

Two copies of a program whose team is fixed at THREADS threads (cosched-run --fixed-team, OMP_NUM_THREADS) start
together under Equipartition on CPUs 0-1: each gets 1 CPU, so every region runs THREADS threads on 1 CPU. Variant
`yield` is libcosched as built; variant `spin` sets COSCHED_OVERSUBSCRIBED_YIELD=0 (libomp's blocktime left at
its default, 200 ms). The variants alternate, `repeats` times each; printed: each run's wall time (the later
of the two jobs' exits) and the median per variant, and their ratio. Nothing is asserted."""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

# A fixed amount of work (no calibration at start, which a busy machine would skew).
DEFAULT_ARGS = ["--serial-fraction", "0.3", "--iterations", "40", "--work-ms", "40", "--units-per-ms", "5000", "--quiet"]


def run_pair(build, program, threads, args, env_extra):
    tmp = tempfile.mkdtemp(prefix="cosched-oversub-")
    sock = os.path.join(tmp, "rm.sock")
    env = dict(os.environ, COSCHED_LOCK_DIR=os.path.join(tmp, "locks"))
    rm = subprocess.Popen([os.path.join(build, "rm", "cosched-rm"), "--foreground", "--socket", sock, "--cpus",
                           "0-1", "--policy", "equip", "--quantum-ms", "100"], env=env,
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(200):
            if os.path.exists(sock):
                break
            time.sleep(0.05)
        job_env = dict(env, OMP_NUM_THREADS=str(threads), **env_extra)
        cmd = [os.path.join(build, "libruntime", "launcher", "cosched-run"), "--socket", sock, "--request", "2", "--fixed-team", "--",
               os.path.join(build, "bin", program)] + args
        t0 = time.monotonic()
        jobs = [subprocess.Popen(cmd, env=job_env, stdout=subprocess.DEVNULL) for _ in range(2)]
        codes = [j.wait(timeout=600) for j in jobs]
        wall = time.monotonic() - t0
        if any(codes):
            raise SystemExit(f"a job failed: exit statuses {codes}")
        return wall
    finally:
        rm.terminate()
        rm.wait(timeout=20)
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("build", help="the build directory (build/release)")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--program", default="amdahl-clang", help="a program in BUILD/bin")
    ap.add_argument("--threads", type=int, default=2, help="each job's fixed team")
    ap.epilog = f"The program's arguments follow --; default: {' '.join(DEFAULT_ARGS)}"
    argv = sys.argv[1:]
    split = argv.index("--") if "--" in argv else len(argv)
    a = ap.parse_args(argv[:split])
    args = argv[split + 1:] or DEFAULT_ARGS
    variants = {"yield": {}, "spin": {"COSCHED_OVERSUBSCRIBED_YIELD": "0"}}
    walls = {name: [] for name in variants}
    for r in range(a.repeats):
        for name, extra in variants.items():
            walls[name].append(run_pair(a.build, a.program, a.threads, args, extra))
            print(f"repeat {r + 1} {name}: {walls[name][-1]:.2f} s", flush=True)
    med = {name: statistics.median(w) for name, w in walls.items()}
    print(f"{a.program} {' '.join(args)}, 2 jobs x {a.threads} threads on 1 CPU each, {a.repeats} repeats")
    for name in variants:
        print(f"  {name}: median {med[name]:.2f} s  ({', '.join(f'{w:.2f}' for w in walls[name])})")
    print(f"  yield / spin: {med['yield'] / med['spin']:.3f}")


if __name__ == "__main__":
    main()
