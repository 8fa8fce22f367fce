// `cosched-ctl status` for people: the job table with chosen columns (--format) and filters (--user,
// --state), sized to its content (table.hpp).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cosched/error.hpp"

namespace cosched::ctl {

struct StatusView {
  std::vector<std::string> columns;  // column names (lowercase, as in --format); empty: the default set
  std::string user;                  // only this user's jobs (name or uid); empty: everyone
  std::string state;                 // only jobs in this state (the policy's, e.g. INC, or running/stopped/suspended)
};

// Parses --format's comma-separated list; the error names the unknown column and lists the known ones.
Result<std::vector<std::string>> parse_columns(const std::string& spec);
// Every column name, in the default order first.
std::string known_columns();

// Removes the jobs the view filters out, in place (the table and --json show the same jobs).
void filter_jobs(nlohmann::json& status, const StatusView& view);

std::string format_jobs(const nlohmann::json& status, const StatusView& view);

// A uid as a user name (the uid itself when unknown).
std::string user_name(long uid);

}  // namespace cosched::ctl
