// libFuzzer target for the SWF reader. Properties checked beyond "no crash, no sanitizer report":
//  - strict and lenient reads agree: a strict success is a lenient success with nothing skipped;
//  - whatever parses writes back to text that parses to the same jobs (the writer's round trip).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string_view>

#include "qs/swf.hpp"

namespace swf = cosched::swf;

// Names the broken property before aborting, so a crash report says which one.
#define CHECK(cond)                                                   \
  do {                                                                \
    if (!(cond)) {                                                    \
      std::fprintf(stderr, "fuzz_swf: property failed: %s\n", #cond); \
      std::abort();                                                   \
    }                                                                 \
  } while (0)

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto strict = swf::parse(text, "fuzz.swf");
  auto lenient = swf::parse(text, "fuzz.swf", swf::Options{.lenient = true});
  CHECK(lenient.ok());  // lenient never fails
  if (strict.ok()) {
    CHECK(lenient->skipped_lines == 0);
    CHECK(lenient->jobs.size() == strict->jobs.size());
  } else {
    CHECK(strict.error().message.rfind("fuzz.swf:", 0) == 0);
    CHECK(lenient->skipped_lines > 0);
  }
  auto sorted = swf::parse(text, "fuzz.swf", swf::Options{.lenient = true, .sort_by_submit = true});
  CHECK(sorted.ok());

  std::ostringstream out;
  swf::write(out, *lenient);
  auto again = swf::parse(out.str(), "again.swf");
  CHECK(again.ok());
  CHECK(again->jobs.size() == lenient->jobs.size());
  for (std::size_t i = 0; i < again->jobs.size(); ++i) {
    swf::Job a = again->jobs[i];
    swf::Job b = lenient->jobs[i];
    a.line = b.line = 0;
    CHECK(a == b);
  }
  for (const auto& job : lenient->jobs) {
    auto request = swf::processor_request(job);
    if (request.ok()) {
      auto scaled = swf::scale_request(*request, lenient->header.machine_procs().value_or(-1), 4);
      CHECK(scaled >= 1 && scaled <= 4);
    }
  }
  return 0;
}
