#!/usr/bin/python3
"""What `sbatch --cosched` costs the processes of a batch script that never enter OpenMP (docs/slurm.md):
the batch step preloads LLVM's libomp (and, as before, libcosched_wrap, which loads libcosched) into every
process the script starts. Times N runs of each command under three environments, interleaved (one run of
each in turn, so that load from elsewhere falls on all three alike), and prints the median and the mean
wall and CPU time of one run per environment, and the medians of the paired wall differences.

    bench/slurm/preload_cost.py [--runs 1000] [--build build/release] [--cosched-run] [-- COMMAND ...]

Environments:
  native   the script's environment without cosched
  wrap     what a batch step got before libomp was preloaded there (the wrappers, OMP_TOOL_LIBRARIES, ...)
  libomp   what it gets now: the same, with libomp.so.5 ahead of everything else in LD_PRELOAD
With --cosched-run, the same three through cosched-run itself (docs/usage.md: it preloads libomp into
every program that does not bring libomp itself):
  native   the command alone
  wrap     `cosched-run --no-gomp -- COMMAND`: what cosched-run did before (no libomp for a program
           without OpenMP among its libraries)
  libomp   `cosched-run -- COMMAND`: what it does now
cosched-run's own start (reading the program's libraries) is in both cosched-run figures.
The commands default to /bin/true and Debian's `python3 -c pass`.
"""
import argparse
import os
import statistics
import subprocess
import time


def environments(build, libomp):
    wrap = os.path.join(build, "wrappers/libcosched_wrap.so")
    tool = os.path.join(build, "libruntime/libcosched.so")
    for path in (wrap, tool, libomp):
        if not os.path.exists(path):
            raise SystemExit(f"preload_cost.py: {path} is missing (build first, or give --build/--libomp)")
    base = {k: v for k, v in os.environ.items() if not k.startswith(("COSCHED_", "OMP_TOOL", "KMP_"))
            and k != "LD_PRELOAD"}
    # An RM socket nobody listens on: a process that entered OpenMP would start libcosched, which would say
    # "no resource manager" on stderr; one_run fails on any stderr output.
    cosched = dict(base, COSCHED_SOCKET="/nonexistent/rm.sock", COSCHED_REQUEST="2", OMP_TOOL="enabled",
                   OMP_TOOL_LIBRARIES=tool, KMP_AFFINITY="disabled", COSCHED_JOB="slurm:1")
    return {
        "native": base,
        "wrap": dict(cosched, LD_PRELOAD=wrap),
        "libomp": dict(cosched, LD_PRELOAD=f"{wrap}:{libomp}", COSCHED_GOMP="1"),
    }


def launcher_environments(build):
    run = os.path.join(build, "libruntime/launcher/cosched-run")
    if not os.path.exists(run):
        raise SystemExit(f"preload_cost.py: {run} is missing (build first, or give --build)")
    base = {k: v for k, v in os.environ.items() if not k.startswith(("COSCHED_", "OMP_TOOL", "KMP_"))
            and k != "LD_PRELOAD"}
    base["COSCHED_SOCKET"] = "/nonexistent/rm.sock"
    return {"native": ([], base), "wrap": ([run, "--no-gomp", "--"], base), "libomp": ([run, "--"], base)}


def one_run(argv, env):
    """(wall s, CPU s) of one run: the CPU time (user + system, from wait4) is what the process itself
    used, less disturbed by the other load on a shared machine than the wall time."""
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = p.stderr.read()
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    p.stderr.close()
    if p.returncode != 0 or err:
        raise SystemExit(f"preload_cost.py: {' '.join(argv)} exited {p.returncode}: {err.decode(errors='replace')}")
    return wall, usage.ru_utime + usage.ru_stime


def measure(argv, envs, runs):
    times = {name: ([], []) for name in envs}
    for _ in range(runs):
        for name, env in envs.items():
            prefix, env = env if isinstance(env, tuple) else ([], env)
            wall, cpu = one_run(prefix + argv, env)
            times[name][0].append(wall)
            times[name][1].append(cpu)
    return times


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=1000)
    ap.add_argument("--build", default=os.path.join(os.path.dirname(__file__), "../../build/release"))
    ap.add_argument("--libomp", default="/usr/lib/llvm-14/lib/libomp.so.5")
    ap.add_argument("--cosched-run", action="store_true", help="measure through cosched-run (see above)")
    ap.add_argument("command", nargs="*")
    args = ap.parse_args()
    commands = [args.command] if args.command else [["/bin/true"], ["/usr/bin/python3", "-c", "pass"]]
    build = os.path.abspath(args.build)
    envs = launcher_environments(build) if args.cosched_run else environments(build, args.libomp)
    print(f"{args.runs} runs of each, interleaved; ms per run, median (mean) of the wall time, then of the "
          f"CPU time; the median of the paired wall differences")
    pairs = (("wrap", "native"), ("libomp", "wrap"), ("libomp", "native"))
    for argv in commands:
        t = measure(argv, envs, args.runs)
        print(f"{' '.join(argv)}:")
        for name, (wall, cpu) in t.items():
            print(f"  {name:7s} wall {statistics.median(wall) * 1e3:7.3f} ({statistics.mean(wall) * 1e3:7.3f})"
                  f"  cpu {statistics.median(cpu) * 1e3:7.3f} ({statistics.mean(cpu) * 1e3:7.3f})")
        for a, b in pairs:
            d = statistics.median(x - y for x, y in zip(t[a][0], t[b][0])) * 1e3
            print(f"  {a} - {b}: wall {d:+.3f}")

if __name__ == "__main__":
    main()
