#!/usr/bin/python3
"""Shared helpers for cosched integration tests: a real cosched-rm on a private socket, real OpenMP
programs started through cosched-run, and facts read from /proc and `cosched-ctl status --json`.

Paths come from the environment CTest sets (COSCHED_BUILD_DIR); every test cleans up after itself, and a
failing test never leaves a process stopped or confined (tearDown kills and resumes what it started).
"""
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import time
import unittest

BUILD = os.environ.get("COSCHED_BUILD_DIR", os.path.join(os.path.dirname(__file__), "../../build/release"))
# An AddressSanitizer build (scripts/test --asan): the daemons are instrumented, the jobs' side is not.
SANITIZED = os.environ.get("COSCHED_SANITIZED") == "1"
RM = os.path.join(BUILD, "rm/cosched-rm")
CTL = os.path.join(BUILD, "ctl/cosched-ctl")
RUN = os.path.join(BUILD, "libruntime/launcher/cosched-run")
BIN = os.path.join(BUILD, "bin")


def program(name):
    """A program the build produced. Missing means the build is broken: the test fails, it never skips."""
    path = os.path.join(BIN, name)
    if not os.path.exists(path):
        raise AssertionError(f"{path} is missing: the build should have produced it")
    return path


def json_lines_written(path):
    """The JSON lines a running process has finished writing to path ([] before it exists). A line without its
    newline is still being written (a writer's line may take more than one write(), and a read may land between
    them: a loaded run of the suite read half a line of cosched-cluster's trace); the next read gets it whole."""
    try:
        with open(path) as f:
            text = f.read()
    except FileNotFoundError:
        return []
    return [json.loads(line) for line in text.split("\n")[:-1] if line.strip()]


def wait_for(predicate, timeout=10.0, interval=0.02, what="condition"):
    """Polls `predicate` until it returns a truthy value; fails the test with `what` on timeout."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.1f}s waiting for {what}")
        time.sleep(interval)


def per_thread(pid, name):
    """{tid: text of /proc/<pid>/task/<tid>/<name>} for every thread of `pid` ({} once it is gone; a thread that
    ends between the listing and the read is left out)."""
    out = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except FileNotFoundError:
        return out
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/{name}") as f:
                out[int(tid)] = f.read()
        except (FileNotFoundError, ProcessLookupError):
            pass
    return out


def thread_names(pid):
    """The name of every thread of `pid` (its comm), one per thread ([] once it is gone)."""
    return [text.strip() for text in per_thread(pid, "comm").values()]


def cpus_allowed(pid):
    """{tid: cpu set} of every thread of `pid`, from /proc/<pid>/task/<tid>/status."""
    out = {}
    for tid, text in per_thread(pid, "status").items():
        for line in text.splitlines():
            if line.startswith("Cpus_allowed_list:"):
                out[tid] = parse_cpu_list(line.split(":", 1)[1].strip())
    return out


def parse_cpu_list(text):
    cpus = set()
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        if "-" in part:
            a, b = part.split("-")
            cpus.update(range(int(a), int(b) + 1))
        else:
            cpus.add(int(part))
    return frozenset(cpus)


def v1_cgroup(pid, controller):
    """`pid`'s path in the v1 hierarchy of `controller`, from /proc/<pid>/cgroup; None when it has none or the
    process is gone."""
    try:
        with open(f"/proc/{pid}/cgroup") as f:
            for line in f:
                _, ctrls, path = line.strip().split(":", 2)
                if controller in ctrls.split(","):
                    return path
    except FileNotFoundError:
        return None
    return None


def cpuset_cgroup(pid):
    """The path of `pid`'s cpuset cgroup in /proc/<pid>/cgroup (v1 line naming cpuset, else the v2 line)."""
    unified = None
    with open(f"/proc/{pid}/cgroup") as f:
        for line in f:
            hid, ctrls, path = line.strip().split(":", 2)
            if "cpuset" in ctrls.split(","):
                return path
            if hid == "0":
                unified = path
    return unified


