#!/usr/bin/python3
"""What a Slurm site can do with one node and a queue of OpenMP jobs that each ask for every CPU, side by side
(docs/performance.md, "Under Slurm"):

  exclusive  OverSubscribe=EXCLUSIVE: one job at a time (what most sites do)
  force      OverSubscribe=FORCE: every job at once, the kernel time-shares the oversubscribed threads
  gang       PreemptMode=GANG, SchedulerTimeSlice: Slurm suspends and resumes whole jobs in turn
  equip      cosched through the SPANK plugin, cosched-rm --policy equip (OverSubscribe=FORCE)
  pdpa       cosched through the SPANK plugin, cosched-rm --policy pdpa gating the node (--slurm-node), with
             cosched-slurm-prolog announcing each job and SchedulerParameters=sched_max_job_start=1,sched_interval=2 (docs/slurm.md)

Each configuration gets a fresh private cluster (tests/integration/slurm_cluster.py) and replays the same SWF
burst with `qsubmit --backend slurm` (so its numbers come from Slurm's job-completion records). Reported:
mean response time, makespan and CPU utilisation (the CPU time the jobs' processes used, user + system, as
/usr/bin/time reports it, over the node's CPUs × the makespan), each also as a ratio against `exclusive`; and
whether every job verified (NPB's own check).

    bench/slurm/compare.py --jobs 6 --class W --out /tmp/slurm-bench

A long measurement can be split into several calls (each with its own --out, the same workload options) and
summarised together: `compare.py --combine DIR1 DIR2 ...` reports the medians over all their runs.
"""
import argparse
import json
import shutil
import statistics
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "../.."))
sys.path.insert(0, os.path.join(ROOT, "tests/integration"))
from slurm_cluster import NODE, SlurmCluster  # noqa: E402

CONFIGS = ("exclusive", "force", "gang", "equip", "pdpa")
KERNELS = ("cg", "mg", "ft", "ep", "is", "bt")


def write_workload(path, jobs, cpus, kernels):
    with open(path, "w") as f:
        f.write(f"; Version: 2.2\n; MaxProcs: {cpus}\n; Note: bench/slurm/compare.py: a burst of NPB kernels, "
                f"each asking for every CPU\n")
        for i in range(jobs):
            exe = kernels.index(kernels[i % len(kernels)]) + 1
            f.write(f"{i + 1} 0 -1 -1 {cpus} -1 -1 {cpus} -1 -1 1 -1 -1 {exe} -1 -1 -1 -1\n")


def write_catalog(path, kernels, npb_class, build):
    with open(path, "w") as f:
        f.write("apps:\n")
        for i, k in enumerate(kernels):
            f.write(f"  {i + 1}:\n    name: {k}.{npb_class}\n    class: {k}\n"
                    f"    command: [\"/usr/bin/time\", \"-f\", \"bench-cpu %U %S\", \"{build}/bin/npb-{k}-clang\", "
                    f"\"{npb_class}\"]\n")


