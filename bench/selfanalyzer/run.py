#!/usr/bin/python3
"""SelfAnalyzer estimates against the truth, on every program the project can run.

For each program in the list below it measures:

  truth    natively (no RM, libcosched disabled): OMP_NUM_THREADS=1 pinned to one CPU, then OMP_NUM_THREADS=P
           on P CPUs. The program's own time (NPB "Time in seconds", amdahl/tasks "done ... time T",
           stream-copy "seconds S", gmx "Wall t"; the process's wall time for team-patterns) gives the true
           speedup S = T1/TP and the true efficiency E = S/P. The P-thread run's result (NPB's verification,
           the checksum, team-patterns' check, gmx's energy file) is what every cosched run must reproduce.
  alone    under a private cosched-rm on the first P CPUs (--policy, --baseline), started with cosched-run and
           OMP_NUM_THREADS=P, while `cosched-ctl status --json` is polled every --poll seconds (every
           --fast-poll seconds during the first 1.5 s, where the first estimates come);
  beside   the same with a companion job beside it under the same RM (amdahl-clang, serial fraction 0,
           2000 s of work, killed when the measured program ends).

Per program and run, one row (docs/selfanalyzer.md, "Waiting-time efficiency" and "Two estimates"):
  est?      whether an estimate was reported: a poll with an efficiency whose measured_cpus equals allocated
            (with --repeats, "k/N" when only k of N repeats had one);
  first s   seconds from the program's start to the first such poll;
  est E     the median efficiency of the polls whose measured_cpus is P; err = |est E - true E|;
  wt err    |median waiting_time.efficiency where waiting_time.cpus == P - true E|;
  ms err    the same for measured_speedup.efficiency (measurements marked failed left out);
  max S     the largest speedup status ever published, at the CPUs it was measured at; a speedup above its
            measured_cpus by more than 10 % is impossible: flagged IMPOSSIBLE, and the exit status is 1;
  time/nat  the program's own time under cosched over its native P-thread time, from a third run alone
            under cosched that nobody polls (a poll costs a few ms of CPU); alone only;
  result    ok when it equals the native P-thread run's;
  kind      estimate_kind@measured_cpus of every estimate polled, in the order they appeared.
Then a summary: coverage, the median and maximum errors over the compute-bound programs (marked * in the
table), the number of impossible speedups, the median time ratio against native, the share of its CPU the
native 1-thread runs received (below ~95 %, another load shared the CPUs and the truth is noisy: use
--repeats), and every mismatch. Another cosched-rm on the same CPUs blocks this one (CPU locks): the script
waits for it up to 5 minutes, then stops.
Timings are reported, never judged: the exit status is 0 when every result matched native and no
impossible speedup was seen, 1 otherwise, 2 for bad options.

Programs (BUILD/bin; * compute-bound): npb-{ep*,cg,mg,is,ft} A, npb-bt* W, npb-cg-spmd A, tasks fib* and
fine, team-patterns steps and setnum, amdahl* with serial fraction 0, 0.25, 0.5, 0.75, 1, stream-copy,
and gromacs (`gmx mdrun -reprod` of a water box built with gmx solvate/grompp; only where gmx is on PATH
and the CPU has rdtscp, a skipped row otherwise). --quick: NPB class W (BT stays W; class S runs for
hundredths of a second, too short for any estimate) and shorter runs of the others: a minute or two in all.

  bench/selfanalyzer/run.py                           # every program, P = every CPU we may use, PDPA
  bench/selfanalyzer/run.py --quick --only amdahl,tasks
  bench/selfanalyzer/run.py --only npb --repeats 3 --json sa.json
  bench/selfanalyzer/run.py --policy equip --baseline always --cpus 2
"""
import argparse
import hashlib
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PROG = "run.py"
TOLERANCE = 0.10  # rm/job/estimate.cpp's kSpeedupTolerance: a speedup above its CPUs by more is impossible
FAST_POLL_S = 1.5  # --fast-poll applies to the first 1.5 s of a run, where first estimates come (~80 ms on)
RM_WAIT_S = 300  # how long to wait for another RM to release the CPUs before giving up
COMPANION = ["amdahl-clang", "--serial-fraction", "0", "--iterations", "100000", "--work-ms", "20", "--quiet"]

LIVE = []  # every process group this script started and has not reaped yet


class Parser(argparse.ArgumentParser):
    def error(self, message):
        sys.stderr.write(f"{PROG}: error: {message} (see --help)\n")
        sys.exit(2)


class Fatal(Exception):
    pass


# ---------------------------------------------------------------------------------------------------- programs

