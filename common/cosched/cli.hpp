// One exit-status convention for every cosched command (docs/usage.md, "Exit status"), and the CLI11 parse
// that follows it: CLI11's own codes (105, 106, 109, ...) never reach the shell.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "cosched/rate.hpp"

namespace cosched::cli {

enum ExitStatus : int {
  kExitOk = 0,        // done (help and --version too)
  kExitFailed = 1,    // the job or run failed, or the request was answered "no"
  kExitUsage = 2,     // bad options or bad input: nothing was done
  kExitNoRm = 3,      // the resource manager could not be reached (not running, timed out, refused us)
};

// Parses argv. Returns nothing when the program should go on; otherwise the status to exit with, after
// CLI11 printed the help, the version or the error.
inline std::optional<int> parse(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
    return std::nullopt;
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? kExitOk : kExitUsage;
  }
}

// An option taking a bandwidth in bytes/s in parse_rate's spellings ("29G", "29e9", "250M").
inline CLI::Option* add_rate(CLI::App& app, const char* flag, double& out, const std::string& help) {
  return app
      .add_option_function<std::string>(
          flag,
          [&out, flag](const std::string& v) {
            auto r = parse_rate(v);
            if (!r) throw CLI::ValidationError(flag, r.error().message);
            out = *r;
          },
          help)
      ->type_name("RATE");
}

}  // namespace cosched::cli

// CLI11_PARSE with our exit statuses.
#define COSCHED_CLI_PARSE(app, argc, argv)                                               \
  do {                                                                                   \
    if (auto cosched_exit_ = ::cosched::cli::parse((app), (argc), (argv))) return *cosched_exit_; \
  } while (false)
