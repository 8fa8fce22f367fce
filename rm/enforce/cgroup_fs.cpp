#include "cgroup_fs.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "control_file.hpp"

namespace cosched::rm::cgroupfs {

bool find_mount(int version, const std::string& controller, Mount& m) {
  std::ifstream in("/proc/self/mountinfo");
  std::string line;
  while (std::getline(in, line)) {
    auto dash = line.find(" - ");
    if (dash == std::string::npos) continue;
    std::istringstream pre(line.substr(0, dash));
    std::istringstream post(line.substr(dash + 3));
    std::string id, parent, devno, root, mountpoint, fstype, source, super;
    pre >> id >> parent >> devno >> root >> mountpoint;
    post >> fstype >> source >> super;
    bool match = version == 2 ? fstype == "cgroup2"
                              : fstype == "cgroup" && ("," + super + ",").find("," + controller + ",") != std::string::npos;
    if (match) {
      m = {root, mountpoint};
      return true;
    }
  }
  return false;
}

std::string cgroup_of(pid_t pid, int version, const std::string& controller) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cgroup");
  std::string line;
  while (std::getline(in, line)) {
    auto c1 = line.find(':');
    auto c2 = line.find(':', c1 + 1);
    if (c1 == std::string::npos || c2 == std::string::npos) continue;
    std::string ctrls = line.substr(c1 + 1, c2 - c1 - 1);
    std::string path = line.substr(c2 + 1);
    if (version == 2 && line.compare(0, 2, "0:") == 0 && ctrls.empty()) return path;
    if (version == 1 && ("," + ctrls + ",").find("," + controller + ",") != std::string::npos) return path;
  }
  return {};
}

std::string to_fs(const Mount& m, const std::string& cg) {
  std::string rel = cg;
  if (m.root != "/" && rel.compare(0, m.root.size(), m.root) == 0) rel = rel.substr(m.root.size());
  if (rel == "/") rel.clear();
  return m.mountpoint + rel;
}

std::string read_line(const std::string& path) {
  std::ifstream in(path);
  std::string s;
  std::getline(in, s);
  return s;
}

Status write_file(const std::string& path, const std::string& text) {
  if (int err = write_control_file(path, text); err != 0) {
    return make_error(Errc::io_error, "cannot write '" + text + "' to " + path + ": " + std::strerror(err));
  }
  return {};
}

void PendingDirs::remove(const std::string& dir) {
  if (::rmdir(dir.c_str()) != 0 && errno != ENOENT) dirs_.push_back(dir);
}

void PendingDirs::tidy() {
  std::vector<std::string> still;
  for (auto& d : dirs_) {
    if (::rmdir(d.c_str()) != 0 && errno == EBUSY) still.push_back(d);
  }
  dirs_.swap(still);
}

void PendingDirs::pause_briefly() { ::usleep(50 * 1000); }

}  // namespace cosched::rm::cgroupfs