class Program:
    def __init__(self, name, argv, compute_bound, kind, skip=None):
        self.name, self.argv, self.compute_bound, self.kind, self.skip = name, argv, compute_bound, kind, skip
        self.units_per_ms = None  # amdahl: the calibration of its first run, given to every later run

    def command(self, threads, run_dir):
        argv = [x.replace("{threads}", str(threads)).replace("{dir}", run_dir) for x in self.argv]
        if self.units_per_ms is not None:
            argv += ["--units-per-ms", self.units_per_ms]
        return argv


def find_program(build, name):
    for path in [os.path.join(build, "bin", name)] + [os.path.join(build, "libexec/cosched", sub, name) for sub in
                                                       ("npb", "synthetic", "correctness", "microbench")]:
        if os.access(path, os.X_OK):
            return path
    return None


def cpu_has_rdtscp():
    try:
        with open("/proc/cpuinfo") as f:
            return any(line.startswith("flags") and "rdtscp" in line.split(":", 1)[1].split() for line in f)
    except OSError:
        return False


def program_list(a):
    q = a.quick
    cls = "W" if q else "A"  # class S runs for hundredths of a second: too short for any estimate
    out = []

    def add(name, binary, args, compute_bound, kind):
        path = find_program(a.build, binary)
        skip = None if path else f"{binary} not found under {a.build}"
        out.append(Program(name, [path or binary] + args, compute_bound, kind, skip))

    for kernel, bound in (("ep", True), ("cg", False), ("mg", False), ("is", False), ("ft", False)):
        add(f"npb-{kernel}-clang {cls}", f"npb-{kernel}-clang", [cls], bound, "npb")
    add("npb-bt-clang W", "npb-bt-clang", ["W"], True, "npb")
    add(f"npb-cg-spmd-clang {cls}", "npb-cg-spmd-clang", [cls], False, "npb")
    add("tasks-clang fib", "tasks-clang",
        ["--mode", "fib", "--quiet", "--size", "34", "--steps", "120" if q else "400"], True, "tasks")
    add("tasks-clang fine", "tasks-clang", ["--mode", "fine", "--quiet", "--steps", "400" if q else "1500"],
        False, "tasks")
    add("team-patterns-clang steps", "team-patterns-clang",
        ["--pattern", "steps", "--quiet", "--iterations", "200" if q else "1000"], False, "team")
    add("team-patterns-clang setnum", "team-patterns-clang",
        ["--pattern", "setnum", "--threads", "{threads}", "--quiet", "--iterations", "2000" if q else "8000"],
        False, "team")
    for f in ("0", "0.25", "0.5", "0.75", "1.0"):
        add(f"amdahl-clang F={f}", "amdahl-clang", ["--serial-fraction", f, "--iterations", "25" if q else "60",
                                                   "--work-ms", "40", "--quiet"], True, "amdahl")
    add("stream-copy", "stream-copy", ["--size-mb", "256", "--iterations", "12" if q else "40", "--quiet"],
        False, "stream")
    gmx = shutil.which("gmx")
    skip = None if gmx and cpu_has_rdtscp() else (
        "gmx not on PATH (Debian package gromacs)" if not gmx else
        "this CPU lacks rdtscp, which Debian's gmx mdrun needs")
    out.append(Program("gromacs", [gmx or "gmx", "-quiet", "mdrun", "-s", "{tpr}", "-ntmpi", "1", "-ntomp",
                                   "{threads}", "-pin", "off", "-reprod", "-nsteps", "100" if q else "600",
                                   "-deffnm", "{dir}/gmx"], False, "gmx", skip))
    return out


def build_water_box(gmx, d):
    """A 648-water box, PME, no thermostat: bitwise reproducible with -reprod (the idea of bench/real-apps)."""
    os.makedirs(d, exist_ok=True)

    def run(*args):
        r = subprocess.run([gmx, "-quiet"] + list(args), cwd=d, capture_output=True, text=True, timeout=300)
        if r.returncode != 0:
            raise Fatal(f"gmx {args[0]} failed: {(r.stderr or r.stdout).strip().splitlines()[-1:]}")

    run("solvate", "-cs", "spc216.gro", "-box", "2.7", "2.7", "2.7", "-o", "water.gro")
    with open(os.path.join(d, "water.gro")) as f:
        waters = sum(1 for line in f if line[10:15].strip() == "OW")
    with open(os.path.join(d, "topol.top"), "w") as f:
        f.write('#include "oplsaa.ff/forcefield.itp"\n#include "oplsaa.ff/spc.itp"\n\n'
                f"[ system ]\nwater\n\n[ molecules ]\nSOL {waters}\n")
    with open(os.path.join(d, "md.mdp"), "w") as f:
        f.write("integrator = md\ndt = 0.002\nnsteps = 100\ncutoff-scheme = Verlet\ncoulombtype = PME\n"
                "rcoulomb = 0.8\nrvdw = 0.8\ntcoupl = no\npcoupl = no\ngen-vel = no\n"
                "nstcalcenergy = 50\nnstenergy = 50\nnstlog = 500\n")
    run("grompp", "-f", "md.mdp", "-c", "water.gro", "-p", "topol.top", "-o", "md.tpr")
    return os.path.join(d, "md.tpr")


