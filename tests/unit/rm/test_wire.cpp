#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

#include "cosched/wire.hpp"

using namespace cosched;

namespace {
std::string frame_bytes(proto::MsgType t, const std::string& payload, std::uint16_t version = proto::kVersion) {
  proto::FrameHeader h{proto::kMagic, version, static_cast<std::uint16_t>(t), static_cast<std::uint32_t>(payload.size()), 0};
  std::string out(reinterpret_cast<const char*>(&h), sizeof h);
  return out + payload;
}
}  // namespace

TEST(FrameReader, AssemblesFramesFromPieces) {
  wire::FrameReader r(1024);
  std::string bytes = frame_bytes(proto::MsgType::ctl_request, "{\"cmd\":\"status\"}") +
                      frame_bytes(proto::MsgType::ctl_request, "x");
  wire::Frame f;
  for (char c : bytes.substr(0, 10)) r.append(&c, 1);
  EXPECT_EQ(r.next(f), wire::RecvStatus::closed);  // incomplete header
  r.append(bytes.data() + 10, bytes.size() - 10);
  ASSERT_EQ(r.next(f), wire::RecvStatus::ok);
  EXPECT_EQ(f.payload, "{\"cmd\":\"status\"}");
  ASSERT_EQ(r.next(f), wire::RecvStatus::ok);
  EXPECT_EQ(f.payload, "x");
  EXPECT_EQ(r.next(f), wire::RecvStatus::closed);
}

TEST(FrameReader, RejectsGarbageVersionAndSize) {
  wire::Frame f;
  wire::FrameReader garbage(1024);
  std::string junk(32, 'Z');
  garbage.append(junk.data(), junk.size());
  EXPECT_EQ(garbage.next(f), wire::RecvStatus::bad_magic);

  wire::FrameReader old(1024);
  auto b = frame_bytes(proto::MsgType::ctl_request, "{}", 99);
  old.append(b.data(), b.size());
  EXPECT_EQ(old.next(f), wire::RecvStatus::bad_version);

  wire::FrameReader small(4);
  auto big = frame_bytes(proto::MsgType::ctl_request, "0123456789");
  small.append(big.data(), big.size());
  EXPECT_EQ(small.next(f), wire::RecvStatus::too_large);
}

TEST(Wire, SendAndReceiveWithAPassedFd) {
  int sv[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  int p[2];
  ASSERT_EQ(pipe(p), 0);
  std::string payload = "hello";
  ASSERT_TRUE(wire::send_frame(sv[0], proto::MsgType::register_ok, payload.data(), 5, p[1]));
  wire::Frame f;
  ASSERT_EQ(wire::recv_frame(sv[1], f, 1024), wire::RecvStatus::ok);
  EXPECT_EQ(f.type, proto::MsgType::register_ok);
  EXPECT_EQ(f.payload, "hello");
  ASSERT_GE(f.passed_fd, 0);
  ASSERT_EQ(write(f.passed_fd, "x", 1), 1);  // the passed fd is the pipe's write end
  char c = 0;
  ASSERT_EQ(read(p[0], &c, 1), 1);
  EXPECT_EQ(c, 'x');
  close(f.passed_fd);
  close(sv[0]);
  EXPECT_EQ(wire::recv_frame(sv[1], f, 1024), wire::RecvStatus::closed);
  close(sv[1]);
  close(p[0]);
  close(p[1]);
}

TEST(Wire, ConnectErrorNamesThePath) {
  std::string err;
  EXPECT_LT(wire::connect_unix("/nonexistent/dir/rm.sock", 100, err), 0);
  EXPECT_NE(err.find("/nonexistent/dir/rm.sock"), std::string::npos) << err;
}
