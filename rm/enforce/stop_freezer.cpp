// Stopping jobs with a cgroup freezer: v2 `cgroup.freeze` (1/0; `cgroup.events` says "frozen 1" once every
// thread is held) or the v1 freezer (`freezer.state` FROZEN/THAWED).
//
// Layout: <hierarchy>/<rm parent>/cosched-freeze.<rm pid>/job<id>, created at the first stop (the RM's
// directory) and at the job's first stop (the job's); the job is moved there then and back to the cgroup it
// came from on release. An RM that never stops a job leaves nothing in the hierarchy, even if it is killed
// together with its guard. Under cgroup-v2 cpuset enforcement
// the job's cpuset cgroup is its freezer (one cgroup per process and hierarchy).
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "cgroup_fs.hpp"
#include "control_file.hpp"
#include "cosched/log.hpp"
#include "stopper.hpp"

namespace cosched::rm {

namespace {

using cgroupfs::write_file;

class FreezerStopper final : public Stopper {
 public:
  FreezerStopper(int version, cgroupfs::Mount m, std::string rm_dir, bool cpuset_v2, Guard& guard)
      : version_(version), mount_(std::move(m)), rm_dir_(std::move(rm_dir)), cpuset_v2_(cpuset_v2), guard_(guard) {}
  ~FreezerStopper() override { shutdown(); }

  [[nodiscard]] std::string_view name() const override { return version_ == 2 ? "cgroup-v2" : "cgroup-v1"; }

  Status stop(Job& job) override {
    if (auto st = ensure_cgroup(job); !st) return st;
    guard_.job_stopped(job.pid, job.freezer_dir);  // before: a RM killed right after the write is covered
    return write_file(state_file(job), version_ == 2 ? "1" : "FROZEN");
  }

  Status resume(Job& job) override {
    if (job.freezer_dir.empty()) return {};
    auto st = write_file(state_file(job), version_ == 2 ? "0" : "THAWED");
    if (st) guard_.job_resumed(job.pid);
    return st;
  }

  [[nodiscard]] bool stopped(const Job& job) const override {
    if (job.freezer_dir.empty()) return false;
    if (version_ == 1) return cgroupfs::read_line(job.freezer_dir + "/freezer.state") == "FROZEN";
    // cgroup.events: "populated 1\nfrozen 1"
    int fd = ::open((job.freezer_dir + "/cgroup.events").c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    char buf[128];
    ssize_t n = ::read(fd, buf, sizeof buf - 1);
    ::close(fd);
    if (n <= 0) return false;
    buf[n] = '\0';
    return std::strstr(buf, "frozen 1") != nullptr;
  }

  void release(Job& job) override {
    if (job.freezer_dir.empty()) return;
    (void)write_control_file(state_file(job), version_ == 2 ? "0" : "THAWED");
    if (job.freezer_owned) {
      if (!job.freezer_restore_procs.empty() && ::kill(job.pid, 0) == 0) {
        if (int err = write_control_file(job.freezer_restore_procs, std::to_string(job.pid)); err != 0 && err != ESRCH) {
          COSCHED_WARN(enforce, "job {}: cannot move pid {} back to {}: {}", job.id, job.pid,
                       job.freezer_restore_procs, std::strerror(err));
        }
      }
      pending_.remove(job.freezer_dir);
    }
    guard_.job_resumed(job.pid);
    job.freezer_dir.clear();
    job.freezer_owned = false;
  }

  void tidy() override { pending_.tidy(); }

  void shutdown() override {
    if (rm_dir_.empty()) return;
    // Still busy (a job that exited but is not reaped yet): the guard, which outlives us, removes them.
    pending_.drain([this](const std::string& d) { guard_.owns_dir(d); });
    if (rm_dir_made_) ::rmdir(rm_dir_.c_str());
    rm_dir_.clear();
  }

 private:
  [[nodiscard]] std::string state_file(const Job& job) const {
    return job.freezer_dir + (version_ == 2 ? "/cgroup.freeze" : "/freezer.state");
  }

  Status ensure_cgroup(Job& job) {
    if (!job.freezer_dir.empty()) return {};
    if (cpuset_v2_ && !job.cgroup_dir.empty()) {
      job.freezer_dir = job.cgroup_dir;  // its cpuset cgroup; the cpuset enforcement moves it back on release
      return {};
    }
    const std::string orig = cgroupfs::cgroup_of(job.pid, version_, "freezer");
    if (orig.empty()) return make_error(Errc::not_found, "pid " + std::to_string(job.pid) + " has no cgroup (gone?)");
    if (!rm_dir_made_) {
      if (::mkdir(rm_dir_.c_str(), 0755) != 0 && errno != EEXIST) {
        return make_error(Errc::io_error, "mkdir " + rm_dir_ + ": " + std::strerror(errno));
      }
      guard_.owns_dir(rm_dir_);
      rm_dir_made_ = true;
    }
    const std::string dir = rm_dir_ + "/job" + std::to_string(job.id);
    if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
      return make_error(Errc::io_error, "mkdir " + dir + ": " + std::strerror(errno));
    }
    job.freezer_dir = dir;
    job.freezer_owned = true;
    job.freezer_restore_procs = cgroupfs::to_fs(mount_, orig) + "/cgroup.procs";
    guard_.job_confined(job.pid, job.freezer_restore_procs, dir);
    return write_file(dir + "/cgroup.procs", std::to_string(job.pid));
  }

  int version_;
  cgroupfs::Mount mount_;
  std::string rm_dir_;
  bool cpuset_v2_;
  bool rm_dir_made_ = false;
  Guard& guard_;
  cgroupfs::PendingDirs pending_;
};

}  // namespace

Result<std::unique_ptr<Stopper>> make_freezer_stopper(int version, bool cpuset_v2, Guard& guard) {
  const std::string tag = version == 2 ? "cgroup v2 freezer" : "cgroup v1 freezer";
  cgroupfs::Mount m;
  if (!cgroupfs::find_mount(version, "freezer", m)) return make_error(Errc::unsupported, tag + ": not mounted");
  // v2: off the hierarchy's root (no process may sit in an inner cgroup that has controllers enabled);
  // v1: under the RM's own freezer cgroup.
  const std::string parent =
      version == 2 ? m.mountpoint : cgroupfs::to_fs(m, cgroupfs::cgroup_of(::getpid(), 1, "freezer"));
  if (::access(parent.c_str(), W_OK) != 0) {
    return make_error(Errc::permission_denied, tag + ": " + parent + " is not writable (run as root)");
  }
  const std::string rm_dir = parent + "/cosched-freeze." + std::to_string(::getpid());
  if (::mkdir(rm_dir.c_str(), 0755) != 0 && errno != EEXIST) {
    return make_error(Errc::io_error, tag + ": mkdir " + rm_dir + ": " + std::strerror(errno));
  }
  // The freezer's control file must exist (a v2 kernel before 5.2 has none); the probe directory goes away
  // at once and comes back at the first stop.
  const char* control = version == 2 ? "/cgroup.freeze" : "/freezer.state";
  const bool usable = ::access((rm_dir + control).c_str(), W_OK) == 0;
  ::rmdir(rm_dir.c_str());
  if (!usable) return make_error(Errc::unsupported, tag + ": no " + std::string(control + 1) + " in " + rm_dir);
  return std::unique_ptr<Stopper>(new FreezerStopper(version, m, rm_dir, cpuset_v2, guard));
}

}  // namespace cosched::rm
