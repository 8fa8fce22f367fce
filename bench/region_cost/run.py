#!/usr/bin/python3
"""Per-region cost of empty outermost parallel regions, native vs the same binary under cosched with a
running RM, alternating runs; prints medians, lower quartiles and the ratio (docs/performance.md, "Per-region cost"),
and the paired differences: each cosched run minus the native run just before it (and an empty OMPT tool's
runs, the floor any tool with libcosched's callbacks pays), whose median is the least
touched by this kind of host's slow and fast periods (a pair shares one), both for the runs' medians and for
their fastest repetitions.

  bench/region_cost/run.py [--build DIR] [--runs N] [--regions N] [--threads T] [--other-build DIR]
"""
import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time


def run(cmd, env, cpus):
    # Every variant on the same CPUs (the RM's): on a machine with more, native threads would otherwise
    # float onto other cores, whose cache-line transfers cost another time than the RM's pair.
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True,
                         preexec_fn=lambda: os.sched_setaffinity(0, cpus)).stdout
    fields = out.split()
    return (float(fields[fields.index("region_us") + 1]), int(fields[fields.index("team") + 1]),
            float(fields[fields.index("min_us") + 1]))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(os.path.dirname(__file__), "../../build/release"),
                    help="build tree, or an install prefix with the bench's programs added (default build/release)")
    ap.add_argument("--runs", type=int, default=7, help="alternating runs per variant (default 7)")
    ap.add_argument("--regions", type=int, default=200000, help="regions per repetition (default 200000)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--other-build", help="also run the clang binary under the cosched-run (and so the libcosched) "
                    "of this other build tree, against the same RM: two versions side by side")
    a = ap.parse_args()
    b = os.path.abspath(a.build)
    # bin/ holds every program in the build tree (links) and in an install prefix with the bench's own
    # programs copied in (region_cost-*, and lib/libregion_cost_empty_tool.so): a machine without the tree.
    rm_bin, run_bin = f"{b}/bin/cosched-rm", f"{b}/bin/cosched-run"
    libomp = subprocess.run(["sh", "-c", "ls /usr/lib/llvm-*/lib/libomp.so.5 | head -1"], capture_output=True,
                            text=True).stdout.strip()
    tmp = tempfile.mkdtemp(prefix="cosched-bench-")
    sock = os.path.join(tmp, "rm.sock")
    cpus = f"0-{a.threads - 1}"
    rm = subprocess.Popen([rm_bin, "--foreground", "--socket", sock, "--cpus", cpus, "--log-level", "warn"],
                          stderr=subprocess.DEVNULL)
    try:
        while not os.path.exists(sock):
            time.sleep(0.02)
        base = dict(os.environ, OMP_NUM_THREADS=str(a.threads), KMP_AFFINITY="disabled")
        variants = {
            "clang native": ([f"{b}/bin/region_cost-clang"], base),
            "clang cosched": ([run_bin, "--socket", sock, "--", f"{b}/bin/region_cost-clang"], base),
            "clang empty OMPT tool": ([f"{b}/bin/region_cost-clang"],
                                      dict(base, OMP_TOOL_LIBRARIES=f"{b}/lib/libregion_cost_empty_tool.so")),
            "gcc-on-libomp native": ([f"{b}/bin/region_cost-gcc"], dict(base, LD_PRELOAD=libomp)),
            "gcc cosched": ([run_bin, "--socket", sock, "--", f"{b}/bin/region_cost-gcc"], base),
            "gcc empty OMPT tool": ([f"{b}/bin/region_cost-gcc"],
                                    dict(base, LD_PRELOAD=libomp,
                                         OMP_TOOL_LIBRARIES=f"{b}/lib/libregion_cost_empty_tool.so")),
        }
        if a.other_build:
            other_run = os.path.join(os.path.abspath(a.other_build), "libruntime/launcher/cosched-run")
            if not os.path.exists(other_run):
                other_run = os.path.join(os.path.abspath(a.other_build), "bin/cosched-run")
            variants["clang cosched, other build"] = ([other_run, "--socket", sock, "--", f"{b}/bin/region_cost-clang"], base)
        results = {k: [] for k in variants}
        fastest = {k: [] for k in variants}  # each run's fastest repetition
        for i in range(a.runs):
            for name, (cmd, env) in variants.items():
                us, team, min_us = run(cmd + ["--regions", str(a.regions)], env, range(a.threads))
                if team != a.threads:
                    sys.exit(f"{name}: regions ran with {team} threads, expected {a.threads}")
                results[name].append(us)
                fastest[name].append(min_us)
            print(f"run {i + 1}/{a.runs}: " + ", ".join(f"{k} {v[-1]:.4f}" for k, v in results.items()),
                  file=sys.stderr)
    finally:
        rm.send_signal(signal.SIGTERM)
        rm.wait()
    med = {k: statistics.median(v) for k, v in results.items()}
    # The lower quartile too: on a shared host the runs fall into a fast and a slow cluster (the other vCPU
    # descheduled), and which one the median lands in is luck; the fast cluster is the cost itself.
    p25 = {k: statistics.quantiles(v, n=4)[0] if len(v) >= 2 else v[0] for k, v in results.items()}
    print(f"{'variant':24} {'median us/region':>16} {'p25':>8} {'min':>8} {'max':>8}")
    for k, v in results.items():
        print(f"{k:24} {med[k]:16.4f} {p25[k]:8.4f} {min(v):8.4f} {max(v):8.4f}")
    for compiler, native in (("clang", "clang native"), ("gcc", "gcc-on-libomp native")):
        ours = f"{compiler} cosched"
        print(f"{compiler}: cosched/native = {med[ours] / med[native]:.3f}, overhead = {med[ours] - med[native]:+.4f} "
              f"us/region (median), {p25[ours] - p25[native]:+.4f} (p25), {min(results[ours]) - min(results[native]):+.4f} (min)")
        paired = [o - n for o, n in zip(results[ours], results[native])]
        paired_fast = [o - n for o, n in zip(fastest[ours], fastest[native])]
        print(f"{compiler}: paired differences, median {statistics.median(paired):+.4f} us/region "
              f"(runs' medians), {statistics.median(paired_fast):+.4f} (runs' fastest repetitions) over {len(paired)} pairs")
    # What any OMPT tool with libcosched's callbacks costs libomp, and what libcosched adds to that.
    for compiler, native in (("clang", "clang native"), ("gcc", "gcc-on-libomp native")):
        empty, ours = f"{compiler} empty OMPT tool", f"{compiler} cosched"
        floor = [e - n for e, n in zip(results[empty], results[native])]
        above = [o - e for o, e in zip(results[ours], results[empty])]
        print(f"{compiler}: empty OMPT tool over native, paired median {statistics.median(floor):+.4f} us/region; "
              f"cosched over the empty tool {statistics.median(above):+.4f}")
    empty, native, ours = "clang empty OMPT tool", "clang native", "clang cosched"
    if a.other_build:
        other = "clang cosched, other build"
        vs_native = [o - n for o, n in zip(results[other], results[native])]
        vs_ours = [c - o for c, o in zip(results[ours], results[other])]
        print(f"clang: other build over native, paired median {statistics.median(vs_native):+.4f} us/region; "
              f"this build minus the other {statistics.median(vs_ours):+.4f}")


if __name__ == "__main__":
    main()
