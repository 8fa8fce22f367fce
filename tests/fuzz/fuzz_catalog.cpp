// libFuzzer target for the catalog: YAML text in, either a Catalog or one parse_error out, never an
// exception or a crash. yaml-cpp itself is not instrumented; the coverage guides through our conversion.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "qs/catalog.hpp"

namespace cat = cosched::catalog;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto c = cat::parse(text, "fuzz.yaml");
  if (!c.ok()) {
    if (c.error().code != cosched::Errc::parse_error || c.error().message.rfind("fuzz.yaml", 0) != 0) std::abort();
    return 0;
  }
  for (const auto& [exe, app] : c->apps) {
    if (app.name.empty() || (app.command.empty() && !app.speedup)) std::abort();
    if (app.speedup) {
      for (double cpus : {0.5, 1.0, 3.0, 64.0}) {
        double s = cat::speedup(*app.speedup, cpus);
        if (!(s >= 0) || std::isinf(s)) std::abort();
      }
    }
    auto expanded = cat::expand_programs(app.command, [](std::string_view) { return std::optional<std::string>("/x"); });
    (void)expanded;
  }
  return 0;
}
