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

}  // namespace cosched::rm
