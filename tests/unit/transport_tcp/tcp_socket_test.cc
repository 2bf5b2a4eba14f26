#include "manager/transport/tcp/tcp_socket.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/support/status_matchers.h"
#include "tests/support/test_bytes.h"

namespace rplasma::transport::tcp {
namespace {

using ::rplasma::testing::HasErrorCode;

TEST(ParseHostPortTest, AcceptsNamesIpv4AndBracketedIpv6) {
  ASSERT_OK_AND_ASSIGN(HostPort a, ParseHostPort("127.0.0.1:8080"));
  EXPECT_EQ(a.host, "127.0.0.1");
  EXPECT_EQ(a.port, 8080);
  ASSERT_OK_AND_ASSIGN(HostPort b, ParseHostPort("[::1]:0"));
  EXPECT_EQ(b.host, "::1");
  EXPECT_EQ(b.port, 0);
  ASSERT_OK_AND_ASSIGN(HostPort c, ParseHostPort("localhost:65535"));
  EXPECT_EQ(c.port, 65535);
  EXPECT_EQ(FormatHostPort("::1", 5), "[::1]:5");
  EXPECT_EQ(FormatHostPort("10.0.0.1", 5), "10.0.0.1:5");
}

TEST(ParseHostPortTest, RefusesMalformedAddresses) {
  for (const char* bad :
       {"", "host", ":80", "host:", "host:65536", "host:-1", "host:8x", "::1:80", "[::1:80", "[]:80", "host:123456"}) {
    EXPECT_THAT(ParseHostPort(bad), HasErrorCode(ErrorCode::kInvalidArgument)) << bad;
  }
}

TEST(TcpSocketTest, ListenOnPortZeroPicksAPortThatConnectReaches) {
  ASSERT_OK_AND_ASSIGN(UniqueFd listener, TcpListen("127.0.0.1:0"));
  ASSERT_OK_AND_ASSIGN(std::string address, LocalAddress(listener.get()));
  ASSERT_OK_AND_ASSIGN(UniqueFd client, TcpConnect(address, absl::Now() + absl::Seconds(5)));
  ASSERT_OK_AND_ASSIGN(UniqueFd server, TcpAccept(listener.get(), absl::Now() + absl::Seconds(5)));
  ConnectionOptions options;
  options.dead_peer_timeout = absl::Seconds(10);
  options.buffer_bytes = 1 << 20;
  ASSERT_OK(ConfigureConnection(client.get(), options));
  ASSERT_OK_AND_ASSIGN(std::string remote, RemoteAddress(server.get()));
  EXPECT_THAT(remote, ::testing::StartsWith("127.0.0.1:"));

  // 8 MiB through the pair (more than the socket buffers hold: exercises EAGAIN + poll).
  std::vector<uint8_t> out = testing::TestBytes<std::vector<uint8_t>>(0, 8 << 20), in(8 << 20);
  std::thread sender([&] {
    iovec iov[2] = {{out.data(), 100}, {out.data() + 100, out.size() - 100}};
    EXPECT_OK(SendAll(client.get(), iov, 2, absl::Now() + absl::Seconds(20)));
  });
  EXPECT_OK(RecvAll(server.get(), in.data(), in.size(), absl::Now() + absl::Seconds(20)));
  sender.join();
  EXPECT_EQ(in, out);
}

std::string CongestionControl(int fd) {
  char name[16] = {};
  socklen_t len = sizeof(name);
  if (::getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, name, &len) != 0) return "?";
  return std::string(name, strnlen(name, len));
}

TEST(TcpSocketTest, ConnectionsGetTheCongestionControlAskedForOrKeepTheSystemsDefault) {
  // The transport's default (TcpTuning::congestion_control); reno is always built in, so the test
  // can tell the option from the system's default whatever that is.
  ASSERT_OK_AND_ASSIGN(UniqueFd listener, TcpListen("127.0.0.1:0"));
  ASSERT_OK_AND_ASSIGN(std::string address, LocalAddress(listener.get()));
  ASSERT_OK_AND_ASSIGN(UniqueFd a, TcpConnect(address, absl::Now() + absl::Seconds(5)));
  ASSERT_OK_AND_ASSIGN(UniqueFd b, TcpConnect(address, absl::Now() + absl::Seconds(5)));
  const std::string system_default = CongestionControl(a.get());
  ASSERT_NE(system_default, "?");
  ConnectionOptions options;
  options.congestion_control = "reno";
  ASSERT_OK(ConfigureConnection(a.get(), options));
  EXPECT_EQ(CongestionControl(a.get()), "reno");
  // An algorithm the kernel does not have costs nothing but the choice: the connection is
  // configured and keeps the default.
  options.congestion_control = "no_such_cc";
  ASSERT_OK(ConfigureConnection(b.get(), options));
  EXPECT_EQ(CongestionControl(b.get()), system_default);
  int nodelay = 0;
  socklen_t len = sizeof(nodelay);
  ASSERT_EQ(::getsockopt(b.get(), IPPROTO_TCP, TCP_NODELAY, &nodelay, &len), 0);
  EXPECT_EQ(nodelay, 1);
}

TEST(TcpSocketTest, AcceptAndRecvHonourDeadlines) {
  ASSERT_OK_AND_ASSIGN(UniqueFd listener, TcpListen("127.0.0.1:0"));
  EXPECT_THAT(TcpAccept(listener.get(), absl::Now() + absl::Milliseconds(50)),
              HasErrorCode(ErrorCode::kDeadlineExceeded));
  ASSERT_OK_AND_ASSIGN(std::string address, LocalAddress(listener.get()));
  ASSERT_OK_AND_ASSIGN(UniqueFd client, TcpConnect(address, absl::Now() + absl::Seconds(5)));
  uint8_t byte;
  absl::Time start = absl::Now();
  EXPECT_THAT(RecvAll(client.get(), &byte, 1, start + absl::Milliseconds(100)),
              HasErrorCode(ErrorCode::kDeadlineExceeded));
  EXPECT_LT(absl::Now() - start, absl::Seconds(3));
  EXPECT_THAT(RecvAll(client.get(), &byte, 1, absl::InfiniteFuture(), absl::Milliseconds(50)),
              HasErrorCode(ErrorCode::kDeadlineExceeded));
}

TEST(TcpSocketTest, ShutdownWakesABlockedReceiver) {
  ASSERT_OK_AND_ASSIGN(UniqueFd listener, TcpListen("127.0.0.1:0"));
  ASSERT_OK_AND_ASSIGN(std::string address, LocalAddress(listener.get()));
  ASSERT_OK_AND_ASSIGN(UniqueFd client, TcpConnect(address, absl::Now() + absl::Seconds(5)));
  std::thread waker([&] {
    absl::SleepFor(absl::Milliseconds(50));
    ::shutdown(client.get(), SHUT_RDWR);
  });
  uint8_t byte;
  EXPECT_THAT(RecvAll(client.get(), &byte, 1, absl::InfiniteFuture()), HasErrorCode(ErrorCode::kUnavailable));
  waker.join();
}

TEST(TcpSocketTest, ShutdownWakesABlockedAccept) {
  ASSERT_OK_AND_ASSIGN(UniqueFd listener, TcpListen("127.0.0.1:0"));
  std::thread waker([&] {
    absl::SleepFor(absl::Milliseconds(50));
    ::shutdown(listener.get(), SHUT_RDWR);
  });
  absl::Time start = absl::Now();
  EXPECT_FALSE(TcpAccept(listener.get(), start + absl::Seconds(5)).ok());
  EXPECT_LT(absl::Now() - start, absl::Seconds(2));
  waker.join();
}

TEST(TcpSocketTest, ConnectionRefusedIsUnavailable) {
  ASSERT_OK_AND_ASSIGN(UniqueFd listener, TcpListen("127.0.0.1:0"));
  ASSERT_OK_AND_ASSIGN(std::string address, LocalAddress(listener.get()));
  listener.reset();
  EXPECT_THAT(TcpConnect(address, absl::Now() + absl::Seconds(5)), HasErrorCode(ErrorCode::kUnavailable));
}

TEST(TcpSocketTest, EofIsUnavailable) {
  ASSERT_OK_AND_ASSIGN(UniqueFd listener, TcpListen("127.0.0.1:0"));
  ASSERT_OK_AND_ASSIGN(std::string address, LocalAddress(listener.get()));
  ASSERT_OK_AND_ASSIGN(UniqueFd client, TcpConnect(address, absl::Now() + absl::Seconds(5)));
  { ASSERT_OK_AND_ASSIGN(UniqueFd server, TcpAccept(listener.get(), absl::Now() + absl::Seconds(5))); }
  uint8_t buf[4];
  EXPECT_THAT(RecvAll(client.get(), buf, 4, absl::Now() + absl::Seconds(5)), HasErrorCode(ErrorCode::kUnavailable));
}

}  // namespace
}  // namespace rplasma::transport::tcp