def cpuset_cgroup_dir(pid):
    """The directory of `pid`'s cpuset cgroup: the controller's mount point (cgroup v1 with the cpuset
    option, else the unified hierarchy) from /proc/mounts, joined with the path /proc/<pid>/cgroup gives."""
    path = cpuset_cgroup(pid)
    if path is None:
        return None
    v1, v2 = None, None
    with open("/proc/mounts") as f:
        for line in f:
            _, mnt, fstype, opts = line.split()[:4]
            if fstype == "cgroup" and "cpuset" in opts.split(","):
                v1 = mnt
            elif fstype == "cgroup2":
                v2 = mnt
    root = v1 or v2
    return os.path.join(root, path.lstrip("/")) if root else None


def process_state(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return None


def native_speedup(serial_fraction, binary="amdahl-clang", threads=2, iterations=12, work_ms=30):
    """The speedup the machine delivers right now to the Amdahl program at `threads` threads, measured natively
    (no RM): T(1) / T(threads). Tests compare cosched's reading with it, taken side by side, instead of with a
    fixed window: a loaded machine changes the truth for both alike."""
    def run(n):
        env = dict(os.environ, OMP_NUM_THREADS=str(n), KMP_AFFINITY="disabled")
        out = subprocess.run([program(binary), "--serial-fraction", str(serial_fraction), "--iterations",
                              str(iterations), "--work-ms", str(work_ms), "--quiet"],
                             env=env, capture_output=True, text=True, check=True).stdout.split()
        return float(out[out.index("time") + 1])
    return run(1) / run(threads)


def measure_in_bounds(attempt, low, high, attempts=3, cleanup=None):
    """Runs `attempt()` -> (value, details) until value lies in [low, high], at most `attempts` times, and
    returns (value, details, tries) of the last try. A measurement is a ratio of timings taken at different
    moments: a burst of load from another tenant of a shared CI machine during one of them can move it for
    that one try. A defect in cosched is wrong on every try, so the caller still asserts the bounds on the
    last one, with every try's figures; retries are printed so noise stays visible. A try that times out
    waiting (wait_for) is a try too: `cleanup()` (e.g. RmTestCase.stop_started) then ends what it started,
    and after the last try the timeout is raised with every try's outcome. Nothing is skipped."""
    tries = []
    for n in range(attempts):
        try:
            value, details = attempt()
        except AssertionError as e:
            if "timed out" not in str(e):
                raise
            tries.append(f"timed out: {e}")
            if cleanup:
                cleanup()
            if n + 1 == attempts:
                raise AssertionError(f"every try failed or timed out: {tries}") from e
            print(f"try {n + 1} timed out ({e}), measuring again", flush=True)
            continue
        tries.append(value)
        if low <= value <= high:
            return value, details, tries
        print(f"noisy measurement {value:.3f} outside [{low}, {high}], measuring again", flush=True)
    return value, details, tries


NOBODY = 65534


def as_user(uid):
    """Command prefix that runs what follows as `uid` (same gid, no supplementary groups), or nothing."""
    if uid is None:
        return []
    return ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--"]


def require_reachable_by(test, uid, *paths):
    """Skips `test` when `uid` cannot execute every path (e.g. a build tree under a private home)."""
    for path in paths:
        if subprocess.run(as_user(uid) + ["test", "-x", path]).returncode != 0:
            test.skipTest(f"{path} is not executable by uid {uid}")


# The jobs and RMs a test started and has not cleaned up yet. A test file stopped by SIGTERM (a user's kill,
# a stopped loaded run) stops them and removes their files, as its tearDown would have (a killed loaded run
# left a /tmp/cosched-it-* directory behind), then dies of the signal.
_LIVE = []


def _stop_live_and_exit(signum, _frame):
    for thing in list(_LIVE):
        thing.abandon()
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


signal.signal(signal.SIGTERM, _stop_live_and_exit)


class Job:
    """A program started through cosched-run; stdout is collected line by line into a file."""

    def __init__(self, args, socket_path, env=None, request=None, quiet=False, user=None, launcher=()):
        self.out = tempfile.NamedTemporaryFile(mode="w+", prefix="cosched-job-", suffix=".out", delete=False)
        self.err = tempfile.NamedTemporaryFile(mode="w+", prefix="cosched-job-", suffix=".err", delete=False)
        cmd = as_user(user) + [RUN, "--socket", socket_path]
        if request:
            cmd += ["--request", str(request)]
        if quiet:
            cmd += ["--quiet"]
        cmd += list(launcher) + ["--"] + list(args)
        full_env = dict(os.environ)
        full_env.update(env or {})
        self.proc = subprocess.Popen(cmd, stdout=self.out, stderr=self.err, env=full_env)
        self.pid = self.proc.pid  # cosched-run (and setpriv before it) exec the program: same pid
        _LIVE.append(self)

    def lines(self):
        with open(self.out.name) as f:
            return f.read().splitlines()

    def stderr(self):
        with open(self.err.name) as f:
            return f.read()

    def teams(self):
        """Team sizes the program saw inside its regions, one per printed iteration."""
        out = []
        for line in self.lines():
            parts = line.split()
            if len(parts) >= 4 and parts[0] == "iter" and parts[2] == "team":
                out.append(parts[3])
        return out

    def wait(self, timeout=120):
        return self.proc.wait(timeout=timeout)

    def kill(self):
        if self.proc.poll() is None:
            try:
                os.kill(self.pid, signal.SIGCONT)
                self.proc.kill()
                self.proc.wait(timeout=10)
            except ProcessLookupError:
                pass

    def cleanup(self):
        self.kill()
        for f in (self.out, self.err):
            f.close()
            os.unlink(f.name)
        if self in _LIVE:
            _LIVE.remove(self)

    def abandon(self):
        """On SIGTERM: the program killed (continued first, if stopped) and its output files removed."""
        if self.proc.poll() is None:
            try:
                os.kill(self.pid, signal.SIGCONT)
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for f in (self.out, self.err):
            try:
                os.unlink(f.name)
            except FileNotFoundError:
                pass


class ResourceManager:
    """cosched-rm in the foreground on a private socket; stopped (and checked) by stop()."""

    def __init__(self, *extra, cpus="0-1", policy="equip", quantum_ms=100, user=None, lock_dir=None, env=None,
                 start_timeout=10):
        self.dir = tempfile.mkdtemp(prefix="cosched-it-")
        self.cpu_set = parse_cpu_list(cpus)
        if user is not None:
            os.chown(self.dir, user, user)
        self.socket = os.path.join(self.dir, "rm.sock")
        self.log = os.path.join(self.dir, "decisions.jsonl")
        self.messages = os.path.join(self.dir, "rm.err")
        cmd = as_user(user) + [RM, "--foreground", "--socket", self.socket, "--cpus", cpus, "--policy", policy,
               "--quantum-ms", str(quantum_ms), "--log", self.log] + list(extra)
        self._err = open(self.messages, "w")
        # One RM per CPU is enforced through lock files (docs/usage.md): each test RM has its own lock
        # directory unless a test shares one on purpose, so the RMs a test starts never refuse each other.
        env = dict(os.environ, COSCHED_LOCK_DIR=lock_dir or os.path.join(self.dir, "locks"), **(env or {}))
        self.proc = subprocess.Popen(cmd, stdout=self._err, stderr=subprocess.STDOUT, env=env)
        _LIVE.append(self)
        wait_for(lambda: os.path.exists(self.socket) or self.proc.poll() is not None, timeout=start_timeout,
                 what="the RM socket")
        if self.proc.poll() is not None:
            text = self.messages_text()
            self._err.close()
            self.remove_files()  # no test will stop an RM that never started: leave nothing behind
            raise AssertionError(f"cosched-rm exited at start: {text}")

    def ctl(self, *args, check=True):
        r = subprocess.run([CTL, "--socket", self.socket] + list(args), capture_output=True, text=True, timeout=20)
        if check and r.returncode != 0:
            raise AssertionError(f"cosched-ctl {' '.join(args)} failed ({r.returncode}): {r.stderr}")
        return r

    def request(self, req):
        """One control request over the socket, in-process: polling through a cosched-ctl process per call
        would steal CPU from the very jobs whose speedup the tests measure (an ASan build's ctl costs
        ~100 ms of CPU per start)."""
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(20)
            s.connect(self.socket)
            s.sendall(frame(MSG_CTL_REQUEST, json.dumps(req).encode()))
            msg_type, payload = read_frame(s)
        if msg_type != MSG_CTL_REPLY:
            raise AssertionError(f"unexpected reply type {msg_type}: {payload[:200]!r}")
        return json.loads(payload)

    def status(self):
        reply = self.request({"cmd": "status"})
        if not reply.get("ok"):
            raise AssertionError(f"status failed: {reply}")
        return reply

    def job(self, pid):
        for j in self.status()["jobs"]:
            if j["pid"] == pid:
                return j
        return None

    def wait_for_report_unless_loaded(self, pid, also=lambda j: True, timeout=60, what="a speedup report"):
        """The job's status once it carries a speedup report for which `also(job)` holds. A job may withhold
        its report while other processes load its CPUs: a reported speedup is a measurement or nothing
        (docs/selfanalyzer.md, "Outside load"). So this returns None, without a report, once OutsideLoad has
        measured more than OUTSIDE_LOAD_SHARE of the CPUs used by others for LOADED_PATIENCE_S (or `timeout`,
        if shorter) and the job's status says why it has none (`no_speedup`, discarded samples or a
        restart). A timeout on quiet CPUs, or one the job leaves unexplained, fails the test. `last_seen`
        keeps the job's latest status the wait read (the job may end right after)."""
        meter = OutsideLoad(self.cpu_set, [self.proc.pid, pid])
        start = time.monotonic()
        last = self.last_seen = {}

        def withheld():
            why = {k: last.get(k) for k in ("no_speedup", "contaminated_samples", "measurement_restarts",
                                             "restart_reason", "cpu_wait", "phase", "policy_state")}
            explained = bool(last.get("no_speedup") or last.get("contaminated_samples")
                             or last.get("measurement_restarts"))
            return meter.share(), explained, why

        def reported():
            jobs = self.status()["jobs"]
            meter.sample([self.proc.pid] + [j["pid"] for j in jobs])
            j = next((j for j in jobs if j["pid"] == pid), None)
            if j:
                last.update(j)
            if j and j["speedup"] is not None and also(j):
                return j
            if time.monotonic() - start >= min(LOADED_PATIENCE_S, timeout):
                share, explained, why = withheld()
                if share > OUTSIDE_LOAD_SHARE and explained:
                    print(f"no report after {time.monotonic() - start:.0f} s while other processes used "
                          f"{share:.0%} of the CPUs; the job said why: {why}", flush=True)
                    return "withheld"
            return None
        try:
            found = wait_for(reported, timeout=timeout, interval=0.1, what=what)
        except AssertionError as e:
            share, _, why = withheld()
            # Ours too (the RM, the jobs, this process): a job's threads also wait for those, which the
            # outside share does not count. And the job's whole status, and the RM's last words.
            raise AssertionError(f"{e}; other processes used {share:.0%} of the CPUs, ours {meter.own_share():.0%}; "
                                 f"the job: {why}; its last status: {last}; the RM's messages (end): "
                                 f"{self.messages_text()[-1500:]}") from e
        return None if found == "withheld" else found

    def decisions(self):
        return json_lines_written(self.log)

    def messages_text(self):
        if not self._err.closed:  # closed once the RM was stopped; the file stays readable
            self._err.flush()
        with open(self.messages) as f:
            return f.read()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._err.close()

    def remove_files(self):
        """Removes the private directory (socket, decision log, messages): the test is over."""
        shutil.rmtree(self.dir, ignore_errors=True)
        if self in _LIVE:
            _LIVE.remove(self)

    def abandon(self):
        """On SIGTERM: the RM asked to stop (it undoes its confinement) and its directory removed."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        shutil.rmtree(self.dir, ignore_errors=True)


MAGIC, VERSION = 0x43534844, 1
MSG_REGISTER, MSG_REFUSED, MSG_CTL_REQUEST, MSG_CTL_REPLY = 1, 3, 4, 5


def frame(msg_type, payload, magic=MAGIC, version=VERSION, length=None):
    """A protocol frame (include/cosched/protocol.hpp): 16-byte header, then the payload."""
    n = len(payload) if length is None else length
    return struct.pack("<IHHII", magic, version, msg_type, n, 0) + payload


def read_frame(sock):
    """(type, payload) of the next frame, or (None, None) when the peer closed first."""
    header = b""
    while len(header) < 16:
        chunk = sock.recv(16 - len(header))
        if not chunk:
            return None, None
        header += chunk
    _, _, msg_type, length, _ = struct.unpack("<IHHII", header)
    payload = b""
    while len(payload) < length:
        chunk = sock.recv(length - len(payload))
        if not chunk:
            break
        payload += chunk
    return msg_type, payload


def raw_connect(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(5)
    s.connect(path)
    return s

# Above this share of the RM's CPUs used by processes other than the RM, its jobs and the test itself, the
# CPUs are not quiet (our choice: the SelfAnalyzer's own max_wait_fraction, docs/selfanalyzer.md "Outside
# load"; a quiet guest shows under 2 %, a build beside the tests 40-100 %).
OUTSIDE_LOAD_SHARE = 0.1
# How long a test waits for a report under such load before it takes the job's word for why it has none (our
# choice: a build beside the tests held reports back for minutes, and a test that waits out each of its
# timeouts overruns CTest's). On quiet CPUs a test waits its whole timeout.
LOADED_PATIENCE_S = 20
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def busy_seconds(cpus):
    """CPU time spent busy on `cpus` since boot, from /proc/stat: user, nice, system, irq, softirq and steal
    (a hypervisor running another guest takes the CPU as surely as a process does)."""
    total = 0
    with open("/proc/stat") as f:
        for line in f:
            name, *fields = line.split()
            if name.startswith("cpu") and name[3:].isdigit() and int(name[3:]) in cpus:
                user, nice, system, _idle, _iowait, irq, softirq, steal = (int(v) for v in fields[:8])
                total += user + nice + system + irq + softirq + steal
    return total / CLOCK_TICKS


def process_times(pid):
    """(user + system CPU time of `pid`, all its threads; its start time after boot), in seconds, or None
    once it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return None
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS, int(fields[19]) / CLOCK_TICKS


class OutsideLoad:
    """How much of `cpus` processes other than ours used since the meter started: measured here from
    /proc, independently of cosched, so a test can tell whether a job that withholds its speedup for outside
    load (docs/selfanalyzer.md) had any. sample(pids) names pids whose CPU time is ours (call it as they are
    seen): one that started after the meter counts from zero, one that ends keeps the last time read."""

    def __init__(self, cpus, own=()):
        self.cpus = cpus
        self.start_s = time.monotonic()
        self.start_boot_s = time.clock_gettime(time.CLOCK_BOOTTIME)
        self.start_busy = busy_seconds(cpus)
        self.start_self = sum(os.times()[:2])
        self.own_start = {}
        self.own_last = {}
        self.sample(own)

    def sample(self, pids):
        for pid in pids:
            times = process_times(pid)
            if times is None:
                continue
            cpu_s, started_s = times
            self.own_start.setdefault(pid, 0.0 if started_s >= self.start_boot_s else cpu_s)
            self.own_last[pid] = cpu_s

    def _own_seconds(self):
        """CPU time of the processes sample() named, and of this one, since the meter started."""
        own = sum(self.own_last[p] - self.own_start[p] for p in self.own_last)
        return own + sum(os.times()[:2]) - self.start_self

    def _capacity_seconds(self):
        return max(time.monotonic() - self.start_s, 1e-3) * len(self.cpus)

    def own_share(self):
        """Our processes' CPU time ÷ (elapsed time × CPUs) since the meter started."""
        return self._own_seconds() / self._capacity_seconds()

    def share(self):
        """Outside CPU time ÷ (elapsed time × CPUs) since the meter started."""
        outside = busy_seconds(self.cpus) - self.start_busy - self._own_seconds()
        return max(0.0, outside) / self._capacity_seconds()


class RmTestCase(unittest.TestCase):
    """Starts nothing by itself; tracks what a test starts so tearDown always cleans up."""

    def setUp(self):
        self.jobs = []
        self.rms = []

    def start_rm(self, *extra, **kw):
        rm = ResourceManager(*extra, **kw)
        self.rms.append(rm)
        return rm

    def start_job(self, args, rm=None, socket_path=None, **kw):
        job = Job(args, socket_path or rm.socket, **kw)
        self.jobs.append(job)
        return job

    def stop_started(self):
        """Ends every job and RM this test started so far (between tries of a measurement)."""
        for j in self.jobs:
            j.kill()
        for rm in self.rms:
            rm.stop()

    def tearDown(self):
        for j in self.jobs:
            j.cleanup()
        for rm in self.rms:
            rm.stop()
            rm.remove_files()
        # Rule 3 holds even when a test fails: nothing of ours is left stopped.
        for j in self.jobs:
            self.assertNotEqual(process_state(j.pid), "T", f"job pid {j.pid} left stopped")
