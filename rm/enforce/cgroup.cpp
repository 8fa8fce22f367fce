// cpuset cgroup backend (v1 hierarchy, or the v2 unified hierarchy when it offers the cpuset controller).
//
// Layout: <hierarchy>/<rm parent>/cosched.<rm pid>/job<id>. Moving a process into a job's cpuset confines
// all its present and future threads — what the affinity backend cannot guarantee with libomp. Release
// writes the pid back into the cgroup the job came from (in v1 that also resets its mask to that cpuset).
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <vector>

#include "cosched/log.hpp"
#include "cgroup_fs.hpp"
#include "control_file.hpp"
#include "enforcer.hpp"

namespace cosched::rm {

namespace {

using cgroupfs::Mount;

bool find_mount(int version, Mount& m) { return cgroupfs::find_mount(version, "cpuset", m); }
std::string cgroup_of(pid_t pid, int version) { return cgroupfs::cgroup_of(pid, version, "cpuset"); }
using cgroupfs::to_fs;

using cgroupfs::write_file;

std::string read_file(const std::string& path) { return cgroupfs::read_line(path); }

class CgroupEnforcer final : public Enforcer {
 public:
  CgroupEnforcer(int version, Mount m, std::string rm_dir, Guard& guard)
      : version_(version), mount_(std::move(m)), rm_dir_(std::move(rm_dir)), guard_(guard) {}
  ~CgroupEnforcer() override { shutdown(); }

  [[nodiscard]] std::string_view name() const override { return version_ == 2 ? "cgroup-v2" : "cgroup-v1"; }

  Status attach(Job& job) override {
    std::string orig = cgroup_of(job.pid, version_);
    if (orig.empty()) return make_error(Errc::not_found, "job " + std::to_string(job.id) + ": pid " + std::to_string(job.pid) + " has no cgroup (gone?)");
    std::string dir = rm_dir_ + "/job" + std::to_string(job.id);
    if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
      return make_error(Errc::io_error, "mkdir " + dir + ": " + std::strerror(errno));
    }
    job.cgroup_dir = dir;
    job.original_cgroup_procs = to_fs(mount_, orig) + "/cgroup.procs";
    // A job cgroup needs mems and cpus before it can hold tasks: start with every managed CPU.
    if (auto st = write_file(dir + "/cpuset.mems", read_file(rm_dir_ + "/cpuset.mems")); !st) return st;
    if (auto st = write_file(dir + "/cpuset.cpus", read_file(rm_dir_ + "/cpuset.cpus")); !st) return st;
    guard_.job_confined(job.pid, job.original_cgroup_procs, dir);
    return {};
  }

  Status confine(Job& job) override {
    if (job.cgroup_dir.empty()) return make_error(Errc::not_found, "job " + std::to_string(job.id) + " is not attached");
    return write_file(job.cgroup_dir + "/cgroup.procs", std::to_string(job.pid));
  }

  Status apply(Job& job, const CpuSet& cpus) override {
    if (job.cgroup_dir.empty()) return make_error(Errc::not_found, "job " + std::to_string(job.id) + " is not attached");
    return write_file(job.cgroup_dir + "/cpuset.cpus", cpus.to_string());
  }

  void release(Job& job) override {
    if (job.cgroup_dir.empty()) return;
    if (!job.original_cgroup_procs.empty() && ::kill(job.pid, 0) == 0) {
      // kill(0) also succeeds on a zombie, whose move fails with ESRCH: an exited job needs no undoing.
      if (int err = write_control_file(job.original_cgroup_procs, std::to_string(job.pid)); err != 0 && err != ESRCH) {
        COSCHED_WARN(enforce, "job {}: cannot move pid {} back to {}: {}", job.id, job.pid,
                     job.original_cgroup_procs, std::strerror(err));
      }
    }
    guard_.job_released(job.pid);
    pending_.remove(job.cgroup_dir);
    job.cgroup_dir.clear();
  }

  void tidy() override { pending_.tidy(); }

  void shutdown() override {
    if (rm_dir_.empty()) return;
    // Still busy (a job that exited but is not reaped yet): the guard, which outlives us, removes them.
    pending_.drain([this](const std::string& d) { guard_.owns_dir(d); });
    ::rmdir(rm_dir_.c_str());
    rm_dir_.clear();
  }

 private:
  int version_;
  Mount mount_;
  std::string rm_dir_;
  Guard& guard_;
  cgroupfs::PendingDirs pending_;
};

}  // namespace

Result<std::unique_ptr<Enforcer>> make_cgroup_enforcer(int version, const CpuSet& managed, Guard& guard) {
  const std::string tag = version == 2 ? "cgroup v2" : "cgroup v1";
  Mount m;
  if (!find_mount(version, m)) return make_error(Errc::unsupported, tag + ": no cpuset hierarchy mounted");
  std::string parent;
  if (version == 2) {
    // The unified hierarchy forbids processes in inner cgroups except the root: hang our tree off the root.
    parent = m.mountpoint;
    std::string ctrls = " " + read_file(parent + "/cgroup.controllers") + " ";
    if (ctrls.find(" cpuset ") == std::string::npos) {
      return make_error(Errc::unsupported, tag + ": the cpuset controller is not available at " + parent);
    }
    if (auto st = write_file(parent + "/cgroup.subtree_control", "+cpuset"); !st) {
      return make_error(Errc::unsupported, tag + ": " + st.error().message);
    }
  } else {
    parent = to_fs(m, cgroup_of(::getpid(), 1));
  }
  if (::access(parent.c_str(), W_OK) != 0) {
    return make_error(Errc::permission_denied, tag + ": " + parent + " is not writable (run as root)");
  }
  std::string rm_dir = parent + "/cosched." + std::to_string(::getpid());
  if (::mkdir(rm_dir.c_str(), 0755) != 0 && errno != EEXIST) {
    return make_error(Errc::io_error, tag + ": mkdir " + rm_dir + ": " + std::strerror(errno));
  }
  guard.owns_dir(rm_dir);
  std::string mems = read_file(parent + (version == 2 ? "/cpuset.mems.effective" : "/cpuset.mems"));
  if (mems.empty()) mems = read_file(parent + "/cpuset.effective_mems");
  if (mems.empty()) mems = "0";
  auto fail = [&](const Error& e) {
    ::rmdir(rm_dir.c_str());
    return make_error(Errc::unsupported, tag + ": " + e.message);
  };
  if (auto st = write_file(rm_dir + "/cpuset.mems", mems); !st) return fail(st.error());
  if (auto st = write_file(rm_dir + "/cpuset.cpus", managed.to_string()); !st) return fail(st.error());
  if (version == 2) {
    if (auto st = write_file(rm_dir + "/cgroup.subtree_control", "+cpuset"); !st) return fail(st.error());
  }
  COSCHED_INFO(enforce, "{}: jobs confined under {}", tag, rm_dir);
  return std::unique_ptr<Enforcer>(new CgroupEnforcer(version, m, rm_dir, guard));
}

}  // namespace cosched::rm
