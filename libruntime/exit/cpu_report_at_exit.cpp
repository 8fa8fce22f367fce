// The job's CPU report at exit (docs/usage.md, "What the job's CPUs bought"), where the user asked for it:
// COSCHED_REPORT=FILE appends it to FILE, COSCHED_REPORT=- writes it to standard error (cosched-run
// --report). The RM builds it (rm/accounting/cpu_report.hpp) from what it recorded of the job; the job asks
// over a control connection of its own while its registration connection is still open, so the report
// covers the whole run: from the tool's finalize (libomp's shutdown, before the tool leaves the RM), else
// from a library destructor. Off the hot path: it runs once, at exit().
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "cosched/wire.hpp"
#include "libruntime/options.hpp"
#include "libruntime/rm_client.hpp"
#include "libruntime/tool_state.hpp"

#include <atomic>

namespace cosched::rt {
namespace {

// The value of the string field "text" of the RM's JSON reply (nlohmann's escapes: \" \\ \/ \b \f \n \r \t
// and \u00XX for other control characters; UTF-8 stays as it is). Empty when absent.
std::string text_field(const std::string& json) {
  const std::string key = "\"text\":\"";
  std::size_t i = json.find(key);
  if (i == std::string::npos) return {};
  std::string out;
  for (i += key.size(); i < json.size() && json[i] != '"'; ++i) {
    if (json[i] != '\\' || i + 1 >= json.size()) {
      out += json[i];
      continue;
    }
    const char e = json[++i];
    switch (e) {
      case 'n': out += '\n'; break;
      case 't': out += '\t'; break;
      case 'r': out += '\r'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'u':
        if (i + 4 < json.size()) {
          out += static_cast<char>(std::strtol(json.substr(i + 1, 4).c_str(), nullptr, 16) & 0x7f);
          i += 4;
        }
        break;
      default: out += e; break;  // \" \\ \/
    }
  }
  return out;
}

std::string ask_rm(const Options& opt, std::uint32_t job) {
  std::string err;
  const int fd = wire::connect_unix(opt.socket, opt.connect_timeout_ms, err);
  if (fd < 0) return {};
  timeval tv{2, 0};  // an RM that does not answer must not hold the program's exit for long
  (void)::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  const std::string req = "{\"cmd\":\"report\",\"job\":" + std::to_string(job) + "}";
  wire::Frame reply;
  std::string text;
  if (wire::send_frame(fd, proto::MsgType::ctl_request, req.data(), static_cast<std::uint32_t>(req.size())) &&
      wire::recv_frame(fd, reply, proto::kMaxReplyPayload) == wire::RecvStatus::ok &&
      reply.type == proto::MsgType::ctl_reply) {
    text = text_field(reply.payload);
  }
  if (reply.passed_fd >= 0) ::close(reply.passed_fd);
  ::close(fd);
  return text;
}

}  // namespace

void write_cpu_report() {
  static std::atomic<bool> done{false};
  if (done.exchange(true)) return;
  const char* where = std::getenv("COSCHED_REPORT");
  if (where == nullptr || *where == '\0' || rm_registration() != Registration::registered) return;
  if (!g_tool.rm_alive.load(std::memory_order_acquire)) return;  // the RM is gone, and its record of the job
  const Options opt = read_options();
  if (!opt.job_key.empty()) return;  // a process of a job of several: the job's report is not its own
  // The program cosched-run started, not a child it forked (exit/exit_report.cpp).
  const char* launched = std::getenv("COSCHED_RUN_PID");
  if (launched != nullptr && std::strtol(launched, nullptr, 10) != static_cast<long>(::getpid())) return;
  const std::string text = ask_rm(opt, g_tool.job_id);
  const std::string out = "cosched: " + std::string(program_invocation_short_name) + " (pid " +
                          std::to_string(::getpid()) + "): " +
                          (text.empty() ? std::string("no CPU report: the resource manager did not answer\n") : text);
  const bool to_stderr = std::strcmp(where, "-") == 0;
  const int fd = to_stderr ? STDERR_FILENO : ::open(where, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) {
    std::fprintf(stderr, "cosched: cannot write the CPU report to %s (COSCHED_REPORT): %s\n", where,
                 std::strerror(errno));
    return;
  }
  (void)!::write(fd, out.data(), out.size());
  if (!to_stderr) ::close(fd);
}

namespace {
// A program whose runtime never finalizes the tool (one that ends in a relinked code's own exit path).
__attribute__((destructor)) void write_cpu_report_at_exit() { write_cpu_report(); }
}  // namespace
}  // namespace cosched::rt
