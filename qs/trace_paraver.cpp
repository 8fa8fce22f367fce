// Paraver trace of a Run. The object model is mapped so that Paraver's default thread view is the paper's
// CPU view: one node with one CPU per row, one application with one task whose thread i runs on CPU i. A
// job's piece on a row is a state record (value = job position + 1) bracketed by two events (job and
// application, both dense indices named in the .pcf), so a view can colour either by job or by application.
//
// Three rules keep every trace loadable by Paraver's own parser (paraver-kernel, as paramedir and wxparaver
// use it):
//   - values are dense indices, never SWF job numbers: Paraver's .pcf reader keeps value labels as 32-bit
//     signed integers, so a job numbered 2^31 or more would lose its label. The number stays in the label;
//   - every name written to .pcf and .row goes through paraver_label: both files are line-based, so a newline
//     in an application name would split its entry in two;
//   - the body is never empty: paraver-kernel has a header error for an empty body, so a run with nothing to
//     draw still gets the multiprogramming level at time 0 (0 running, 0 queued), and the header's duration
//     is at least 1 ns, so that the time axis is never a single point.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <ctime>
#include <string>
#include <tuple>

#include "qs/trace_writers.hpp"

namespace cosched::results {

namespace {

// Paraver times are integers; this trace counts nanoseconds since the run began (negative times clamp to 0).
std::int64_t to_ns(double seconds) {
  if (!std::isfinite(seconds) || seconds <= 0) return 0;
  constexpr double kLimit = 9e18;  // ~285 years in ns: keeps llround inside int64
  return std::llround(std::min(seconds * 1e9, kLimit));
}

struct Record {
  std::int64_t time;
  int row;
  int order;  // at one instant and row: ending events, then the state, then starting events
  std::string text;
};

// "1:cpu:appl:task:thread:..." — row r is CPU r+1 and thread r+1 of task 1 of application 1.
std::string prefix(int kind, int row) {
  std::string n = std::to_string(row + 1);
  return std::to_string(kind) + ":" + n + ":1:1:" + n + ":";
}

std::string event(int row, std::int64_t t, long type, std::int64_t value) {
  return prefix(2, row) + std::to_string(t) + ":" + std::to_string(type) + ":" + std::to_string(value);
}

// One hue per application (golden-angle steps keep neighbours apart); jobs of an application get lighter or
// darker shades of it so that adjacent jobs of the same application remain distinguishable.
std::string colour(int app, std::size_t job) {
  double hue = std::fmod(app * 137.508, 360.0) / 60.0;  // in sextants, [0, 6)
  double value = 0.65 + 0.3 * static_cast<double>(job % 4) / 3.0;
  double saturation = 0.75;
  // HSV to RGB, one channel at a time: n = 5, 3, 1 give red, green, blue.
  auto channel = [&](double n) {
    double k = std::fmod(n + hue, 6.0);
    double v = value - value * saturation * std::clamp(std::min(k, 4 - k), 0.0, 1.0);
    return std::to_string(std::clamp(static_cast<int>(std::lround(v * 255)), 0, 255));
  };
  return "{" + channel(5) + "," + channel(3) + "," + channel(1) + "}";
}

std::string job_label(const Run& run, std::size_t j) {
  const JobRecord& job = run.jobs[j];
  return paraver_label("job " + std::to_string(job.id) + (job.app.empty() ? "" : " " + job.app));
}

std::string header(std::int64_t end_ns, int rows) {
  // The date is when the trace was written: the Run carries no wall-clock start.
  std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char date[32];
  std::strftime(date, sizeof date, "%d/%m/%Y at %H:%M", &local);
  std::string n = std::to_string(rows);
  // 1 node with `rows` CPUs; 1 application of 1 task with `rows` threads, on node 1.
  return std::string("#Paraver (") + date + "):" + std::to_string(end_ns) + "_ns:1(" + n + "):1:1(" + n + ":1)\n";
}

std::string pcf(const Run& run, const AppIndex& apps) {
  std::string out =
      "DEFAULT_OPTIONS\n\n"
      "LEVEL               THREAD\n"
      "UNITS               NANOSEC\n"
      "LOOK_BACK           100\n"
      "SPEED               1\n"
      "FLAG_ICONS          ENABLED\n"
      "NUM_OF_STATE_COLORS " +
      std::to_string(run.jobs.size() + 1) +
      "\n"
      "YMAX_SCALE          " +
      std::to_string(std::max<std::size_t>(run.jobs.size(), 1)) +
      "\n\n"
      "DEFAULT_SEMANTIC\n\n"
      "THREAD_FUNC         State As Is\n\n\n"
      "STATES\n0    Idle\n";
  for (std::size_t j = 0; j < run.jobs.size(); ++j) out += std::to_string(j + 1) + "    " + job_label(run, j) + "\n";
  out += "\n\nSTATES_COLOR\n0    {230,230,230}\n";
  for (std::size_t j = 0; j < run.jobs.size(); ++j) {
    out += std::to_string(j + 1) + "    " + colour(apps.of_job[j], j) + "\n";
  }
  out += "\n\nEVENT_TYPE\n0    " + std::to_string(kParaverJobEvent) + "    Job\nVALUES\n0      End\n";
  for (std::size_t j = 0; j < run.jobs.size(); ++j) out += std::to_string(j + 1) + "      " + job_label(run, j) + "\n";
  out += "\n\nEVENT_TYPE\n0    " + std::to_string(kParaverAppEvent) + "    Application\nVALUES\n0      End\n";
  for (std::size_t a = 0; a < apps.names.size(); ++a) {
    std::string name = apps.names[a].empty() ? "(unnamed)" : paraver_label(apps.names[a]);
    out += std::to_string(a + 1) + "      " + name + "\n";
  }
  out += "\n\nEVENT_TYPE\n0    " + std::to_string(kParaverRunningEvent) + "    Multiprogramming level (running jobs)\n";
  out += "\n\nEVENT_TYPE\n0    " + std::to_string(kParaverQueuedEvent) + "    Queued jobs\n";
  return out;
}

std::string row_file(const Placement& placement) {
  std::string names;
  for (int r = 0; r < placement.rows; ++r) names += paraver_label(row_label(placement, r)) + "\n";
  std::string n = std::to_string(placement.rows);
  return "LEVEL CPU SIZE " + n + "\n" + names + "\nLEVEL NODE SIZE 1\nmachine\n\nLEVEL THREAD SIZE " + n + "\n" + names;
}

}  // namespace

ParaverTrace paraver_trace(const Run& run, const Placement& placement, const std::vector<MlSample>& ml) {
  AppIndex apps = index_apps(run);
  std::vector<Record> records;
  std::int64_t end_ns = 0;
  for (const PlacedPiece& p : placement.pieces) {
    std::int64_t t0 = to_ns(p.t0);
    std::int64_t t1 = to_ns(p.t1);
    if (t1 <= t0) continue;  // shorter than a nanosecond: nothing to draw
    end_ns = std::max(end_ns, t1);
    auto job = static_cast<std::int64_t>(p.job_index + 1);  // the state and the Job event share this value
    std::int64_t app = apps.of_job[p.job_index] + 1;
    std::string span = std::to_string(t0) + ":" + std::to_string(t1);
    records.push_back({t0, p.row, 1, prefix(1, p.row) + span + ":" + std::to_string(job)});
    records.push_back({t0, p.row, 2, event(p.row, t0, kParaverJobEvent, job)});
    records.push_back({t0, p.row, 2, event(p.row, t0, kParaverAppEvent, app)});
    records.push_back({t1, p.row, 0, event(p.row, t1, kParaverJobEvent, 0)});
    records.push_back({t1, p.row, 0, event(p.row, t1, kParaverAppEvent, 0)});
  }
  for (const MlSample& m : ml) {
    std::int64_t t = to_ns(m.t);
    end_ns = std::max(end_ns, t);
    records.push_back({t, 0, 2, event(0, t, kParaverRunningEvent, std::max(m.running, 0))});
    records.push_back({t, 0, 2, event(0, t, kParaverQueuedEvent, std::max(m.queued, 0))});
  }
  if (records.empty()) {  // nothing to draw: two events that say so keep the body non-empty
    records.push_back({0, 0, 2, event(0, 0, kParaverRunningEvent, 0)});
    records.push_back({0, 0, 2, event(0, 0, kParaverQueuedEvent, 0)});
  }
  // Paraver reads records in time order.
  std::stable_sort(records.begin(), records.end(), [](const Record& a, const Record& b) {
    return std::tie(a.time, a.row, a.order) < std::tie(b.time, b.row, b.order);
  });

  ParaverTrace trace;
  trace.prv = header(std::max<std::int64_t>(end_ns, 1), placement.rows);
  for (const Record& r : records) trace.prv += r.text + "\n";
  trace.pcf = pcf(run, apps);
  trace.row = row_file(placement);
  return trace;
}

AppIndex index_apps(const Run& run) {
  AppIndex index;
  for (const JobRecord& j : run.jobs) {
    auto it = std::find(index.names.begin(), index.names.end(), j.app);
    if (it == index.names.end()) it = index.names.insert(index.names.end(), j.app);
    index.of_job.push_back(static_cast<int>(it - index.names.begin()));
  }
  return index;
}

std::string paraver_label(std::string_view name) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(name.size());
  for (char ch : name) {
    auto c = static_cast<unsigned char>(ch);
    if (c >= 0x20 && c != 0x7f) {
      out += ch;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    }
  }
  return out;
}

std::string row_label(const Placement& placement, int row) {
  if (row < placement.machine_rows) return "CPU " + std::to_string(row);
  return "oversubscribed " + std::to_string(row - placement.machine_rows + 1);
}

}  // namespace cosched::results
