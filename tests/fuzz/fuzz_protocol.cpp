// Fuzz target for the RM's socket protocol: bytes a peer sends → the daemon's incremental FrameReader →
// the body of each frame (register body or control JSON), as rm/daemon/server.cpp and
// rm/daemon/daemon_jobs.cpp read them. Properties beyond "no crash, no sanitizer report":
//  - reading the stream in arbitrary pieces yields exactly the frames of reading it whole (recv() may split
//    a frame anywhere);
//  - the frames read re-encode to the bytes consumed, and no frame exceeds the payload limit;
//  - a register body is accepted only with request in [1, kMaxCpus] and a printable command;
//  - a control request is typed or one non-empty error.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "cosched/protocol.hpp"
#include "cosched/wire.hpp"
#include "rm/daemon/ctl_request.hpp"
#include "rm/daemon/register_body.hpp"

namespace wire = cosched::wire;
namespace proto = cosched::proto;
namespace rm = cosched::rm;

#define CHECK(cond)                                                         \
  do {                                                                      \
    if (!(cond)) {                                                          \
      std::fprintf(stderr, "fuzz_protocol: property failed: %s\n", #cond);  \
      std::abort();                                                         \
    }                                                                       \
  } while (0)

namespace {

// A small limit, so that "too large" is reachable from short inputs as well as the real one.
constexpr std::uint32_t kLimit = 512;

struct Outcome {
  std::vector<wire::Frame> frames;
  wire::RecvStatus last = wire::RecvStatus::closed;
};

// Feeds `bytes` in pieces whose sizes cycle through `cuts` (1..16 bytes), popping frames after each piece,
// until a fatal status; `cuts` empty means all at once.
Outcome read_stream(std::string_view bytes, std::string_view cuts) {
  wire::FrameReader reader(kLimit);
  Outcome o;
  std::size_t pos = 0;
  std::size_t k = 0;
  while (pos < bytes.size()) {
    std::size_t n = bytes.size() - pos;
    if (!cuts.empty()) n = std::min<std::size_t>(n, 1 + (static_cast<unsigned char>(cuts[k++ % cuts.size()]) % 16));
    reader.append(bytes.data() + pos, n);
    pos += n;
    for (;;) {
      wire::Frame f;
      o.last = reader.next(f);
      if (o.last != wire::RecvStatus::ok) break;
      CHECK(f.payload.size() <= kLimit);
      CHECK(f.passed_fd == -1);
      o.frames.push_back(std::move(f));
    }
    if (o.last != wire::RecvStatus::closed) break;  // fatal for the connection: the daemon drops it
  }
  return o;
}

void check_body(const wire::Frame& f) {
  if (f.type == proto::MsgType::register_job) {
    auto r = rm::parse_register_body(f.payload);
    if (!r.ok()) {
      CHECK(!r.error().message.empty());
      return;
    }
    CHECK(r->request >= 1 && r->request <= proto::kMaxCpus);
    CHECK(r->command.size() <= proto::kCommandMax);
    for (char ch : r->command) CHECK(ch >= 0x20 && ch < 0x7f);
  } else if (f.type == proto::MsgType::ctl_request) {
    auto r = rm::parse_ctl_request(f.payload);
    if (!r.ok()) CHECK(!r.error().message.empty());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // First byte: how many of the following bytes steer the split; the rest is the stream.
  std::string_view in(reinterpret_cast<const char*>(data), size);
  std::size_t ncuts = in.empty() ? 0 : std::min<std::size_t>(static_cast<unsigned char>(in[0]) % 8, in.size() - 1);
  std::string_view cuts = in.substr(in.empty() ? 0 : 1, ncuts);
  std::string_view stream = in.substr(in.empty() ? 0 : 1 + ncuts);

  Outcome whole = read_stream(stream, {});
  Outcome pieces = read_stream(stream, cuts.empty() ? std::string_view("\x01", 1) : cuts);
  CHECK(whole.frames.size() == pieces.frames.size());
  CHECK(whole.last == pieces.last);
  std::string reencoded;
  for (std::size_t i = 0; i < whole.frames.size(); ++i) {
    const auto& a = whole.frames[i];
    const auto& b = pieces.frames[i];
    CHECK(a.type == b.type && a.payload == b.payload);
    proto::FrameHeader h{proto::kMagic, proto::kVersion, static_cast<std::uint16_t>(a.type),
                         static_cast<std::uint32_t>(a.payload.size()), 0};
    std::string_view raw(stream.data() + reencoded.size(), sizeof h);
    proto::FrameHeader got{};
    std::memcpy(&got, raw.data(), sizeof got);
    h.reserved = got.reserved;  // what check_header tolerates there is not the reader's to rewrite
    reencoded.append(reinterpret_cast<const char*>(&h), sizeof h);
    reencoded.append(a.payload);
    check_body(a);
  }
  CHECK(stream.substr(0, reencoded.size()) == reencoded);
  return 0;
}
