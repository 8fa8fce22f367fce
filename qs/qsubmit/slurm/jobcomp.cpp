#include "jobcomp.hpp"

#include <cerrno>
#include <cstring>
#include <ctime>
#include <fstream>
#include <vector>

namespace cosched::qsubmit {

namespace {

// KEY=VALUE tokens; a value runs to the next space (jobcomp/filetxt writes no spaces inside the fields we read).
std::map<std::string, std::string> fields_of(const std::string& line) {
  std::map<std::string, std::string> out;
  std::size_t pos = 0;
  while (pos < line.size()) {
    while (pos < line.size() && line[pos] == ' ') ++pos;
    auto end = line.find(' ', pos);
    if (end == std::string::npos) end = line.size();
    std::string token = line.substr(pos, end - pos);
    if (auto eq = token.find('='); eq != std::string::npos && eq > 0) {
      out.emplace(token.substr(0, eq), token.substr(eq + 1));
    }
    pos = end;
  }
  return out;
}

Result<long> whole_number(const std::string& field, const std::string& text) {
  char* end = nullptr;
  errno = 0;
  long v = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno != 0 || v < 0) {
    return make_error(Errc::parse_error, "field " + field + ": '" + text + "' is not a whole number");
  }
  return v;
}

}  // namespace

Result<double> parse_slurm_time(const std::string& text) {
  if (text.empty() || text == "Unknown" || text == "None" || text == "N/A") return -1.0;
  std::tm tm{};
  const char* end = ::strptime(text.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (end == nullptr || *end != '\0') {
    return make_error(Errc::parse_error, "'" + text + "' is not a time (YYYY-MM-DDTHH:MM:SS)");
  }
  tm.tm_isdst = -1;
  const std::time_t t = std::mktime(&tm);
  if (t == static_cast<std::time_t>(-1)) return make_error(Errc::parse_error, "'" + text + "' is not a time");
  return static_cast<double>(t);
}

Result<int> parse_exit_code(const std::string& text) {
  auto colon = text.find(':');
  if (colon == std::string::npos) return make_error(Errc::parse_error, "'" + text + "' is not CODE:SIGNAL");
  auto code = whole_number("ExitCode", text.substr(0, colon));
  auto sig = whole_number("ExitCode", text.substr(colon + 1));
  if (!code) return code.error();
  if (!sig) return sig.error();
  return *sig != 0 ? 128 + static_cast<int>(*sig) : static_cast<int>(*code);
}

Result<CompletionRecord> parse_completion_line(const std::string& line) {
  const auto f = fields_of(line);
  auto get = [&](const char* key) -> const std::string* {
    auto it = f.find(key);
    return it == f.end() ? nullptr : &it->second;
  };
  CompletionRecord r;
  for (const char* key : {"JobId", "JobState", "SubmitTime", "StartTime", "EndTime", "ExitCode"}) {
    if (get(key) == nullptr) return make_error(Errc::parse_error, std::string("no field ") + key);
  }
  auto id = whole_number("JobId", *get("JobId"));
  if (!id) return id.error();
  r.job_id = *id;
  r.state = *get("JobState");
  if (const auto* name = get("Name")) r.name = *name;
  if (const auto* nodes = get("NodeList")) r.nodes = *nodes;
  if (const auto* cpus = get("ProcCnt")) {
    auto n = whole_number("ProcCnt", *cpus);
    if (!n) return n.error();
    r.cpus = static_cast<int>(*n);
  }
  struct {
    const char* key;
    double* into;
  } times[] = {{"SubmitTime", &r.submit}, {"StartTime", &r.start}, {"EndTime", &r.end}};
  for (auto& t : times) {
    auto v = parse_slurm_time(*get(t.key));
    if (!v) return make_error(Errc::parse_error, std::string("field ") + t.key + ": " + v.error().message);
    *t.into = *v;
  }
  auto exit = parse_exit_code(*get("ExitCode"));
  if (!exit) return make_error(Errc::parse_error, "field ExitCode: " + exit.error().message);
  r.exit_status = *exit;
  return r;
}

Result<std::map<std::int64_t, CompletionRecord>> JobcompReader::read_new() {
  std::map<std::int64_t, CompletionRecord> out;
  std::ifstream in(path_, std::ios::binary);
  if (!in) {
    if (errno == ENOENT) return out;  // slurmctld writes it at the first completion
    return make_error(Errc::io_error, "cannot read " + path_ + ": " + std::strerror(errno));
  }
  in.seekg(static_cast<std::streamoff>(offset_));
  std::string chunk((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  offset_ += chunk.size();
  partial_ += chunk;
  std::size_t nl;
  while ((nl = partial_.find('\n')) != std::string::npos) {
    std::string line = partial_.substr(0, nl);
    partial_.erase(0, nl + 1);
    if (line.empty()) continue;
    auto r = parse_completion_line(line);
    if (!r) {
      ++bad_lines_;
      continue;
    }
    out[r->job_id] = *r;  // a requeued job's later record wins
  }
  return out;
}

}  // namespace cosched::qsubmit
