// Human-readable renderings of the RM's JSON replies.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace cosched::ctl {

std::string format_status(const nlohmann::json& status);
std::string format_why(const nlohmann::json& why);

}  // namespace cosched::ctl
