#include "manager/transport/tcp/tcp_receive_buffer.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "protocol/base/unique_fd.h"
#include "tests/support/status_matchers.h"
#include "tests/support/test_bytes.h"

namespace rplasma::transport::tcp {
namespace {

using ::rplasma::testing::HasErrorCode;

// A connected pair of non-blocking stream sockets (as every transport socket is).
struct SocketPair {
  SocketPair() {
    int fds[2];
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds), 0);
    reader = UniqueFd(fds[0]);
    writer = UniqueFd(fds[1]);
  }
  // All of `bytes`, waiting for room when the socket is full: a reader that falls behind (a loaded
  // machine) fills a Unix socket's buffer with a few hundred small writes, and a non-blocking
  // write then takes part or none of them.
  void Write(const std::string& bytes) {
    size_t at = 0;
    while (at < bytes.size()) {
      const ssize_t n = ::write(writer.get(), bytes.data() + at, bytes.size() - at);
      if (n > 0) {
        at += static_cast<size_t>(n);
        continue;
      }
      ASSERT_TRUE(n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) << std::strerror(errno);
      pollfd pfd{writer.get(), POLLOUT, 0};
      ASSERT_GE(::poll(&pfd, 1, 10000), 1) << "no room for 10 s";
    }
  }
  UniqueFd reader;
  UniqueFd writer;
};

absl::Time Soon() { return absl::Now() + absl::Seconds(10); }

TEST(TcpReceiveBufferTest, AHeaderAndItsPayloadSentTogetherComeFromOneReceive) {
  SocketPair pair;
  const std::string message = testing::TestBytes(1, 24) + testing::TestBytes(2, 100) + testing::TestBytes(3, 24);
  pair.Write(message);
  TcpReceiveBuffer rx(4096);
  std::string header(24, '\0'), payload(100, '\0'), next(24, '\0');
  ASSERT_OK(rx.ReadExact(pair.reader.get(), header.data(), header.size(), Soon()));
  EXPECT_EQ(rx.buffered(), 124u) << "the one recv() took everything that had arrived";
  ASSERT_OK(rx.ReadExact(pair.reader.get(), payload.data(), payload.size(), Soon()));
  ASSERT_OK(rx.ReadExact(pair.reader.get(), next.data(), next.size(), Soon()));
  EXPECT_EQ(rx.buffered(), 0u);
  EXPECT_EQ(header + payload + next, message);
}

TEST(TcpReceiveBufferTest, AReadLargerThanTheBufferArrivesIntactAfterTheBufferedBytes) {
  SocketPair pair;
  const std::string message = testing::TestBytes(4, 100000);
  std::thread writer([&] {
    for (size_t at = 0; at < message.size(); at += 7000) pair.Write(message.substr(at, 7000));
  });
  TcpReceiveBuffer rx(64);
  std::string first(10, '\0'), rest(message.size() - 10, '\0');
  ASSERT_OK(rx.ReadExact(pair.reader.get(), first.data(), first.size(), Soon()));
  ASSERT_OK(rx.ReadExact(pair.reader.get(), rest.data(), rest.size(), Soon()));
  writer.join();
  EXPECT_EQ(first + rest, message);
  EXPECT_EQ(rx.buffered(), 0u);
}

TEST(TcpReceiveBufferTest, SmallReadsAcrossManyFragmentsArriveInOrder) {
  SocketPair pair;
  const std::string message = testing::TestBytes(5, 5000);
  std::thread writer([&] {
    for (size_t at = 0; at < message.size(); at += 13) {
      pair.Write(message.substr(at, 13));
      if (at % 1300 == 0) absl::SleepFor(absl::Microseconds(200));
    }
  });
  TcpReceiveBuffer rx(256);
  std::string got;
  for (size_t at = 0; at < message.size(); at += 50) {
    std::string part(std::min<size_t>(50, message.size() - at), '\0');
    ASSERT_OK(rx.ReadExact(pair.reader.get(), part.data(), part.size(), Soon()));
    got += part;
  }
  writer.join();
  EXPECT_EQ(got, message);
}

TEST(TcpReceiveBufferTest, EndOfStreamMidMessageIsUnavailable) {
  SocketPair pair;
  pair.Write(testing::TestBytes(6, 10));
  pair.writer.reset();
  TcpReceiveBuffer rx;
  std::string header(24, '\0');
  EXPECT_THAT(rx.ReadExact(pair.reader.get(), header.data(), header.size(), Soon()),
              HasErrorCode(ErrorCode::kUnavailable));
}

TEST(TcpReceiveBufferTest, NothingArrivingBeforeTheDeadlineIsDeadlineExceeded) {
  SocketPair pair;
  TcpReceiveBuffer rx;
  std::string header(24, '\0');
  EXPECT_THAT(rx.ReadExact(pair.reader.get(), header.data(), header.size(), absl::Now() + absl::Milliseconds(20)),
              HasErrorCode(ErrorCode::kDeadlineExceeded));
  EXPECT_THAT(
      rx.ReadExact(pair.reader.get(), header.data(), header.size(), absl::InfiniteFuture(), absl::Milliseconds(20)),
      HasErrorCode(ErrorCode::kDeadlineExceeded))
      << "a stalled peer";
}

TEST(TcpReceiveBufferTest, AZeroByteReadNeedsNoData) {
  SocketPair pair;
  TcpReceiveBuffer rx;
  char unused = 0;
  EXPECT_OK(rx.ReadExact(pair.reader.get(), &unused, 0, absl::Now()));
}

}  // namespace
}  // namespace rplasma::transport::tcp
