#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>
#include <vector>

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

// 256 jobs started at once found the RM's listen backlog full: connect() failed with EAGAIN and the jobs
// ran unmanaged. A full backlog is now retried with backoff within the timeout.
TEST(ConnectUnix, RetriesAFullBacklogWithinTheTimeout) {
  char dir[] = "/tmp/cosched-wire-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  std::string path = std::string(dir) + "/s.sock";
  int srv = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strcpy(addr.sun_path, path.c_str());
  ASSERT_EQ(::bind(srv, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(srv, 0), 0);
  // Fill the backlog with connections nobody accepts yet.
  std::vector<int> pending;
  for (int i = 0; i < 64; ++i) {
    int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      ASSERT_EQ(errno, EAGAIN);
      ::close(fd);
      break;
    }
    pending.push_back(fd);
  }
  std::string err;
  EXPECT_LT(wire::connect_unix(path, 0, err), 0);  // no time to wait: the full backlog is the answer
  EXPECT_NE(err.find("Resource temporarily unavailable"), std::string::npos) << err;
  // The server catches up a moment later; a client with time left gets in.
  std::thread server([&] {
    ::poll(nullptr, 0, 100);
    for (std::size_t i = 0; i <= pending.size(); ++i) {
      pollfd p{srv, POLLIN, 0};
      if (::poll(&p, 1, 5000) != 1) break;  // the client gave up: nothing more will come
      int c = ::accept(srv, nullptr, nullptr);
      if (c >= 0) ::close(c);
    }
  });
  int fd = wire::connect_unix(path, 10000, err);
  EXPECT_GE(fd, 0) << err;
  server.join();
  if (fd >= 0) ::close(fd);
  for (int p : pending) ::close(p);
  ::close(srv);
  ::unlink(path.c_str());
  ::rmdir(dir);
}
