#include "slurm_site.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <sstream>

#include "qs/qsubmit/processes.hpp"

namespace cosched::qsubmit {

namespace {

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\r')) s.pop_back();
  std::size_t i = 0;
  while (i < s.size() && s[i] == ' ') ++i;
  return s.substr(i);
}

std::string first_line(const std::string& s) {
  std::string t = trim(s);
  auto nl = t.find('\n');
  return nl == std::string::npos ? t : t.substr(0, nl);
}

// A KEY=VALUE token of a `scontrol -o show` line.
std::string field(const std::string& line, const std::string& key) {
  std::istringstream in(line);
  std::string token;
  while (in >> token) {
    if (token.rfind(key + "=", 0) == 0) return token.substr(key.size() + 1);
  }
  return {};
}

// Reads a pipe to its end.
std::string drain(int fd) {
  std::string out;
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  return out;
}

}  // namespace

Result<std::string> run_slurm_command(const std::vector<std::string>& argv) {
  int out_pipe[2];
  int err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) return make_error(Errc::io_error, std::string("pipe: ") + std::strerror(errno));
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
    ::close(out_pipe[0]);
    ::close(out_pipe[1]);
    return make_error(Errc::io_error, std::string("pipe: ") + std::strerror(errno));
  }
  pid_t pid = ::fork();
  if (pid < 0) return make_error(Errc::io_error, std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    signals::reset_in_child();
    ::dup2(out_pipe[1], STDOUT_FILENO);
    ::dup2(err_pipe[1], STDERR_FILENO);
    int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, STDIN_FILENO);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execvp(args[0], args.data());
    std::string msg = argv[0] + ": " + std::strerror(errno);
    ssize_t ignored = ::write(STDERR_FILENO, msg.data(), msg.size());
    (void)ignored;
    ::_exit(127);
  }
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  // Slurm's commands print little on stderr; reading stdout first cannot fill the stderr pipe.
  std::string out = drain(out_pipe[0]);
  std::string err = drain(err_pipe[0]);
  ::close(out_pipe[0]);
  ::close(err_pipe[0]);
  auto status = reap_within(pid, 60.0);
  if (!status) {
    ::kill(pid, SIGKILL);
    (void)reap_within(pid, 5.0);
    return make_error(Errc::timeout, argv[0] + " did not finish within 60 s");
  }
  if (*status != 0) {
    std::string why = first_line(err);
    if (why.empty()) why = first_line(out);
    return make_error(*status == 127 ? Errc::not_found : Errc::io_error,
                      argv[0] + " failed (exit " + std::to_string(*status) + ")" + (why.empty() ? "" : ": " + why));
  }
  return out;
}

Result<SlurmSite> read_slurm_site(const std::string& partition) {
  SlurmSite site;
  auto config = run_slurm_command({"scontrol", "show", "config"});
  if (!config) return config.error();
  std::istringstream lines(*config);
  std::string line;
  while (std::getline(lines, line)) {
    auto eq = line.find('=');
    if (eq == std::string::npos) continue;
    std::string key = trim(line.substr(0, eq));
    std::string value = trim(line.substr(eq + 1));
    if (key == "JobCompType") site.jobcomp_type = value;
    if (key == "JobCompLoc") site.jobcomp_loc = value;
  }
  auto parts = run_slurm_command(partition.empty() ? std::vector<std::string>{"scontrol", "-o", "show", "partition"}
                                                   : std::vector<std::string>{"scontrol", "-o", "show", "partition",
                                                                              partition});
  if (!parts) return parts.error();
  std::istringstream plines(*parts);
  while (std::getline(plines, line)) {
    if (line.empty()) continue;
    if (!partition.empty() || field(line, "Default") == "YES") {
      site.partition = field(line, "PartitionName");
      site.total_cpus = std::atoi(field(line, "TotalCPUs").c_str());
      break;
    }
  }
  if (site.partition.empty()) {
    return make_error(Errc::not_found, partition.empty() ? "Slurm has no default partition: name one with --partition"
                                                         : "Slurm has no partition '" + partition + "'");
  }
  auto nodes = run_slurm_command({"sinfo", "-h", "-N", "-p", site.partition, "-o", "%c"});
  if (!nodes) return nodes.error();
  std::istringstream nlines(*nodes);
  while (std::getline(nlines, line)) site.node_cpus = std::max(site.node_cpus, std::atoi(line.c_str()));
  if (site.node_cpus <= 0 || site.total_cpus <= 0) {
    return make_error(Errc::not_found, "Slurm partition '" + site.partition + "' has no CPUs");
  }
  auto help = run_slurm_command({"sbatch", "--help"});
  site.has_cosched_option = help && help->find("--cosched") != std::string::npos;
  return site;
}

Result<std::int64_t> sbatch(const std::vector<std::string>& options, const std::string& script) {
  std::vector<std::string> argv = {"sbatch", "--parsable"};
  argv.insert(argv.end(), options.begin(), options.end());
  argv.push_back(script);
  auto out = run_slurm_command(argv);
  if (!out) return out.error();
  std::string id = first_line(*out);
  if (auto semi = id.find(';'); semi != std::string::npos) id.resize(semi);  // "id;cluster"
  char* end = nullptr;
  long long v = std::strtoll(id.c_str(), &end, 10);
  if (id.empty() || *end != '\0' || v <= 0) return make_error(Errc::parse_error, "sbatch printed '" + id + "', not a job id");
  return static_cast<std::int64_t>(v);
}

Result<std::set<std::int64_t>> active_jobs(const std::set<std::int64_t>& ids) {
  std::set<std::int64_t> out;
  if (ids.empty()) return out;
  auto listed = run_slurm_command({"squeue", "-h", "-o", "%i", "-t", "PD,R,S,CG,CF"});
  if (!listed) return listed.error();
  std::istringstream in(*listed);
  std::string line;
  while (std::getline(in, line)) {
    std::int64_t id = std::atoll(line.c_str());
    if (ids.count(id) != 0) out.insert(id);
  }
  return out;
}

void scancel(const std::set<std::int64_t>& ids) {
  if (ids.empty()) return;
  std::vector<std::string> argv = {"scancel"};
  for (auto id : ids) argv.push_back(std::to_string(id));
  (void)run_slurm_command(argv);
}

}  // namespace cosched::qsubmit
