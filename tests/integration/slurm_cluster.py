#!/usr/bin/python3
"""A private one-node Slurm cluster for tests and benchmarks: its own munged (key and socket), slurmctld and
slurmd, all under one temporary directory, configured through SLURM_CONF with private ports, so nothing
touches a system Slurm. The processes are this object's children, and stop() stops exactly those.

    cluster = SlurmCluster(cpus=2, plugin_args="socket=/tmp/x/rm.sock")
    cluster.sbatch(["--cosched", "-c2", "--wrap", "prog"])
    cluster.stop()

Failing to start raises AssertionError with the daemons' logs: a test that needs Slurm fails, never skips.
The daemons get SIGTERM when the process that started them dies (PR_SET_PDEATHSIG), so a test killed by
CTest's timeout leaves no Slurm running.
"""
import ctypes
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time

from harness import wait_for

NODE = socket.gethostname().split(".")[0]
SLURM_BINARIES = ("munged", "slurmctld", "slurmd", "sbatch", "squeue", "scontrol", "scancel", "sinfo")


_PR_SET_PDEATHSIG = 1
_libc = ctypes.CDLL(None, use_errno=True)


def _die_with_parent():
    # In the child, before exec: SIGTERM when the thread that started it exits (for whatever reason).
    _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)


_ports_given = set()


def free_port():
    """A free TCP port below the kernel's ephemeral range. A port of bind(0) is an ephemeral one, which any
    outgoing connection may be given before slurmd binds it; once slurmd found its port in use ("Address
    already in use", a clean-clone CI run, 2026-12-07). A port outside the range is never handed out so.
    Each port at most once per run."""
    with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
        low = int(f.read().split()[0])
    rng = random.Random()
    for _ in range(500):
        port = rng.randrange(max(1024, low - 16000), low)
        if port in _ports_given:
            continue
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        _ports_given.add(port)
        return port
    raise AssertionError("no free TCP port below the ephemeral range")