# ---------------------------------------------------------------------------------------------------- outputs

def own_time(kind, text):
    """The program's own timed section, in seconds, or None (then the process's wall time is used)."""
    patterns = {"npb": r"Time in seconds\s*=\s*([0-9.eE+-]+)",
                "amdahl": r"^done iterations \d+ time ([0-9.]+)",
                "tasks": r"^done steps \d+ time ([0-9.]+)",
                "stream": r"^result stream-copy .*\bseconds ([0-9.]+)",
                "gmx": r"^\s*Time:\s+[0-9.]+\s+([0-9.]+)"}
    m = re.search(patterns[kind], text, re.M) if kind in patterns else None
    return float(m.group(1)) if m else None


def result_of(kind, text, run_dir):
    """What must equal the native P-thread run's: a short string, or None when the run produced none."""
    if kind == "npb":
        if "VERIFICATION SUCCESSFUL" in text:
            return "VERIFICATION SUCCESSFUL"
        return "VERIFICATION FAILED" if "VERIFICATION" in text else None
    if kind in ("amdahl", "tasks"):
        m = re.search(r"^done .*checksum (\S+)", text, re.M)
        return f"checksum {m.group(1)}" if m else None
    if kind == "team":
        # The line's region and team counts follow the team (490 or 492 regions per step), so the check is the
        # result: team_patterns compares every region with its serial reference.
        if re.search(r"^FAILED:", text, re.M):
            return "FAILED"
        return "verified" if re.search(r"^verified regions \d+", text, re.M) else None
    if kind == "stream":
        m = re.search(r"^result stream-copy .*\b(iterations \d+)", text, re.M)
        return m.group(1) if m else None
    if kind == "gmx":
        try:
            with open(os.path.join(run_dir, "gmx.edr"), "rb") as f:
                return "edr sha256 " + hashlib.sha256(f.read()).hexdigest()[:16]
        except OSError:
            return None
    return None


# ---------------------------------------------------------------------------------------------------- processes

def start(argv, env, out_path, cpus=None, cwd=None):
    out = open(out_path, "wb")
    pre = (lambda: os.sched_setaffinity(0, cpus)) if cpus else None
    try:
        p = subprocess.Popen(argv, env=env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                             cwd=cwd, start_new_session=True, preexec_fn=pre)
    finally:
        out.close()
    LIVE.append(p)
    return p


