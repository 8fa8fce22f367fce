// Human-readable renderings of the RM's JSON replies.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "status_table.hpp"

namespace cosched::ctl {

// The RM's settings, then the job table (status_table.hpp) as `view` asks.
std::string format_status(const nlohmann::json& status, const StatusView& view = {});
std::string format_why(const nlohmann::json& why);

}  // namespace cosched::ctl
