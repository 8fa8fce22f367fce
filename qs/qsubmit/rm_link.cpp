#include "rm_link.hpp"

#include <algorithm>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "ctl/client.hpp"
#include "paths.hpp"
#include "processes.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace cosched::qsubmit {

namespace {

constexpr int kRequestTimeoutMs = 2000;

Error field_error(const std::string& field, const char* expected) {
  return make_error(Errc::protocol_error, "the RM's status reply: field '" + field + "' is not " + expected);
}

Result<std::vector<int>> int_list(const json& v, const std::string& field) {
  if (!v.is_array()) return field_error(field, "a list of CPU numbers");
  std::vector<int> out;
  for (const auto& x : v) {
    if (!x.is_number_integer()) return field_error(field, "a list of CPU numbers");
    out.push_back(x.get<int>());
  }
  return out;
}

// The reply if it says ok, else its error as an Error.
Result<json> checked_request(const std::string& socket, const json& req) {
  auto reply = ctl::request(socket, req, kRequestTimeoutMs);
  if (!reply) return reply.error();
  if (!reply->is_object() || !reply->value("ok", false)) {
    std::string why = reply->is_object() ? reply->value("error", std::string("no reason given")) : "not an object";
    return make_error(Errc::protocol_error, "cosched-rm refused " + req.value("cmd", std::string()) + ": " + why);
  }
  return reply;
}

// A temporary directory short enough for a UNIX socket path (108 bytes) under it.
std::string make_temp_dir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string base = tmp != nullptr && *tmp != '\0' && std::string(tmp).size() < 60 ? tmp : "/tmp";
  std::string pattern = base + "/qsubmit-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) return {};
  return pattern;
}

std::string file_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

Result<RmStatus> parse_status(const json& reply) {
  if (!reply.is_object()) return field_error("(reply)", "an object");
  RmStatus st;
  st.policy = reply.value("policy", std::string());
  if (reply.contains("params") && reply["params"].is_object()) st.params = reply["params"];
  if (!reply.contains("cpus")) return field_error("cpus", "present");
  auto cpus = int_list(reply["cpus"], "cpus");
  if (!cpus) return cpus.error();
  st.cpus = std::move(*cpus);
  st.may_start = reply.value("may_start", false);
  st.uptime_s = reply.value("uptime_s", 0.0);
  if (!reply.contains("jobs") || !reply["jobs"].is_array()) return field_error("jobs", "a list");
  for (const auto& j : reply["jobs"]) {
    if (!j.is_object() || !j.contains("pid") || !j["pid"].is_number_integer()) return field_error("jobs[].pid", "an integer");
    RmJobView v;
    v.pid = j["pid"].get<pid_t>();
    v.id = j.value("id", std::int64_t{-1});
    v.allocated = j.value("allocated", 0);
    auto list = int_list(j.value("cpus", json::array()), "jobs[].cpus");
    if (!list) return list.error();
    v.cpus = std::move(*list);
    v.stopped = j.value("state", std::string("running")) == "stopped";
    st.jobs.push_back(std::move(v));
  }
  return st;
}

RmLink::RmLink(std::string socket) : socket_(std::move(socket)) {}

RmLink::RmLink(RmLink&& other) noexcept
    : socket_(std::move(other.socket_)), temp_dir_(std::move(other.temp_dir_)), rm_pid_(other.rm_pid_) {
  other.rm_pid_ = 0;
  other.temp_dir_.clear();
}

RmLink::~RmLink() { stop(); }

