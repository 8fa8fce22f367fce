#!/usr/bin/python3
"""How long a parent's waitpid() takes to reap a job that has already exited, while barrier-heavy jobs
whose waiting threads sleep at once (libomp's blocktime 0) share the CPUs (docs/performance.md, "Reaping a
job beside barrier-heavy jobs").

    bench/oversubscribed/reap_cost.py [--build build/release] [--jobs 30] [--mode cosched|native|unregistered]
                                      [--busy-under-cosched] [--rm-arg=--enforce=none ...]

Three busy jobs (team-patterns --pattern steps, a team of 2, KMP_BLOCKTIME=0, natively unless
--busy-under-cosched) run for the whole measurement. Then, one after another, --jobs short jobs (NPB EP class
S, OMP_NUM_THREADS=2) run: under cosched-run with a private Equipartition RM (mode cosched), under cosched-run
with no RM answering (unregistered: libcosched runs natively), or plain (native). For each, the time from the
moment its pidfd says it exited to the return of the blocking waitpid() that reaps it. Printed: the median,
the largest and how many took over 50 ms. Nothing is asserted; timings are never judged (docs/performance.md).
"""
import argparse
import os
import select
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(HERE, "../../build/release"), help="build tree (default build/release)")
    ap.add_argument("--jobs", type=int, default=30, help="short jobs reaped one after another (default 30)")
    ap.add_argument("--mode", choices=("cosched", "native", "unregistered"), default="cosched",
                    help="how the short jobs run (default cosched)")
    ap.add_argument("--busy-under-cosched", action="store_true",
                    help="the busy jobs run under cosched-run too (their blocktime is then libcosched's choice)")
    ap.add_argument("--rm-arg", action="append", default=[],
                    help="an extra cosched-rm argument, e.g. --rm-arg=--enforce=none (repeatable)")
    a = ap.parse_args()
    if a.jobs < 1:
        ap.error("--jobs must be positive")
    return a


def main():
    a = parse_args()
    bindir = os.path.join(os.path.abspath(a.build), "bin")
    for name in ("cosched-rm", "cosched-run", "team-patterns-clang", "npb-ep-clang"):
        if not os.path.exists(os.path.join(bindir, name)):
            sys.exit(f"reap_cost: {name} not found in {bindir} (build first: cmake --build --preset release)")
    tmp = tempfile.mkdtemp(prefix="cosched-reap-")
    sock = os.path.join(tmp, "rm.sock")
    env = dict(os.environ, OMP_NUM_THREADS="2", COSCHED_LOCK_DIR=os.path.join(tmp, "locks"))
    rm = None
    if a.mode == "cosched" or a.busy_under_cosched:
        rm_args = [arg.replace("=", " ", 1).split(" ") if arg.startswith("--") and "=" in arg else [arg] for arg in a.rm_arg]
        rm = subprocess.Popen([os.path.join(bindir, "cosched-rm"), "--foreground", "--policy", "equip", "--socket", sock]
                              + [x for pair in rm_args for x in pair], env=env, stderr=subprocess.DEVNULL)
        time.sleep(0.5)
    launch = [os.path.join(bindir, "cosched-run"), "--quiet", "--socket"]
    busy_cmd = ([] if not a.busy_under_cosched else launch + [sock, "--"]) + [
        os.path.join(bindir, "team-patterns-clang"), "--pattern", "steps", "--quiet", "--iterations", "1000000"]
    busy = [subprocess.Popen(busy_cmd, env=dict(env, KMP_BLOCKTIME="0"), stdout=subprocess.DEVNULL) for _ in range(3)]
    job_cmd = {"cosched": launch + [sock, "--"], "unregistered": launch + [sock + ".nobody", "--"], "native": []}[a.mode]
    job_cmd = job_cmd + [os.path.join(bindir, "npb-ep-clang"), "S"]
    costs = []
    try:
        time.sleep(0.5)
        for k in range(a.jobs):
            p = subprocess.Popen(job_cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            fd = os.pidfd_open(p.pid)
            select.select([fd], [], [])  # readable once the process has exited
            t = time.monotonic()
            os.waitpid(p.pid, 0)
            costs.append(time.monotonic() - t)
            p.returncode = 0  # reaped here, not by Popen
            os.close(fd)
            print(f"\r  {k + 1}/{a.jobs} reaped", end="", file=sys.stderr, flush=True)
        print(file=sys.stderr)
    finally:
        for b in busy:
            b.kill()
            b.wait()
        if rm is not None:
            rm.terminate()
            rm.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"mode {a.mode}{' (busy jobs under cosched)' if a.busy_under_cosched else ''} {' '.join(a.rm_arg)}: "
          f"{len(costs)} reaps, median {statistics.median(costs) * 1e3:.1f} ms, largest {max(costs) * 1e3:.1f} ms, "
          f"over 50 ms: {sum(c > 0.05 for c in costs)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
