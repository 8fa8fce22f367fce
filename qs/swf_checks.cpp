// Checks on a workload as a whole, after its lines were read. qsubmit and cosched-sim call the same ones,
// so the two agree on what an empty or a suspicious workload is.
#include <string>

#include "qs/swf.hpp"

namespace cosched::swf {

std::vector<std::string> workload_notes(const Workload& w, std::string_view name) {
  std::vector<std::string> out;
  if (w.skipped_lines > 0) {
    std::string shown = static_cast<std::size_t>(w.skipped_lines) > w.warnings.size()
                            ? " (the first " + std::to_string(w.warnings.size()) + " are shown above)"
                            : "";
    out.push_back(std::string(name) + ": " + std::to_string(w.skipped_lines) + " bad line(s) skipped in all" + shown);
  }
  if (w.lines_with_extra_fields > 0) {
    out.push_back(std::string(name) + ":" + std::to_string(w.first_extra_fields_line) + ": " +
                  std::to_string(w.lines_with_extra_fields) + " job line(s) had more than " +
                  std::to_string(kFieldCount) + " fields; only the first " + std::to_string(kFieldCount) +
                  " were read (--extra-fields ignore)");
  }
  // The archive's header states how many records the full log holds: fewer here means a cut-off download
  // or a file cut by hand, whose results would describe part of a workload.
  for (const char* key : {"MaxJobs", "MaxRecords"}) {
    auto promised = w.header.find(key);
    if (promised == nullptr) continue;
    std::int64_t n = 0;
    try {
      n = std::stoll(*promised);
    } catch (const std::exception&) {
      continue;  // free text ("MaxJobs: about 500"): nothing to compare
    }
    const auto held = static_cast<std::int64_t>(w.jobs.size()) + w.skipped_lines;
    if (n > held) {
      std::int64_t line = 0;
      for (const auto& e : w.header.entries) {
        if (e.key == key) {
          line = e.line;
          break;
        }
      }
      out.push_back(std::string(name) + ":" + std::to_string(line) + ": the header promises " + std::to_string(n) +
                    " jobs (" + key + ") but the file holds " + std::to_string(held) + " job lines: is it cut short?");
      break;
    }
  }
  return out;
}

Status require_jobs(const Workload& w, std::string_view name) {
  if (!w.jobs.empty()) return {};
  std::string why = std::string(name) + ": no jobs";
  if (w.skipped_lines > 0) {
    why += " (all " + std::to_string(w.skipped_lines) + " job lines were bad and skipped; the first: " +
           (w.warnings.empty() ? std::string("?") : w.warnings.front()) + ")";
  }
  return make_error(Errc::invalid_argument, why);
}

}  // namespace cosched::swf
