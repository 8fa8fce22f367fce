// Where an RM serving `socket` keeps its accounting records unless told otherwise (--accounting): shared by
// cosched-rm and cosched-ctl history, so that `cosched-ctl --socket S history` finds S's records.
#pragma once

#include <filesystem>
#include <string>

namespace cosched::rm {

inline std::string default_accounting_path(const std::string& socket) {
  return std::filesystem::path(socket).replace_extension(".accounting.jsonl").string();
}

}  // namespace cosched::rm
