// SWF reader. The hot path (one job line) tokenizes in place and converts with std::from_chars into the Job
// directly: no allocation per line, so 100k lines take a few milliseconds. Messages are built only on the
// error path.
#include "qs/swf.hpp"

#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <ostream>
#include <string>

namespace cosched::swf {

namespace {

constexpr std::array<FieldInfo, kFieldCount> kFields = {{
    {1, "job number", &Job::number, nullptr},
    {2, "submit time", nullptr, &Job::submit_s},
    {3, "wait time", nullptr, &Job::wait_s},
    {4, "run time", nullptr, &Job::run_s},
    {5, "allocated processors", &Job::allocated_procs, nullptr},
    {6, "average CPU time", nullptr, &Job::avg_cpu_s},
    {7, "used memory", nullptr, &Job::used_memory_kb},
    {8, "requested processors", &Job::requested_procs, nullptr},
    {9, "requested time", nullptr, &Job::requested_time_s},
    {10, "requested memory", nullptr, &Job::requested_memory_kb},
    {11, "status", &Job::status, nullptr},
    {12, "user id", &Job::user, nullptr},
    {13, "group id", &Job::group, nullptr},
    {14, "executable number", &Job::executable, nullptr},
    {15, "queue number", &Job::queue, nullptr},
    {16, "partition number", &Job::partition, nullptr},
    {17, "preceding job number", &Job::preceding_job, nullptr},
    {18, "think time", nullptr, &Job::think_time_s},
}};

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

std::string quoted(std::string_view text) {
  // Keep messages one line and readable even for binary garbage.
  constexpr std::size_t kMaxShown = 40;
  std::string out = "'";
  for (char c : text.substr(0, kMaxShown)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  if (text.size() > kMaxShown) out += "...";
  return out + "'";
}

// Shortest text that reads back to the same double: "12", "0.5", "1e+21".
void append_real(std::string& out, double v) {
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, v == 0 ? 0.0 : v);
  out.append(buf, r.ptr);
}

void append_int(std::string& out, std::int64_t v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

std::string format_real(double v) {
  std::string s;
  append_real(s, v);
  return s;
}

std::string field_prefix(const FieldInfo& f) {
  return "field " + std::to_string(f.number) + " (" + std::string(f.name) + "): ";
}

// Whole-token integer; nullopt-like failure is reported through the message.
bool parse_int(std::string_view tok, std::int64_t& out) {
  auto [end, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), out);
  return ec == std::errc{} && end == tok.data() + tok.size();
}

bool parse_real(std::string_view tok, double& out) {
  // Nearly every value in real logs is an integer; the integer parser is several times faster.
  std::int64_t whole = 0;
  if (tok.size() < 16 && parse_int(tok, whole)) {
    out = static_cast<double>(whole);
    return true;
  }
  auto [end, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), out, std::chars_format::general);
  return ec == std::errc{} && end == tok.data() + tok.size() && std::isfinite(out);
}

// Converts one token into its field; on failure fills `why` (without the file:line prefix).
bool convert_field(const FieldInfo& f, std::string_view tok, Job& job, std::string& why) {
  double value = 0;
  if (f.integer != nullptr) {
    std::int64_t v = 0;
    if (!parse_int(tok, v)) {
      double d = 0;
      why = field_prefix(f) + quoted(tok) + (parse_real(tok, d) ? " is not an integer" : " is not a number");
      return false;
    }
    job.*f.integer = v;
    value = static_cast<double>(v);
  } else {
    if (!parse_real(tok, value)) {
      why = field_prefix(f) + quoted(tok) + " is not a number";
      return false;
    }
    job.*f.real = value == 0 ? 0.0 : value;  // no "-0" in canonical output
  }
  if (value < 0 && value != -1) {
    why = field_prefix(f) + quoted(tok) + " is negative; only -1 (unknown) is allowed";
    return false;
  }
  if (f.number == 11 && value > static_cast<double>(kCancelled)) {
    why = field_prefix(f) + quoted(tok) + " is not an SWF status (-1, 0..5)";
    return false;
  }
  if (f.number == 2 && value < 0) {
    why = field_prefix(f) + quoted(tok) + ": a job needs a known submit time";
    return false;
  }
  return true;
}

// `extra` is set when the line has more than 18 columns and `allow_extra` let it through.
bool parse_job_line(std::string_view text, std::int64_t line, bool allow_extra, Job& job, bool& extra,
                    std::string& why) {
  extra = false;
  job = Job{};
  job.line = line;
  std::array<std::string_view, kFieldCount> tokens;
  int count = 0;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && is_space(text[i])) ++i;
    if (i == text.size()) break;
    std::size_t start = i;
    while (i < text.size() && !is_space(text[i])) ++i;
    if (count < kFieldCount) tokens[static_cast<std::size_t>(count)] = text.substr(start, i - start);
    ++count;
  }
  if (count > kFieldCount && allow_extra) {
    extra = true;
  } else if (count != kFieldCount) {
    why = "expected " + std::to_string(kFieldCount) + " fields, found " + std::to_string(count);
    if (count > kFieldCount) why += " (--extra-fields ignore reads the first " + std::to_string(kFieldCount) + ")";
    return false;
  }
  for (std::size_t k = 0; k < kFields.size(); ++k) {
    if (!convert_field(kFields[k], tokens[k], job, why)) return false;
  }
  return true;
}