def run_config(name, args, workload, catalog, build, out_root):
    cpus = args.cpus
    partition_extra = ""
    extra = []
    oversubscribe = f"FORCE:{args.jobs}"
    plugin = os.path.join(build, "slurm/spank_cosched.so")
    tmp = tempfile.mkdtemp(prefix=f"bench-{name}-")
    os.chmod(tmp, 0o755)
    sock = os.path.join(tmp, "rm.sock")
    prolog = None
    if name == "exclusive":
        oversubscribe = "EXCLUSIVE"
    elif name == "gang":
        extra = ["PreemptType=preempt/none", "PreemptMode=GANG", f"SchedulerTimeSlice={args.time_slice}"]
    elif name == "pdpa":
        # The dynamic level as docs/slurm.md sets it up: one start per scheduling cycle, each start announced.
        extra = ["SchedulerParameters=sched_max_job_start=1,sched_interval=2"]
        prolog = os.path.join(tmp, "prolog")
        with open(os.path.join(tmp, "prolog.conf"), "w") as f:
            f.write(f"SOCKET={sock}\nCOSCHED_RM={build}/bin/cosched-rm\nLOCK_FILE={tmp}/prolog.lock\n")
        with open(prolog, "w") as f:
            f.write(f"#!/bin/sh\nCOSCHED_PROLOG_CONF={tmp}/prolog.conf exec {ROOT}/slurm/cosched-slurm-prolog\n")
        os.chmod(prolog, 0o755)
    cluster = SlurmCluster(cpus=cpus, oversubscribe=oversubscribe, plugin=plugin, plugin_args=f"socket={sock}",
                           extra=extra, partition_extra=partition_extra, prolog=prolog)
    rm = None
    try:
        env = dict(cluster.env, COSCHED_LOCK_DIR=os.path.join(tmp, "locks"))
        if name in ("equip", "pdpa"):
            cmd = [os.path.join(build, "rm/cosched-rm"), "--foreground", "--socket", sock, "--policy", name,
                   "--log", os.path.join(tmp, "decisions.jsonl")]
            if name == "pdpa":
                cmd += ["--slurm-node", NODE]
            rm = subprocess.Popen(cmd, env=env, stdout=open(os.path.join(tmp, "rm.err"), "w"),
                                  stderr=subprocess.STDOUT)
            deadline = time.monotonic() + 10
            while not os.path.exists(sock) and time.monotonic() < deadline:
                time.sleep(0.05)
        out = os.path.join(out_root, name)
        qsubmit = [os.path.join(build, "qs/qsubmit/qsubmit"), "--backend", "slurm", workload, "--catalog", catalog,
                   "--out", out, "--label", name, "--quiet"]
        if name not in ("equip", "pdpa"):
            qsubmit.append("--native")
        t0 = time.monotonic()
        r = subprocess.run(qsubmit, env=env, capture_output=True, text=True)
        wall = time.monotonic() - t0
        if r.returncode != 0:
            print(f"{name}: qsubmit exited {r.returncode}: {r.stderr.strip()}", file=sys.stderr)
        with open(os.path.join(out, "summary.json")) as f:
            summary = json.load(f)
        verified = 0
        cpu_s = 0.0
        for j in range(1, args.jobs + 1):
            for ext in ("out", "err"):
                path = os.path.join(out, "jobs", f"{j}.{ext}")
                text = open(path, errors="replace").read() if os.path.exists(path) else ""
                verified += "VERIFICATION SUCCESSFUL" in text
                for line in text.splitlines():
                    if line.startswith("bench-cpu "):
                        cpu_s += sum(float(x) for x in line.split()[1:3])
        makespan = summary["overall"]["makespan"]
        return {"mean_response": summary["overall"]["mean_response"], "makespan": makespan,
                "busy": cpu_s / (cpus * makespan) if makespan else float("nan"), "cpu_s": cpu_s, "wall": wall,
                "verified": verified, "completed": summary["overall"]["completed"], "exit": r.returncode}
    finally:
        if rm is not None:
            rm.terminate()
            rm.wait(timeout=20)
        cluster.stop()
        # The RM's log and decisions stay with the run's results; the rest (its socket, the prolog) goes.
        kept = os.path.join(out_root, name)
        if os.path.isdir(kept):
            for src, dst in (("rm.err", "cosched-rm.log"), ("decisions.jsonl", "cosched-rm-decisions.jsonl")):
                if os.path.exists(os.path.join(tmp, src)):
                    shutil.copy(os.path.join(tmp, src), os.path.join(kept, dst))
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--jobs", type=int, default=6, help="jobs in the burst (default 6)")
    p.add_argument("--class", dest="npb_class", default="W", help="NPB class (default W)")
    p.add_argument("--kernels", default=",".join(KERNELS), help="kernels, cycled over the jobs")
    p.add_argument("--configs", default=",".join(CONFIGS), help="configurations, comma-separated")
    p.add_argument("--cpus", type=int, default=os.cpu_count(), help="the node's CPUs (default: this machine's)")
    p.add_argument("--time-slice", type=int, default=5, help="gang: SchedulerTimeSlice in seconds (default 5)")
    p.add_argument("--repeat", type=int, default=1,
                   help="run the configurations in turn this many times and report medians (default 1)")
    p.add_argument("--build", default=os.path.join(ROOT, "build/release"), help="cosched build tree")
    p.add_argument("--out", default=None, help="where the runs go (default: a new temporary directory)")
    p.add_argument("--combine", nargs="+", metavar="DIR",
                   help="run nothing: report the medians over the runs of earlier calls' --out directories")
    args = p.parse_args()
    if args.combine:
        return combine(p, args.combine)
    kernels = args.kernels.split(",")
    configs = args.configs.split(",")
    for c in configs:
        if c not in CONFIGS:
            p.error(f"--configs: unknown configuration '{c}' (known: {', '.join(CONFIGS)})")
    out_root = args.out or tempfile.mkdtemp(prefix="slurm-bench-")
    os.makedirs(out_root, exist_ok=True)
    workload = os.path.join(out_root, "burst.swf")
    catalog = os.path.join(out_root, "catalog.yaml")
    write_workload(workload, args.jobs, args.cpus, kernels)
    write_catalog(catalog, kernels, args.npb_class, args.build)
    runs = {c: [] for c in configs}
    for rep in range(args.repeat):
        # In turn, so that a change in the shared machine's load hits every configuration alike.
        for c in configs:
            runs[c].append(run_config(c, args, workload, catalog, args.build,
                                      os.path.join(out_root, f"rep{rep + 1}") if args.repeat > 1 else out_root))
            print(f"{c}: {json.dumps(runs[c][-1])}", flush=True)
    results = report(runs, args.jobs, f"{','.join(kernels)} class {args.npb_class}", args.cpus)
    with open(os.path.join(out_root, "compare.json"), "w") as f:
        json.dump({"args": vars(args), "results": results, "runs": runs}, f, indent=1)
    print(f"\nruns: {out_root}")