class SlurmCluster:
    """slurm.conf keys worth knowing here: OverSubscribe (partition), PreemptMode, SchedulerTimeSlice; pass
    them in `partition` and `extra`. `plugin_args` (None: no plugin) go to spank_cosched.so in plugstack.conf;
    `prolog` is a Prolog= program."""

    def __init__(self, cpus=2, oversubscribe="FORCE:4", plugin=None, plugin_args="", prolog=None, extra=(),
                 partition_extra="", task="task/none", proctrack="proctrack/linuxproc"):
        missing = [b for b in SLURM_BINARIES if shutil.which(b, path=os.environ.get("PATH", "") + ":/usr/sbin")
                   is None]
        if missing:
            raise AssertionError(f"Slurm is not installed ({', '.join(missing)} missing): run scripts/setup")
        self.dir = tempfile.mkdtemp(prefix="cosched-slurm-")
        os.chmod(self.dir, 0o755)  # jobs run by other users must reach munge's socket
        for sub in ("state", "spool", "log"):
            os.makedirs(os.path.join(self.dir, sub))
        self.conf = os.path.join(self.dir, "slurm.conf")
        self.jobcomp = os.path.join(self.dir, "jobcomp.txt")
        self.munge_socket = os.path.join(self.dir, "munge.sock")
        self.env = dict(os.environ, SLURM_CONF=self.conf)
        self.procs = {}
        key = os.path.join(self.dir, "munge.key")
        with open(key, "wb") as f:
            f.write(os.urandom(1024))
        os.chmod(key, 0o400)
        plugstack = os.path.join(self.dir, "plugstack.conf")
        with open(plugstack, "w") as f:
            if plugin is not None:
                f.write(f"required {plugin} {plugin_args}\n")
        lines = [
            "ClusterName=cosched-test",
            f"SlurmctldHost={NODE}(127.0.0.1)",
            f"SlurmctldPort={free_port()}",
            f"SlurmdPort={free_port()}",
            "SlurmUser=root", "SlurmdUser=root",
            "AuthType=auth/munge", f"AuthInfo=socket={self.munge_socket}",
            "CredType=cred/munge",
            f"StateSaveLocation={self.dir}/state", f"SlurmdSpoolDir={self.dir}/spool",
            f"SlurmctldPidFile={self.dir}/slurmctld.pid", f"SlurmdPidFile={self.dir}/slurmd.pid",
            f"SlurmctldLogFile={self.dir}/log/slurmctld.log", f"SlurmdLogFile={self.dir}/log/slurmd.log",
            f"ProctrackType={proctrack}", f"TaskPlugin={task}",
            "SelectType=select/cons_tres", "SelectTypeParameters=CR_CPU",
            "SchedulerType=sched/builtin",
            "JobCompType=jobcomp/filetxt", f"JobCompLoc={self.jobcomp}",
            "AccountingStorageType=accounting_storage/none", "JobAcctGatherType=jobacct_gather/none",
            "MpiDefault=none", "ReturnToService=2", "KillWait=2", "MinJobAge=600",
            # A loaded machine (the ASan half of CI) can take more than the default 10 s to launch a batch job:
            # slurmctld then takes it for missing ("not found BatchStartTime after startup, Requeuing job")
            # and starts its script a second time. A CI run saw that, we think: a job's probe registered,
            # vanished, and started over 20 s later. slurm.conf(5) advises a larger BatchStartTimeout for a
            # slow Prolog or slurmd; MessageTimeout likewise for slow RPCs.
            "BatchStartTimeout=120", "MessageTimeout=60",
            f"PlugStackConfig={plugstack}",
        ]
        if prolog:
            lines.append(f"Prolog={prolog}")
        if "cgroup" in task + proctrack:
            # Slurm's cgroup/v1 plugin under the v1 hierarchies (this machine's hybrid layout): slurmd reads
            # cgroup.conf next to slurm.conf.
            with open(os.path.join(self.dir, "cgroup.conf"), "w") as f:
                f.write("CgroupPlugin=cgroup/v1\nCgroupMountpoint=/sys/fs/cgroup\nConstrainCores=yes\n")
        lines += list(extra)
        lines.append(f"NodeName={NODE} NodeAddr=127.0.0.1 CPUs={cpus} State=UNKNOWN")
        lines.append(f"PartitionName=main Nodes={NODE} Default=YES OverSubscribe={oversubscribe} "
                     f"MaxTime=INFINITE State=UP {partition_extra}".rstrip())
        with open(self.conf, "w") as f:
            f.write("\n".join(lines) + "\n")
        try:
            self._start()
        except BaseException:
            self.stop()
            raise

    def _spawn(self, name, argv):
        log = open(os.path.join(self.dir, "log", f"{name}.out"), "w")
        self.procs[name] = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=self.env,
                                            stdin=subprocess.DEVNULL, preexec_fn=_die_with_parent)
        log.close()

    def _start(self):
        self._spawn("munged", ["munged", "--foreground", "--force", f"--socket={self.munge_socket}",
                               f"--key-file={self.dir}/munge.key", f"--pid-file={self.dir}/munged.pid",
                               f"--log-file={self.dir}/log/munged.log", f"--seed-file={self.dir}/munged.seed"])
        wait_for(lambda: os.path.exists(self.munge_socket) or self.procs["munged"].poll() is not None, timeout=20,
                 interval=0.1, what="munged")
        self._check_alive("munged")
        self._spawn("slurmctld", ["slurmctld", "-D", "-c", "-f", self.conf])
        self._spawn("slurmd", ["slurmd", "-D", "-f", self.conf, "-N", NODE])
        try:
            wait_for(lambda: self._node_up(), timeout=40, interval=0.1, what="the Slurm node to come up")
        except AssertionError as e:
            raise AssertionError(f"{e}\n{self.logs()}") from None

    def _check_alive(self, name):
        if self.procs[name].poll() is not None:
            raise AssertionError(f"{name} exited at start ({self.procs[name].returncode}):\n{self.logs()}")

    def _node_up(self):
        for name in self.procs:
            self._check_alive(name)
        r = self.run(["sinfo", "-h", "-N", "-o", "%T"], check=False)
        return r.returncode == 0 and r.stdout.strip() in ("idle", "mixed", "allocated")

    def logs(self):
        out = []
        for name in ("munged.log", "slurmctld.log", "slurmd.log", "munged.out", "slurmctld.out", "slurmd.out"):
            path = os.path.join(self.dir, "log", name)
            if os.path.exists(path):
                with open(path, errors="replace") as f:
                    out.append(f"--- {name} (last lines)\n" + "".join(f.readlines()[-15:]))
        return "\n".join(out)

    def run(self, argv, check=True, timeout=30):
        r = subprocess.run(argv, env=self.env, capture_output=True, text=True, timeout=timeout)
        if check and r.returncode != 0:
            raise AssertionError(f"{' '.join(argv)} failed ({r.returncode}): {r.stderr.strip()}")
        return r

    def sbatch(self, args):
        """Submits; returns the job id."""
        r = self.run(["sbatch", "--parsable"] + list(args))
        return int(r.stdout.strip().split(";")[0])

    def job(self, job_id):
        """`scontrol show job` as a dict of its KEY=VALUE fields (one line)."""
        r = self.run(["scontrol", "-o", "show", "job", str(job_id)], check=False)
        fields = {}
        for token in r.stdout.split():
            if "=" in token:
                k, v = token.split("=", 1)
                fields.setdefault(k, v)
        return fields

    def job_cpus(self, job_id):
        """The CPUs Slurm allocated to the job on the node (`scontrol -d show job`: CPU_IDs)."""
        r = self.run(["scontrol", "-d", "-o", "show", "job", str(job_id)])
        m = re.search(r"CPU_IDs=([0-9,-]+)", r.stdout)
        if not m:
            raise AssertionError(f"no CPU_IDs for job {job_id}: {r.stdout.strip()}")
        cpus = set()
        for part in m.group(1).split(","):
            a, _, b = part.partition("-")
            cpus.update(range(int(a), int(b or a) + 1))
        return cpus

    def state(self, job_id):
        return self.job(job_id).get("JobState")

    def wait_state(self, job_id, states, timeout=60):
        return wait_for(lambda: self.state(job_id) in states and self.state(job_id), timeout=timeout, interval=0.1,
                        what=f"job {job_id} to reach {states} (now {self.state(job_id)})")

    def wait_ended(self, job_id, timeout=60):
        """The job's state once Slurm is done with it. COMPLETING is not an end: the job's processes have exited
        but Slurm still runs its epilog (a loaded run read COMPLETING right after RUNNING)."""
        busy = ("PENDING", "CONFIGURING", "RUNNING", "SUSPENDED", "COMPLETING", None)
        return wait_for(lambda: (state := self.state(job_id)) not in busy and state, timeout=timeout,
                        interval=0.1, what=f"job {job_id} to end (now {self.state(job_id)})")

    def node(self):
        """`scontrol show node` of the node as a dict (Reason keeps its spaces)."""
        line = self.run(["scontrol", "-o", "show", "node", NODE]).stdout.strip()
        fields = {}
        head, _, reason = line.partition(" Reason=")
        for token in head.split():
            if "=" in token:
                k, v = token.split("=", 1)
                fields.setdefault(k, v)
        fields["Reason"] = reason
        return fields

    def pending_reason(self, job_id):
        return self.run(["squeue", "-h", "-j", str(job_id), "-o", "%r"]).stdout.strip()

    def jobcomp_records(self):
        """jobcomp/filetxt's records: {job id: {field: value}}."""
        out = {}
        if not os.path.exists(self.jobcomp):
            return out
        with open(self.jobcomp) as f:
            for line in f:
                fields = dict(t.split("=", 1) for t in line.split() if "=" in t)
                if "JobId" in fields:
                    out[int(fields["JobId"])] = fields
        return out

    def cancel_all(self):
        self.run(["scancel", "--full", "-u", "root"], check=False)
        try:
            wait_for(lambda: not self.run(["squeue", "-h"], check=False).stdout.strip(), timeout=30, interval=0.1,
                     what="jobs to leave")
        except AssertionError:
            pass

    def stop(self):
        """Cancels our jobs, then stops our daemons (SIGTERM, SIGKILL after 15 s) and removes the directory."""
        if "slurmctld" in self.procs and self.procs["slurmctld"].poll() is None:
            self.cancel_all()
        for name in ("slurmd", "slurmctld", "munged"):
            p = self.procs.get(name)
            if p is None or p.poll() is not None:
                continue
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        shutil.rmtree(self.dir, ignore_errors=True)