// Leading integer of a header value ("128" or "128 (3 more were down)"); false when it does not start
// with one.
bool leading_int(std::string_view value, std::int64_t& out) {
  value = trim(value);
  std::size_t end = 0;
  while (end < value.size() && !is_space(value[end])) ++end;
  return parse_int(value.substr(0, end), out);
}

constexpr std::array<std::string_view, 3> kTypedKeys = {"MaxProcs", "MaxNodes", "UnixStartTime"};

// `; Key: value` when the text after ';' starts with an identifier followed by ':'; otherwise a free
// comment. Returns false (with `why`) when a typed key holds no number.
bool parse_header_line(std::string_view text, std::int64_t line, Header& header, std::string& why) {
  text = trim(text.substr(1));  // drop ';'
  std::size_t k = 0;
  while (k < text.size() && (std::isalnum(static_cast<unsigned char>(text[k])) != 0 || text[k] == '_')) ++k;
  std::size_t colon = k;
  while (colon < text.size() && is_space(text[colon])) ++colon;
  if (k == 0 || colon >= text.size() || text[colon] != ':') {
    header.entries.push_back({"", std::string(text), line});
    return true;
  }
  std::string key(text.substr(0, k));
  std::string_view value = trim(text.substr(colon + 1));
  if (std::find(kTypedKeys.begin(), kTypedKeys.end(), key) != kTypedKeys.end()) {
    std::int64_t v = 0;
    bool positive_key = key != "UnixStartTime";
    if (!leading_int(value, v) || (positive_key && v <= 0)) {
      why = "header " + key + ": " + quoted(value) +
            (positive_key ? " is not a positive integer" : " is not an integer");
      return false;  // a lenient read drops the line like any other bad line
    }
  }
  header.entries.push_back({std::move(key), std::string(value), line});
  return true;
}

std::string join_message(std::string_view name, std::int64_t line, const std::string& why) {
  return std::string(name) + ":" + std::to_string(line) + ": " + why;
}

std::optional<std::int64_t> header_int(const Header& h, std::string_view key) {
  const std::string* v = h.find(key);
  std::int64_t out = 0;
  if (v == nullptr || !leading_int(*v, out)) return std::nullopt;
  return out;
}

}  // namespace

const std::array<FieldInfo, kFieldCount>& fields() noexcept { return kFields; }

const std::string* Header::find(std::string_view key) const {
  for (const auto& e : entries) {
    if (!e.key.empty() && e.key == key) return &e.value;
  }
  return nullptr;
}

std::vector<std::string_view> Header::find_all(std::string_view key) const {
  std::vector<std::string_view> out;
  for (const auto& e : entries) {
    if (!e.key.empty() && e.key == key) out.emplace_back(e.value);
  }
  return out;
}