def report(runs, jobs, workload, cpus):
    """Prints the medians of each configuration's runs, and their ratios against exclusive; returns them."""
    results = {c: {k: statistics.median(r[k] for r in rs) for k in rs[0]} for c, rs in runs.items() if rs}
    base = results.get("exclusive")
    counts = sorted({len(rs) for rs in runs.values() if rs})
    print(f"\n{jobs} jobs ({workload}), each asking for {cpus} CPUs, submitted at once; node of {cpus} CPUs; "
          f"medians of {'/'.join(map(str, counts))} run(s) (ranges: min-max)")
    print(f"{'config':<10} {'mean resp s':>18} {'makespan s':>16} {'busy':>6} {'resp/excl':>9} {'mksp/excl':>9} "
          f"{'busy/excl':>9} {'verified':>8}")
    for c, r in results.items():
        ratio = (lambda k: r[k] / base[k] if base and base[k] else float("nan"))
        span = (lambda k, f: f"{min(x[k] for x in runs[c]):{f}}-{max(x[k] for x in runs[c]):{f}}")
        print(f"{c:<10} {r['mean_response']:>6.2f} ({span('mean_response', '.1f'):>9}) "
              f"{r['makespan']:>5.1f} ({span('makespan', '.0f'):>7}) {r['busy']:>6.2f} "
              f"{ratio('mean_response'):>9.2f} {ratio('makespan'):>9.2f} {ratio('busy'):>9.2f} "
              f"{r['verified']:>5.0f}/{jobs}")
    return results


def combine(parser, dirs):
    runs = {}
    shape = None
    for d in dirs:
        path = os.path.join(d, "compare.json")
        try:
            with open(path) as f:
                data = json.load(f)
        except (OSError, ValueError) as e:
            parser.error(f"--combine: {path}: {e}")
        a = data["args"]
        this = (a["jobs"], a["kernels"], a["npb_class"], a["cpus"])
        if shape is not None and this != shape:
            parser.error(f"--combine: {path}: another workload ({this} against {shape})")
        shape = this
        for c, rs in data["runs"].items():
            runs.setdefault(c, []).extend(rs)
    order = [c for c in CONFIGS if c in runs]
    report({c: runs[c] for c in order}, shape[0], f"{shape[1]} class {shape[2]}", shape[3])


if __name__ == "__main__":
    main()
