#include "decision_log.hpp"

#include <cerrno>
#include <cstring>

namespace cosched::rm {

DecisionLog::~DecisionLog() {
  if (f_ != nullptr) std::fclose(f_);
}

Status DecisionLog::open(const std::string& path) {
  f_ = std::fopen(path.c_str(), "ae");
  if (f_ == nullptr) return make_error(Errc::io_error, "cannot open decision log " + path + ": " + std::strerror(errno));
  return {};
}

void DecisionLog::write(const nlohmann::json& entry) {
  if (f_ == nullptr) return;
  std::string line = entry.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  line.push_back('\n');
  std::fwrite(line.data(), 1, line.size(), f_);
  std::fflush(f_);  // a crashed RM still leaves a readable log
}

void DecisionHistory::add(double t, std::string entry) {
  bytes_ += entry.size();
  entries_.push_back({t, std::move(entry)});
  while (bytes_ > max_bytes_ && entries_.size() > 1) {
    bytes_ -= entries_.front().json.size();
    entries_.pop_front();
  }
}

std::string DecisionHistory::since(double since) const {
  std::string out = "[";
  for (const auto& e : entries_) {
    if (!(e.t > since)) continue;
    if (out.size() > 1) out.push_back(',');
    out += e.json;
  }
  out.push_back(']');
  return out;
}

}  // namespace cosched::rm