def stop(p, grace=3.0):
    """Ends p's process group (SIGTERM, then SIGKILL after `grace` s) and reaps p."""
    if p is None:
        return
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 10.0)):
        if p.poll() is not None:
            break
        try:
            os.killpg(p.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            p.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            pass
    try:  # anything left in the group (a child of a program that exited first)
        os.killpg(p.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    if p in LIVE:
        LIVE.remove(p)


def read(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def tail(text, n=3):
    lines = [x for x in text.strip().splitlines() if x.strip()]
    return " | ".join(lines[-n:])


def base_env():
    env = {k: v for k, v in os.environ.items() if not k.startswith("COSCHED_") and k != "OMP_TOOL_LIBRARIES"}
    return env


def run_native(a, prog, threads, cpus, run_dir):
    os.makedirs(run_dir, exist_ok=True)
    env = dict(base_env(), OMP_NUM_THREADS=str(threads), COSCHED_DISABLE="1", COSCHED_QUIET="1",
               COSCHED_SOCKET=os.path.join(run_dir, "no-rm.sock"))
    out_path = os.path.join(run_dir, "out.txt")
    t0 = time.monotonic()
    p = start(prog.command(threads, run_dir), env, out_path, cpus=set(cpus), cwd=run_dir)
    timed_out, cpu_s = False, None
    try:
        while True:  # os.wait4 for the CPU time the run received: a pinned run short of it shared its CPUs
            pid, status, usage = os.wait4(p.pid, os.WNOHANG)
            if pid == p.pid:
                p.returncode = os.waitstatus_to_exitcode(status)
                cpu_s = usage.ru_utime + usage.ru_stime
                break
            if time.monotonic() - t0 > a.timeout:
                timed_out = True
                break
            time.sleep(0.01)
    finally:
        stop(p)
    wall = time.monotonic() - t0
    text = read(out_path)
    if prog.kind == "amdahl" and prog.units_per_ms is None:
        m = re.search(r"units_per_ms ([0-9.]+)", text)
        if m:
            prog.units_per_ms = m.group(1)
    own = own_time(prog.kind, text)
    return {"threads": threads, "cpus": list(cpus), "rc": p.returncode, "timed_out": timed_out, "wall_s": wall,
            "cpu_s": cpu_s, "cpu_share": cpu_s / (wall * len(cpus)) if cpu_s is not None and wall > 0 else None,
            "own_s": own if own is not None else wall, "own_time_source": "program" if own is not None else "wall",
            "result": None if timed_out or p.returncode != 0 else result_of(prog.kind, text, run_dir),
            "output_tail": tail(text, 4)}


class Rm:
    def __init__(self, a, d):
        self.a, self.d = a, d
        self.sock = os.path.join(d, "rm.sock")
        self.log = os.path.join(d, "rm.log")
        self.p = None

    def __enter__(self):
        a = self.a
        argv = [a.bin["cosched-rm"], "--foreground", "--socket", self.sock, "--policy", a.policy, "--cpus",
                a.cpu_list, "--log-level", "warn", "--baseline", a.baseline]
        waited_since = None
        while True:
            self.p = start(argv, base_env(), self.log)
            deadline = time.monotonic() + 15
            while time.monotonic() < deadline:
                if self.p.poll() is not None:
                    break
                if os.path.exists(self.sock) and self.status() is not None:
                    return self
                time.sleep(0.05)
            why = tail(read(self.log), 2) or (f"exit status {self.p.returncode}" if self.p.poll() is not None else
                                             "no socket within 15 s")
            stop(self.p)
            # Another RM holds these CPUs (the CPU locks of /run/lock/cosched): wait for it a while, since a
            # test or an experiment beside this run usually ends soon; its load makes this run's truth noisy.
            if "managed by another cosched-rm" not in why:
                break
            now = time.monotonic()
            if waited_since is None:
                waited_since = now
                print(f"\n    waiting (at most {RM_WAIT_S} s) for another cosched-rm to release CPUs {a.cpu_list}: "
                      f"{why}", file=sys.stderr, flush=True)
            if now - waited_since > RM_WAIT_S:
                break
            time.sleep(2)
        raise Fatal(f"cosched-rm did not start: {why}")

    def __exit__(self, *exc):
        stop(self.p, grace=10.0)
        return False

    def status(self):
        try:
            r = subprocess.run([self.a.bin["cosched-ctl"], "--socket", self.sock, "--timeout-ms", "3000", "status",
                                "--json"], capture_output=True, text=True, timeout=10, env=base_env())
            return json.loads(r.stdout) if r.returncode == 0 else None
        except (subprocess.TimeoutExpired, ValueError):
            return None


POLL_KEYS = ("allocated", "structure", "structure_period", "estimate_kind", "efficiency", "speedup", "measured_cpus",
             "waiting_time", "measured_speedup", "phase", "state", "team", "no_speedup", "estimate_note",
             "waiting_time_pending", "baseline_waits", "confidence")


def run_cosched(a, prog, run_dir, companion, observe=True):
    os.makedirs(run_dir, exist_ok=True)
    env = dict(base_env(), OMP_NUM_THREADS=str(a.cpus))
    out_path = os.path.join(run_dir, "out.txt")
    job = comp = None
    polls, warnings = [], []
    with Rm(a, run_dir) as rm:
        try:
            comp_ids = set()
            if companion:
                comp = start([a.bin["cosched-run"], "--socket", rm.sock, "--"] + [a.bin["amdahl-clang"]] +
                             COMPANION[1:], env, os.path.join(run_dir, "companion.txt"))
                deadline = time.monotonic() + 15
                while time.monotonic() < deadline and comp.poll() is None:
                    st = rm.status() or {}
                    comp_ids = {j["id"] for j in st.get("jobs", [])}
                    if comp_ids:
                        break
                    time.sleep(0.1)
                if not comp_ids:
                    warnings.append("the companion did not register within 15 s")
            t0 = time.monotonic()
            job = start([a.bin["cosched-run"], "--socket", rm.sock, "--"] + prog.command(a.cpus, run_dir), env,
                        out_path, cwd=run_dir)
            timed_out, matched_by = False, None
            while not observe:  # the time against native: no polls, whose CPU would slow the job
                try:
                    job.wait(timeout=a.timeout)
                except subprocess.TimeoutExpired:
                    timed_out = True
                break
            while observe:
                early = a.fast_poll > 0 and time.monotonic() - t0 < FAST_POLL_S
                try:
                    job.wait(timeout=min(a.fast_poll, a.poll) if early else a.poll)
                    break
                except subprocess.TimeoutExpired:
                    pass
                t = time.monotonic() - t0
                if t > a.timeout:
                    timed_out = True
                    break
                st = rm.status()
                if st is None:
                    continue
                mine = [j for j in st.get("jobs", []) if j.get("pid") == job.pid]
                if not mine:  # cosched-run did not exec the program: the job that is not the companion
                    mine = [j for j in st.get("jobs", []) if j.get("id") not in comp_ids
                            and (comp is None or j.get("pid") != comp.pid)]
                if mine:
                    matched_by = matched_by or ("pid" if mine[0].get("pid") == job.pid else "not the companion")
                    polls.append(dict({"t": round(t, 3)}, **{k: mine[0].get(k) for k in POLL_KEYS}))
            wall = time.monotonic() - t0
            if comp is not None and comp.poll() is not None:
                warnings.append(f"the companion ended early (exit {comp.returncode})")
        finally:
            stop(job)
            stop(comp)
    text = read(out_path)
    own = own_time(prog.kind, text)
    return {"rc": job.returncode, "timed_out": timed_out, "wall_s": wall,
            "own_s": own if own is not None else wall, "own_time_source": "program" if own is not None else "wall",
            "result": None if timed_out or job.returncode != 0 else result_of(prog.kind, text, run_dir),
            "output_tail": tail(text, 4), "warnings": warnings, "job_found_by": matched_by, "polls": polls}


# ---------------------------------------------------------------------------------------------------- analysis

def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def analyse(runs, P, true_e, native_results):
    """One table row's figures from the repeats of one (program, run kind)."""
    covered, firsts, kinds, kinds_at_p, est, wt, ms, impossible, failed_ms = 0, [], [], [], [], [], [], [], 0
    best = None  # (speedup, measured_cpus, t)
    for r in runs:
        first = None
        for p in r["polls"]:
            if p["efficiency"] is not None and p["measured_cpus"] is not None and p["measured_cpus"] == p["allocated"]:
                first = p["t"] if first is None else first
            if p["efficiency"] is not None:
                kind = f"{p['estimate_kind']}@{p['measured_cpus']}"
                if kind not in kinds:
                    kinds.append(kind)
            if p["efficiency"] is not None and p["measured_cpus"] == P:
                est.append(p["efficiency"])
                if p["estimate_kind"] not in kinds_at_p:
                    kinds_at_p.append(p["estimate_kind"])
            w = p["waiting_time"]
            if isinstance(w, dict) and w.get("cpus") == P and w.get("efficiency") is not None:
                wt.append(w["efficiency"])
            m = p["measured_speedup"]
            if isinstance(m, dict):
                if m.get("failed"):
                    failed_ms += 1
                elif m.get("cpus") == P and m.get("efficiency") is not None:
                    ms.append(m["efficiency"])
            s, c = p["speedup"], p["measured_cpus"]
            if s is not None:
                if best is None or s > best[0]:
                    best = (s, c, p["t"])
                if c and s > c * (1 + TOLERANCE):
                    impossible.append({"t": p["t"], "speedup": s, "measured_cpus": c, "kind": p["estimate_kind"]})
        if first is not None:
            covered += 1
            firsts.append(first)
    e, w_, m_ = median(est), median(wt), median(ms)
    err = lambda x: abs(x - true_e) if x is not None and true_e is not None else None
    matched = [r["result"] is not None and r["result"] == n for r, n in zip(runs, native_results)]
    return {"repeats": len(runs), "covered": covered, "first_estimate_s": median(firsts), "kinds": kinds,
            "kinds_at_P": kinds_at_p,
            "efficiency_at_P": e, "error": err(e), "waiting_time_efficiency": w_, "waiting_time_error": err(w_),
            "measured_efficiency": m_, "measured_error": err(m_), "polls_at_P": len(est),
            "max_speedup": best[0] if best else None, "max_speedup_cpus": best[1] if best else None,
            "impossible": impossible, "failed_measurements_polls": failed_ms, "matched": all(matched),
            "results": [r["result"] for r in runs]}


def f2(x, fmt="{:.2f}"):
    return "-" if x is None else fmt.format(x)


def table(rows):
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = []
    for k, r in enumerate(rows):
        lines.append("  ".join(c.ljust(w) if i < 2 or i == len(r) - 1 else c.rjust(w)
                               for i, (c, w) in enumerate(zip(r, widths))).rstrip())
        if k == 0:
            lines.append("-" * len(lines[0]))
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------------- main

def parse_args():
    ap = Parser(prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    mine = len(os.sched_getaffinity(0))
    ap.add_argument("--build", default=os.path.join(HERE, "../../build/release"),
                    help="build tree, or an install prefix: programs in BUILD/bin (default ../../build/release)")
    ap.add_argument("--cpus", type=int, default=mine, metavar="P",
                    help=f"CPUs P: the RM manages the first P CPUs this process may use (default all, here {mine})")
    ap.add_argument("--policy", default="pdpa", help="cosched-rm --policy (default pdpa)")
    ap.add_argument("--baseline", default="auto", choices=("auto", "always", "never"),
                    help="cosched-rm --baseline (default auto)")
    ap.add_argument("--only", metavar="NAME[,NAME]", help="programs whose name contains one of these")
    ap.add_argument("--quick", action="store_true", help="NPB class W and shorter runs (a minute or two in all)")
    ap.add_argument("--repeats", type=int, default=1, help="runs of each variant; medians over them (default 1)")
    ap.add_argument("--poll", type=float, default=0.25, metavar="S",
                    help="seconds between two status polls (default 0.25; each costs CPU)")
    ap.add_argument("--fast-poll", type=float, default=0.05, metavar="S",
                    help=f"seconds between two polls during a run's first {FAST_POLL_S:g} s, where first estimates "
                    "come (default 0.05; 0: --poll throughout)")
    ap.add_argument("--timeout", type=float, default=180, metavar="S",
                    help="seconds one program run may take before it is killed (default 180)")
    ap.add_argument("--json", metavar="FILE", help="also write every figure and poll to FILE")
    ap.add_argument("--keep", action="store_true", help="keep the working directory (every run's output)")
    a = ap.parse_args()
    allowed = sorted(os.sched_getaffinity(0))
    if not 1 <= a.cpus <= len(allowed):
        ap.error(f"--cpus: {a.cpus} is not between 1 and the {len(allowed)} CPUs this process may use")
    if a.repeats < 1:
        ap.error(f"--repeats: {a.repeats} is not a positive count")
    if not 0.02 <= a.poll <= 10:
        ap.error(f"--poll: {a.poll} is not a number of seconds in [0.02, 10]")
    if a.fast_poll != 0 and not 0.02 <= a.fast_poll <= 10:
        ap.error(f"--fast-poll: {a.fast_poll} is not 0 or a number of seconds in [0.02, 10]")
    if not 1 <= a.timeout <= 86400:
        ap.error(f"--timeout: {a.timeout} is not a number of seconds in [1, 86400]")
    a.build = os.path.abspath(a.build)
    a.cpu_set = allowed[:a.cpus]
    a.cpu_list = ",".join(str(c) for c in a.cpu_set)
    a.bin = {}
    for name in ("cosched-rm", "cosched-ctl", "cosched-run", "amdahl-clang"):
        path = find_program(a.build, name)
        if path is None:
            ap.error(f"--build: no {name} under {a.build}/bin (build first: cmake --build --preset release)")
        a.bin[name] = path
    progs = program_list(a)
    if a.only:
        wanted = [w.strip() for w in a.only.split(",") if w.strip()]
        if not wanted:
            ap.error("--only: no name given")
        for w in wanted:
            if not any(w in p.name for p in progs):
                ap.error(f"--only: {w!r} matches no program (programs: {', '.join(p.name for p in progs)})")
        progs = [p for p in progs if any(w in p.name for w in wanted)]
    return a, progs


def interrupt(signum, frame):
    raise KeyboardInterrupt


def main():
    a, progs = parse_args()
    signal.signal(signal.SIGTERM, interrupt)
    signal.signal(signal.SIGHUP, interrupt)
    root = tempfile.mkdtemp(prefix="cosched-sa-bench-")
    P = a.cpus
    report = {"config": {"build": a.build, "cpus": P, "cpu_list": a.cpu_list, "policy": a.policy,
                         "baseline": a.baseline, "quick": a.quick, "repeats": a.repeats, "poll_s": a.poll,
                         "fast_poll_s": a.fast_poll, "fast_poll_for_s": FAST_POLL_S,
                         "timeout_s": a.timeout, "companion": COMPANION, "speedup_tolerance": TOLERANCE},
              "programs": []}
    failures, code = [], 1
    try:
        os.makedirs(os.path.join(root, "preflight"))
        with Rm(a, os.path.join(root, "preflight")):
            pass  # the RM starts with these options, or the run stops here with its reason
        tpr = None
        for i, prog in enumerate(progs, start=1):
            entry = {"name": prog.name, "compute_bound": prog.compute_bound, "argv": prog.argv, "skipped": prog.skip}
            report["programs"].append(entry)
            if prog.skip:
                print(f"[{i}/{len(progs)}] {prog.name}: skipped ({prog.skip})", file=sys.stderr, flush=True)
                continue
            if prog.kind == "gmx":
                if tpr is None:
                    print(f"[{i}/{len(progs)}] {prog.name}: building the water box...", file=sys.stderr, flush=True)
                    try:
                        tpr = build_water_box(prog.argv[0], os.path.join(root, "water"))
                    except (Fatal, OSError, subprocess.TimeoutExpired) as e:
                        prog.skip = entry["skipped"] = f"could not build the water box: {e}"
                        print(f"[{i}/{len(progs)}] {prog.name}: skipped ({prog.skip})", file=sys.stderr)
                        continue
                prog.argv = [x.replace("{tpr}", tpr) for x in prog.argv]
                entry["argv"] = prog.argv
            native1, nativeP, alone, beside, quiet = [], [], [], [], []
            for rep in range(a.repeats):
                d = os.path.join(root, f"{i:02d}-{rep + 1}")
                label = f"[{i}/{len(progs)}] {prog.name}"
                if a.repeats > 1:
                    label += f" (repeat {rep + 1}/{a.repeats})"
                steps = (("native 1 thread", lambda: run_native(a, prog, 1, a.cpu_set[:1], d + "-native1"), native1),
                         (f"native {P} threads", lambda: run_native(a, prog, P, a.cpu_set, d + "-nativeP"), nativeP),
                         ("alone under cosched", lambda: run_cosched(a, prog, d + "-alone", False), alone),
                         ("alone, unobserved", lambda: run_cosched(a, prog, d + "-quiet", False, False), quiet),
                         ("beside a companion", lambda: run_cosched(a, prog, d + "-beside", True), beside))
                for what, fn, into in steps:
                    print(f"{label}: {what}...", end="", file=sys.stderr, flush=True)
                    r = fn()
                    into.append(r)
                    state = ("timed out" if r["timed_out"] else f"exit {r['rc']}" if r["rc"] != 0 else
                             f"{r['own_s']:.2f} s")
                    print(f" {state}" + (f" ({len(r['polls'])} polls)" if "polls" in r else ""), file=sys.stderr,
                          flush=True)
                    if r["timed_out"] or r["rc"] != 0:
                        print(f"    output: {r['output_tail']}", file=sys.stderr)
                    for w in r.get("warnings", []):
                        print(f"    warning: {w}", file=sys.stderr)
            t1 = median([r["own_s"] for r in native1 if r["rc"] == 0 and not r["timed_out"]])
            tp = median([r["own_s"] for r in nativeP if r["rc"] == 0 and not r["timed_out"]])
            s = t1 / tp if t1 and tp else None
            e = s / P if s is not None else None
            native_results = [r["result"] for r in nativeP]
            entry.update({"truth": {"T1_s": t1, "TP_s": tp, "speedup": s, "efficiency": e},
                          "native_1": native1, "native_P": nativeP, "alone_runs": alone, "unobserved_runs": quiet,
                          "beside_runs": beside})
            for k, runs in (("alone", alone), ("beside", beside)):
                res = analyse(runs, P, e, native_results)
                # The time against native from the runs nobody polled: a status poll costs a few ms of CPU,
                # which on 2 CPUs slowed the polled runs by 2-10 %.
                timed = quiet if k == "alone" else runs
                ratios = [r["own_s"] / n["own_s"] for r, n in zip(timed, nativeP)
                          if r["rc"] == 0 and not r["timed_out"] and n["rc"] == 0 and not n["timed_out"]]
                res["time_ratio"] = median(ratios)
                entry[k] = res
                if not res["matched"]:
                    failures.append(f"{prog.name} {k}: result {res['results']} against native {native_results}")
                if res["impossible"]:
                    failures.append(f"{prog.name} {k}: IMPOSSIBLE speedup published: " + ", ".join(
                        f"{x['speedup']:.2f} at {x['measured_cpus']} CPUs (t={x['t']} s)"
                        for x in res["impossible"][:3]))
            for r in quiet:
                if r["result"] not in native_results:
                    failures.append(f"{prog.name} unobserved: result {r['result']} against native {native_results}")
            for n in nativeP:
                if n["result"] is None:
                    failures.append(f"{prog.name}: the native {P}-thread run gave no result ({n['output_tail']})")
        code = 0 if not failures else 1
    except Fatal as e:
        print(f"\n{PROG}: error: {e}", file=sys.stderr)
        if not report["programs"]:  # the preflight: these options do not start an RM; nothing to report
            return 1
        failures.append(f"stopped: {e}")
        code = 1
    except KeyboardInterrupt:
        print(f"\n{PROG}: interrupted; every RM and job it started is stopped", file=sys.stderr)
        code = 130
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        for p in list(LIVE):
            stop(p, grace=2.0)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        if a.keep:
            print(f"{PROG}: runs kept in {root}", file=sys.stderr)
        else:
            shutil.rmtree(root, ignore_errors=True)

    print_report(a, report, failures, interrupted=code == 130)
    if a.json:
        report["failures"] = failures
        report["interrupted"] = code == 130
        with open(a.json, "w") as f:
            json.dump(report, f, indent=1)
    return code


def print_report(a, report, failures, interrupted=False):
    P = a.cpus
    print(f"# SelfAnalyzer estimates against native truth: P = {P} CPU(s) ({a.cpu_list}), policy {a.policy}, "
          f"baseline {a.baseline}, {a.repeats} repeat(s){', quick' if a.quick else ''}, poll {a.poll:g} s"
          + (f" ({a.fast_poll:g} s for the first {FAST_POLL_S:g} s)" if a.fast_poll else ""))
    rows = [["program", "run", "T1 s", "TP s", "true E", "est?", "first s", "est E", "err", "wt err", "ms err",
             "max S (cpus)", ">cpus+10%", "time/nat", "result", "kind"]]
    for entry in report["programs"]:
        name = entry["name"] + (" *" if entry["compute_bound"] else "")
        if entry["skipped"]:
            rows.append([name, "skipped"] + ["-"] * 13 + [entry["skipped"]])
            continue
        truth = entry.get("truth")
        if truth is None:
            continue
        for k in ("alone", "beside"):
            if k not in entry:
                continue
            r = entry[k]
            n = r["repeats"]
            cov = "no" if r["covered"] == 0 else "yes" if r["covered"] == n else f"{r['covered']}/{n}"
            maxs = "-" if r["max_speedup"] is None else f"{r['max_speedup']:.2f} ({r['max_speedup_cpus']})"
            rows.append([name, k, f2(truth["T1_s"]), f2(truth["TP_s"]), f2(truth["efficiency"]), cov,
                         f2(r["first_estimate_s"], "{:.1f}"), f2(r["efficiency_at_P"]), f2(r["error"]),
                         f2(r["waiting_time_error"]), f2(r["measured_error"]), maxs,
                         f"IMPOSSIBLE x{len(r['impossible'])}" if r["impossible"] else "no",
                         f2(r["time_ratio"], "{:.3f}") if k == "alone" else "-",
                         "ok" if r["matched"] else "MISMATCH", "->".join(r["kinds"]) or "-"])
    print(table(rows))
    print(f"(* compute-bound. est E, err: the estimate at {P} CPUs and |est E - true E|; wt, ms: the waiting-time and "
          "measured-speedup estimates' errors; kind: estimate_kind@measured_cpus as they appeared)")

    ran = [e for e in report["programs"] if not e["skipped"] and "alone" in e and "beside" in e]
    print("\nsummary")
    for k in ("alone", "beside"):
        cov = sum(1 for e in ran if e[k]["covered"] > 0)
        bound = [e for e in ran if e["compute_bound"]]
        errs = [e[k]["error"] for e in bound if e[k]["error"] is not None]
        wts = [e[k]["waiting_time_error"] for e in bound if e[k]["waiting_time_error"] is not None]
        line = f"  {k:6}: estimate reported for {cov}/{len(ran)} programs"
        line += (f"; compute-bound error median {statistics.median(errs):.3f} max {max(errs):.3f} "
                 f"({len(errs)}/{len(bound)} programs at {P} CPUs)" if errs else
                 f"; no compute-bound program estimated at {P} CPUs")
        if wts:
            line += f"; waiting-time error median {statistics.median(wts):.3f} max {max(wts):.3f}"
        print(line)
    imp = sum(len(e[k]["impossible"]) for e in ran for k in ("alone", "beside"))
    print(f"  impossible speedups (above measured_cpus by more than {TOLERANCE:.0%}): {imp} poll(s)"
          + ("   <<<<<< MUST BE 0" if imp else ""))
    ratios = [e["alone"]["time_ratio"] for e in ran if e["alone"]["time_ratio"] is not None]
    if ratios:
        print(f"  time under cosched / native {P} threads (alone): median {statistics.median(ratios):.3f}, "
              f"min {min(ratios):.3f}, max {max(ratios):.3f} over {len(ratios)} programs (reported, not judged)")
    shares = [r["cpu_share"] for e in ran for r in e["native_1"] if r.get("cpu_share") is not None]
    if shares:
        low = min(shares)
        print(f"  native 1-thread runs received {statistics.median(shares):.0%} of their CPU (median; min {low:.0%})"
              + ("; below ~95 % something else ran on these CPUs and the truth is noisy" if low < 0.95 else ""))
    skipped = [e for e in report["programs"] if e["skipped"]]
    for e in skipped:
        print(f"  skipped: {e['name']}: {e['skipped']}")
    if interrupted:
        print("  interrupted: only the programs that finished are in the table")
    print("  results: " + ("every run matched its native run and no impossible speedup was seen" if not failures
                          else f"{len(failures)} failure(s):\n    " + "\n    ".join(failures)))


if __name__ == "__main__":
    sys.exit(main())
