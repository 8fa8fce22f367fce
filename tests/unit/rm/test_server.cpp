// The daemon's Server room (rm/daemon/server.hpp) on a real Unix socket and a real epoll set: frames reach
// the handler, an unknown message type is refused with its reason, a registered job's lost connection is
// the daemon's to end, a silent client is dropped after the client timeout, and a second server on the same
// path is refused.
#include <gtest/gtest.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "rm/daemon/server.hpp"

namespace cosched::rm {
namespace {

class ServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("cosched-server-test-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    cfg_.socket = (dir_ / "rm.sock").string();
    cfg_.client_timeout_ms = 500;
    epfd_ = ::epoll_create1(EPOLL_CLOEXEC);
    ASSERT_GE(epfd_, 0);
  }
  void TearDown() override {
    server_.reset();
    ::close(epfd_);
    std::filesystem::remove_all(dir_);
  }
  Server& make() {
    server_ = std::make_unique<Server>(
        cfg_, Server::Handlers{[this](Conn& c, const wire::Frame& f) {
                                 frames_.push_back(f.payload);
                                 if (f.payload == "register") c.job = 7;
                                 if (f.type != proto::MsgType::ctl_request) return false;
                                 server_->queue_reply(c, proto::MsgType::ctl_reply, "ok:" + f.payload);
                                 return true;
                               },
                               [this](policy::JobId job, const std::string& why) {
                                 lost_.emplace_back(job, why);
                                 for (int fd : open_fds_) {
                                   if (server_->has(fd)) server_->close(fd);
                                 }
                               },
                               [this] { return clock_; }});
    return *server_;
  }
  // A server listening on cfg_.socket, watched in epfd_.
  Server& serving() {
    Server& s = make();
    EXPECT_TRUE(s.prepare_socket_dir());
    EXPECT_TRUE(s.open(epfd_));
    return s;
  }
  // Runs the loop until nothing happens for 50 ms, noting the connections' fds.
  void pump() {
    epoll_event evs[16];
    for (int n; (n = ::epoll_wait(epfd_, evs, 16, 50)) > 0;) {
      for (int i = 0; i < n; ++i) {
        open_fds_.push_back(evs[i].data.fd);
        server_->on_event(evs[i].data.fd, evs[i].events);
      }
    }
  }
  int client() {
    std::string err;
    int fd = wire::connect_unix(cfg_.socket, 1000, err);
    EXPECT_GE(fd, 0) << err;
    return fd;
  }
  static void send(int fd, proto::MsgType type, const std::string& payload) {
    ASSERT_TRUE(wire::send_frame(fd, type, payload.data(), static_cast<std::uint32_t>(payload.size())));
  }
  static wire::Frame receive(int fd) {
    wire::Frame f;
    EXPECT_EQ(wire::recv_frame(fd, f, 1 << 20), wire::RecvStatus::ok);
    return f;
  }

  std::filesystem::path dir_;
  Config cfg_;
  int epfd_ = -1;
  double clock_ = 0;
  std::unique_ptr<Server> server_;
  std::vector<std::string> frames_;
  std::vector<std::pair<policy::JobId, std::string>> lost_;
  std::vector<int> open_fds_;
};

TEST_F(ServerTest, AnswersAFrameThroughItsHandler) {
  Server& s = serving();
  int fd = client();
  send(fd, proto::MsgType::ctl_request, "status");
  pump();
  EXPECT_EQ(frames_, std::vector<std::string>{"status"});
  wire::Frame f = receive(fd);
  EXPECT_EQ(f.type, proto::MsgType::ctl_reply);
  EXPECT_EQ(f.payload, "ok:status");
  EXPECT_EQ(s.connections(), 1U);
  ::close(fd);
  pump();
  EXPECT_EQ(s.connections(), 0U);  // an unregistered peer that hangs up is simply closed
  EXPECT_TRUE(lost_.empty());
}

TEST_F(ServerTest, RefusesAnUnknownMessageTypeWithItsReason) {
  Server& s = serving();
  int fd = client();
  send(fd, proto::MsgType::ctl_reply, "not a request");
  pump();
  wire::Frame f = receive(fd);
  EXPECT_EQ(f.type, proto::MsgType::refused);
  EXPECT_EQ(f.payload, "protocol error: unexpected message type " +
                           std::to_string(static_cast<unsigned>(proto::MsgType::ctl_reply)));
  EXPECT_EQ(s.connections(), 0U);
  ::close(fd);
}

TEST_F(ServerTest, AProtocolErrorEndsARegisteredJobThroughTheDaemon) {
  Server& s = serving();
  int fd = client();
  send(fd, proto::MsgType::register_job, "register");  // the handler marks the peer as job 7, refuses the type
  pump();
  ASSERT_EQ(lost_.size(), 1U);
  EXPECT_EQ(lost_[0].first, 7);
  EXPECT_EQ(lost_[0].second, "protocol error");
  EXPECT_EQ(s.connections(), 0U);  // closed by the daemon's handler, as depart() does
  ::close(fd);
}

TEST_F(ServerTest, DropsAClientThatSaysNothingPastTheTimeout) {
  Server& s = serving();
  int fd = client();
  pump();
  ASSERT_EQ(s.connections(), 1U);
  clock_ = 0.4;  // within --client-timeout-ms 500
  s.drop_stalled();
  EXPECT_EQ(s.connections(), 1U);
  clock_ = 0.6;
  s.drop_stalled();
  EXPECT_EQ(s.connections(), 0U);
  wire::Frame f = receive(fd);
  EXPECT_EQ(f.type, proto::MsgType::refused);
  EXPECT_EQ(f.payload, "timed out: no request");
  ::close(fd);
}

TEST_F(ServerTest, ASecondServerOnTheSamePathIsRefusedAndShutRemovesTheSocket) {
  Server& s = serving();
  Server other(cfg_, Server::Handlers{[](Conn&, const wire::Frame&) { return true; },
                                      [](policy::JobId, const std::string&) {}, [] { return 0.0; }});
  int ep2 = ::epoll_create1(EPOLL_CLOEXEC);
  auto st = other.open(ep2);
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().message, "another cosched-rm is already serving " + cfg_.socket);
  ::close(ep2);
  s.shut();
  EXPECT_FALSE(std::filesystem::exists(cfg_.socket));
}

TEST_F(ServerTest, RefusesASocketDirectoryOthersMayWrite) {
  Server& s = make();
  std::filesystem::create_directories(dir_);
  ::chmod(dir_.c_str(), 0777);
  auto st = s.prepare_socket_dir();
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message.find("is writable by other users and not sticky"), std::string::npos)
      << st.error().message;
}

}  // namespace
}  // namespace cosched::rm