void Header::set(std::string_view key, std::string value) {
  for (auto& e : entries) {
    if (e.key == key) {
      e.value = std::move(value);
      return;
    }
  }
  entries.push_back({std::string(key), std::move(value), 0});
}

std::optional<std::int64_t> Header::max_procs() const { return header_int(*this, "MaxProcs"); }
std::optional<std::int64_t> Header::max_nodes() const { return header_int(*this, "MaxNodes"); }
std::optional<std::int64_t> Header::unix_start_time() const { return header_int(*this, "UnixStartTime"); }

std::optional<std::int64_t> Header::machine_procs() const {
  if (auto p = max_procs(); p && *p > 0) return p;
  if (auto n = max_nodes(); n && *n > 0) return n;
  return std::nullopt;
}

Result<Workload> parse(std::string_view text, std::string_view name, const Options& options) {
  Workload w;
  // A job line is rarely under 40 bytes: one reservation serves nearly every trace.
  w.jobs.reserve(text.size() / 40 + 1);
  std::string why;
  double last_submit = -1;
  std::int64_t last_submit_line = 0;
  std::int64_t line = 0;
  std::size_t pos = 0;

  auto reject = [&](const std::string& message) {
    ++w.skipped_lines;
    if (w.warnings.size() < Workload::kMaxWarnings) w.warnings.push_back(message);
  };

  while (pos < text.size()) {
    std::size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view raw = text.substr(pos, nl - pos);
    pos = nl + 1;
    ++line;

    std::string_view body = trim(raw);
    if (body.empty()) continue;
    if (body.front() == ';') {
      if (!parse_header_line(body, line, w.header, why)) {
        if (!options.lenient) return make_error(Errc::parse_error, join_message(name, line, why));
        reject(join_message(name, line, why));
      }
      continue;
    }
    Job job;
    bool extra = false;
    bool ok = parse_job_line(body, line, options.extra_fields == ExtraFields::ignore, job, extra, why);
    if (ok && !options.sort_by_submit && job.submit_s < last_submit) {
      why = field_prefix(kFields[1]) + quoted(format_real(job.submit_s)) + " is earlier than " +
            format_real(last_submit) + " on line " + std::to_string(last_submit_line) +
            "; SWF jobs are sorted by submit time";
      ok = false;
    }
    if (!ok) {
      if (!options.lenient) return make_error(Errc::parse_error, join_message(name, line, why));
      reject(join_message(name, line, why));
      continue;
    }
    if (extra && w.lines_with_extra_fields++ == 0) w.first_extra_fields_line = line;
    last_submit = job.submit_s;
    last_submit_line = line;
    w.jobs.push_back(job);
  }
  if (options.sort_by_submit) {
    std::stable_sort(w.jobs.begin(), w.jobs.end(),
                     [](const Job& a, const Job& b) { return a.submit_s < b.submit_s; });
  }
  return w;
}

Result<std::string> read_text(const std::string& path) {
  // gzread passes plain files through unchanged, so one path serves `.swf` and `.swf.gz`.
  gzFile f = gzopen(path.c_str(), "rb");
  if (f == nullptr) {
    return make_error(Errc::io_error, "cannot open '" + path + "': " + std::strerror(errno));
  }
  gzbuffer(f, 1U << 18);
  std::string text;
  constexpr unsigned kChunk = 1U << 20;
  for (;;) {
    std::size_t old = text.size();
    text.resize(old + kChunk);
    int n = gzread(f, text.data() + old, kChunk);
    if (n < 0) {
      int zerr = 0;
      std::string msg = gzerror(f, &zerr);
      if (zerr == Z_ERRNO) msg = std::strerror(errno);
      gzclose(f);
      return make_error(Errc::io_error, "cannot read '" + path + "': " + msg);
    }
    text.resize(old + static_cast<std::size_t>(n));
    if (n == 0) break;
  }
  // gzread returns what it could decompress and stops; Z_BUF_ERROR then means the input ended inside a
  // gzip stream (a truncated download), which would otherwise pass as a shorter workload.
  int zerr = Z_OK;
  (void)gzerror(f, &zerr);
  gzclose(f);
  if (zerr == Z_BUF_ERROR) {
    return make_error(Errc::io_error, "cannot read '" + path + "': truncated gzip stream (the file ends inside "
                                      "compressed data; " + std::to_string(text.size()) + " bytes decompressed)");
  }
  return text;
}

