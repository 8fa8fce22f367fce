// The structured decision log (--log FILE.jsonl): one JSON object per line, one line per decision that
// followed an event or changed something. The same entries feed `cosched-ctl why` and the traces.
#pragma once

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "cosched/error.hpp"

namespace cosched::rm {

class DecisionLog {
 public:
  DecisionLog() = default;
  ~DecisionLog();
  DecisionLog(const DecisionLog&) = delete;
  DecisionLog& operator=(const DecisionLog&) = delete;

  Status open(const std::string& path);  // appends; creates the file
  [[nodiscard]] bool is_open() const { return f_ != nullptr; }
  void write(const nlohmann::json& entry);

 private:
  std::FILE* f_ = nullptr;
};

}  // namespace cosched::rm
