// The structured decision log (--log FILE.jsonl): one JSON object per line, one line per decision that
// followed an event or changed something. The same entries feed `cosched-ctl why` and the traces.
#pragma once

#include <cstdio>
#include <deque>
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

// The recent decisions the `decisions` control request serves, bounded by bytes: entries are kept as
// their JSON text (an nlohmann object costs several times its text), oldest dropped first. Entries that
// list every running job made this grow to ~1 GB over eight rounds of 256 short jobs; the daemon stores
// only what changed in each decision (the --log file keeps everything).
class DecisionHistory {
 public:
  explicit DecisionHistory(std::size_t max_bytes) : max_bytes_(max_bytes) {}
  // Appends one entry (JSON object text) made at time `t`; drops the oldest until the total fits (the
  // newest entry is always kept).
  void add(double t, std::string entry);
  // A JSON array of the entries with t > since, oldest first.
  [[nodiscard]] std::string since(double since) const;
  [[nodiscard]] std::size_t bytes() const { return bytes_; }
  [[nodiscard]] std::size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    double t;
    std::string json;
  };
  std::size_t max_bytes_;
  std::size_t bytes_ = 0;
  std::deque<Entry> entries_;
};

}  // namespace cosched::rm