Result<RmLink> RmLink::start_private(const PrivateRmSettings& settings) {
  RmLink link;
  link.temp_dir_ = make_temp_dir();
  if (link.temp_dir_.empty()) return make_error(Errc::io_error, "cannot create a temporary directory for the RM socket");
  link.socket_ = link.temp_dir_ + "/rm.sock";
  std::string messages = link.temp_dir_ + "/rm.log";

  SpawnSpec spec;
  spec.argv = {cosched_rm_path(), "--foreground", "--socket", link.socket_, "--policy", settings.policy};
  for (const auto& p : settings.params) spec.argv.insert(spec.argv.end(), {"--param", p});
  if (!settings.cpus.empty()) spec.argv.insert(spec.argv.end(), {"--cpus", settings.cpus});
  if (!settings.decision_log.empty()) spec.argv.insert(spec.argv.end(), {"--log", settings.decision_log});
  spec.stdout_path = messages;
  spec.stderr_path = messages;
  auto pid = spawn(spec);
  if (!pid) return pid.error();
  link.rm_pid_ = *pid;

  // Ready means: it answers. A bad --param or --cpus makes it exit with its reason in the messages.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (;;) {
    if (auto exit_status = try_reap(link.rm_pid_)) {
      link.rm_pid_ = 0;
      std::string text = file_text(messages);
      while (!text.empty() && text.back() == '\n') text.pop_back();
      return make_error(Errc::invalid_argument, "the private cosched-rm did not start (exit status " +
                                                    std::to_string(*exit_status) + "): " + text);
    }
    if (fs::exists(link.socket_) && ctl::request(link.socket_, {{"cmd", "status"}}, 500).ok()) return link;
    if (std::chrono::steady_clock::now() > deadline) {
      return make_error(Errc::timeout, "the private cosched-rm did not answer within 10 s; its messages: " + messages);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

Result<RmStatus> RmLink::status() const {
  auto reply = checked_request(socket_, {{"cmd", "status"}});
  if (!reply) return reply.error();
  return parse_status(*reply);
}

Result<bool> RmLink::may_start(int queued, int starting) const {
  auto reply = checked_request(socket_,
                               {{"cmd", "may_start"}, {"queued", std::max(queued, 0)}, {"starting", std::max(starting, 0)}});
  if (!reply) return reply.error();
  if (!reply->contains("may_start") || !(*reply)["may_start"].is_boolean()) {
    return make_error(Errc::protocol_error, "the RM's may_start reply has no boolean 'may_start'");
  }
  return (*reply)["may_start"].get<bool>();
}

Result<std::vector<json>> RmLink::decisions_since(double since_uptime_s) const {
  auto reply = ctl::request(socket_, {{"cmd", "decisions"}, {"since", since_uptime_s}}, kRequestTimeoutMs);
  if (!reply) return reply.error();
  if (!reply->is_object() || !reply->value("ok", false)) {
    std::string why = reply->is_object() ? reply->value("error", std::string()) : std::string();
    return make_error(Errc::unsupported, "this cosched-rm gives no decision log over its socket" +
                                             (why.empty() ? std::string() : " (" + why + ")"));
  }
  const json* entries = nullptr;
  for (const char* key : {"decisions", "entries"}) {
    if (reply->contains(key) && (*reply)[key].is_array()) entries = &(*reply)[key];
  }
  if (entries == nullptr) return make_error(Errc::protocol_error, "the RM's decisions reply holds no list");
  std::vector<json> out;
  for (const auto& e : *entries) {
    // Older entries may come back whatever `since` said; the run's own start is the cut.
    if (e.is_object() && e.contains("t") && e["t"].is_number() && e["t"].get<double>() < since_uptime_s) continue;
    out.push_back(e);
  }
  return out;
}

int RmLink::stop() {
  int exit_status = 0;
  if (rm_pid_ > 0) {
    (void)ctl::request(socket_, {{"cmd", "shutdown"}}, 1000);
    auto st = reap_within(rm_pid_, 10.0);
    if (!st) {
      ::kill(rm_pid_, SIGTERM);
      st = reap_within(rm_pid_, 5.0);
    }
    if (!st) {
      ::kill(rm_pid_, SIGKILL);
      st = reap_within(rm_pid_, 5.0);
    }
    exit_status = st.value_or(255);
    rm_pid_ = 0;
    if (exit_status != 0) {
      // Its messages go away with the temporary directory: show them while they exist.
      std::fprintf(stderr, "qsubmit: the private cosched-rm exited with status %d; its messages:\n%s", exit_status,
                   file_text(temp_dir_ + "/rm.log").c_str());
    }
  }
  if (!temp_dir_.empty()) {
    std::error_code ec;
    fs::remove_all(temp_dir_, ec);
    temp_dir_.clear();
  }
  return exit_status;
}

}  // namespace cosched::qsubmit