Result<Workload> read_file(const std::string& path, const Options& options) {
  auto text = read_text(path);
  if (!text) return text.error();
  return parse(*text, path, options);
}

std::string to_line(const Job& job) {
  std::string out;
  out.reserve(96);
  for (const auto& f : kFields) {
    if (f.number > 1) out += ' ';
    if (f.integer != nullptr) {
      append_int(out, job.*f.integer);
    } else {
      append_real(out, job.*f.real);
    }
  }
  return out;
}

namespace {

std::string to_text(const Workload& w) {
  std::string out;
  out.reserve(w.jobs.size() * 64 + 1024);
  for (const auto& e : w.header.entries) {
    out += ';';
    if (!e.key.empty()) {
      out += ' ';
      out += e.key;
      out += ':';
    }
    if (!e.value.empty()) {
      out += ' ';
      out += e.value;
    }
    out += '\n';
  }
  for (const auto& j : w.jobs) {
    out += to_line(j);
    out += '\n';
  }
  return out;
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

}  // namespace

void write(std::ostream& out, const Workload& workload) { out << to_text(workload); }

Status write_file(const std::string& path, const Workload& workload) {
  std::string text = to_text(workload);
  if (ends_with(path, ".gz")) {
    gzFile f = gzopen(path.c_str(), "wb");
    if (f == nullptr) return make_error(Errc::io_error, "cannot create '" + path + "': " + std::strerror(errno));
    // gzwrite takes an unsigned length: write in bounded chunks so huge traces are fine.
    constexpr std::size_t kChunk = 1U << 24;
    bool ok = true;
    for (std::size_t off = 0; ok && off < text.size(); off += kChunk) {
      auto n = static_cast<unsigned>(std::min(kChunk, text.size() - off));
      ok = gzwrite(f, text.data() + off, n) == static_cast<int>(n);
    }
    ok = (gzclose(f) == Z_OK) && ok;
    if (!ok) return make_error(Errc::io_error, "cannot write '" + path + "'");
    return {};
  }
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) return make_error(Errc::io_error, "cannot create '" + path + "': " + std::strerror(errno));
  f.write(text.data(), static_cast<std::streamsize>(text.size()));
  f.close();
  if (!f) return make_error(Errc::io_error, "cannot write '" + path + "'");
  return {};
}

Result<std::int64_t> processor_request(const Job& job) {
  if (job.requested_procs > 0) return job.requested_procs;
  if (job.allocated_procs > 0) return job.allocated_procs;
  return make_error(Errc::invalid_argument,
                    "job " + std::to_string(job.number) + " (line " + std::to_string(job.line) +
                        "): no processor request: fields 8 (requested processors) and 5 (allocated "
                        "processors) are " + std::to_string(job.requested_procs) + " and " +
                        std::to_string(job.allocated_procs));
}

std::int64_t scale_request(std::int64_t request, std::int64_t trace_procs, std::int64_t machine_procs) {
  machine_procs = std::max<std::int64_t>(machine_procs, 1);
  request = std::max<std::int64_t>(request, 1);
  if (trace_procs > machine_procs) {
    request = std::min(request, trace_procs);  // a request beyond the trace's own machine is bad data
    // nearest integer of request * machine / trace, halves up: floor((2*r*m + t) / (2*t)). r <= t, and
    // long double keeps it exact for any realistic size without risking 64-bit overflow.
    long double scaled = (2.0L * static_cast<long double>(request) * static_cast<long double>(machine_procs) +
                          static_cast<long double>(trace_procs)) /
                         (2.0L * static_cast<long double>(trace_procs));
    request = static_cast<std::int64_t>(std::floor(scaled));
  }
  return std::clamp<std::int64_t>(request, 1, machine_procs);
}

}  // namespace cosched::swf
