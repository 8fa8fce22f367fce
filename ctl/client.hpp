// A one-shot control request to cosched-rm: connect, send JSON, read the JSON reply. Used by cosched-ctl
// and by qsubmit (may-start queries).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "cosched/error.hpp"

namespace cosched::ctl {

Result<nlohmann::json> request(const std::string& socket, const nlohmann::json& req, int timeout_ms = 5000);

}  // namespace cosched::ctl
