#!/usr/bin/python3
"""Who may do what (docs/architecture.md, "Who may do what"): an RM run by root for every local user
(--all-users) lets `nobody` register their own jobs, which it confines like any other, and read status; only
root, the RM's own user or a member of --admin-group may switch the policy, set parameters or shut the RM
down, and every refusal is logged with the peer's pid and uid. Without --all-users, `nobody` cannot even
connect."""
import os
import subprocess
import tempfile
import unittest

from harness import (CTL, NOBODY, RM, RUN, RmTestCase, as_user, cpus_allowed, cpuset_cgroup, program,
                     require_reachable_by, wait_for)

LONG = ["--iterations", "100000", "--work-ms", "20", "--quiet"]


class AccessModel(RmTestCase):
    def setUp(self):
        super().setUp()
        if os.geteuid() != 0:
            self.skipTest("needs root: the RM must run as root and the clients as nobody")
        require_reachable_by(self, NOBODY, RM, RUN, CTL, program("amdahl-clang"))

    def node_rm(self, *extra):
        rm = self.start_rm("--all-users", "--enforce", "auto", *extra)
        os.chmod(rm.dir, 0o711)  # the harness's private directory: others may reach the socket, not list it
        return rm

    def ctl_as_nobody(self, rm, *args):
        return subprocess.run(as_user(NOBODY) + [CTL, "--socket", rm.socket] + list(args), capture_output=True,
                              text=True, timeout=20)

    def test_nobody_registers_a_confined_job_and_reads_status(self):
        rm = self.node_rm()
        mine = self.start_job([program("amdahl-clang")] + LONG, rm, request=2)
        theirs = self.start_job([program("amdahl-clang")] + LONG, rm, request=2, user=NOBODY)
        wait_for(lambda: all((rm.job(j.pid) or {}).get("allocated") == 1 for j in (mine, theirs)),
                 what="both jobs admitted at 1 CPU")
        job = rm.job(theirs.pid)
        self.assertEqual(job["uid"], NOBODY)
        # Confined like root's own job: every thread on its one granted CPU, in the RM's cgroup when it has one.
        wait_for(lambda: set(cpus_allowed(theirs.pid).values()) == {frozenset(job["cpus"])}, timeout=5,
                 what=f"nobody's job on CPU {job['cpus']}")
        if rm.status()["enforcement"].startswith("cgroup"):
            self.assertIn("cosched", cpuset_cgroup(theirs.pid) or "", "nobody's job is not in the RM's cgroup")
        r = self.ctl_as_nobody(rm, "status", "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(str(theirs.pid), r.stdout)

    def test_nobody_may_not_change_the_rm(self):
        rm = self.node_rm()
        for args in (["shutdown"], ["set", "target_eff=0.5"], ["policy", "pdpa"]):
            r = self.ctl_as_nobody(rm, *args)
            self.assertNotEqual(r.returncode, 0, f"nobody's `cosched-ctl {' '.join(args)}` succeeded")
            self.assertIn("permission denied", r.stderr + r.stdout)
        self.assertIsNone(rm.proc.poll(), "nobody shut the RM down")
        self.assertEqual(rm.status()["policy"], "equip", "nobody switched the policy")
        log = rm.messages_text()
        self.assertIn(f"uid {NOBODY}", log)
        self.assertRegex(log, r"refused shut the RM down from pid \d+ uid 65534")
        # Root still may.
        rm.ctl("policy", "pdpa")
        self.assertEqual(rm.status()["policy"], "pdpa")

    def test_a_user_releases_only_their_own_jobs(self):
        rm = self.node_rm()
        mine = self.start_job([program("amdahl-clang")] + LONG, rm, request=2)
        theirs = self.start_job([program("amdahl-clang")] + LONG, rm, request=2, user=NOBODY)
        wait_for(lambda: all((rm.job(j.pid) or {}).get("allocated") == 1 for j in (mine, theirs)),
                 what="both jobs admitted at 1 CPU")
        my_id, their_id = rm.job(mine.pid)["id"], rm.job(theirs.pid)["id"]
        # nobody may not release root's job: refused, logged, and the job stays managed.
        r = self.ctl_as_nobody(rm, "release", str(my_id))
        self.assertNotEqual(r.returncode, 0, "nobody released root's job")
        self.assertIn("permission denied", r.stderr)
        self.assertRegex(rm.messages_text(), rf"refused release of job {my_id} \(uid 0\) from pid \d+ uid 65534")
        self.assertIsNotNone(rm.job(mine.pid))
        # nobody releases their own: it leaves status, its CPUs go to root's job, and it runs on, unconfined.
        r = self.ctl_as_nobody(rm, "release", str(their_id))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIsNone(rm.job(theirs.pid))
        wait_for(lambda: (rm.job(mine.pid) or {}).get("allocated") == 2, what="root's job at 2 CPUs")
        online = frozenset(range(os.cpu_count()))
        wait_for(lambda: set(cpus_allowed(theirs.pid).values()) == {online}, timeout=5,
                 what=f"nobody's released job on every CPU: {cpus_allowed(theirs.pid)}")
        self.assertIsNone(theirs.proc.poll(), "the released job ended")
        self.assertNotIn("cosched", cpuset_cgroup(theirs.pid) or "")

    def test_a_member_of_the_admin_group_may(self):
        # nobody's primary group (as the harness runs it: gid 65534, "nogroup" on Debian) as the admin group.
        import grp
        try:
            name = grp.getgrgid(NOBODY).gr_name
        except KeyError:
            self.skipTest(f"no group with gid {NOBODY} on this host")
        rm = self.node_rm("--admin-group", name)
        r = self.ctl_as_nobody(rm, "policy", "pdpa")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(rm.status()["policy"], "pdpa")

    def test_without_all_users_nobody_cannot_connect(self):
        rm = self.start_rm()
        os.chmod(rm.dir, 0o711)
        r = self.ctl_as_nobody(rm, "status")
        self.assertNotEqual(r.returncode, 0)

    def test_unknown_groups_are_one_clear_error_before_anything_is_created(self):
        for option in ("--admin-group", "--socket-group"):
            with self.subTest(option=option), tempfile.TemporaryDirectory(prefix="cosched-access-") as d:
                sock_dir = os.path.join(d, "rm")
                access = ["--all-users"] if option == "--admin-group" else []  # --socket-group excludes it
                r = subprocess.run([RM, "--foreground", "--socket", os.path.join(sock_dir, "rm.sock")] + access +
                                   [option, "no-such-group-cosched"], capture_output=True, text=True, timeout=20)
                self.assertNotEqual(r.returncode, 0)
                self.assertEqual(r.stderr.strip().splitlines(),
                                 [f"cosched-rm: unknown group 'no-such-group-cosched' for {option}"])
                # Neither the socket's directory nor the accounting file next to the socket was made.
                self.assertEqual(os.listdir(d), [])


if __name__ == "__main__":
    unittest.main(verbosity=2)
