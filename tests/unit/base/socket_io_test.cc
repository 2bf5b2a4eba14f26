#include "protocol/base/socket_io.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <vector>

#include <gtest/gtest.h>

#include "bench-mpi/launch/child_process.h"
#include "bench-mpi/launch/process_fds.h"
#include "tests/support/status_matchers.h"

namespace rplasma {
namespace {

using ::rplasma::testing::HasErrorCode;

TEST(SocketIoTest, FdPassedWithDataArrivesCloexec) {
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  UniqueFd a(sv[0]), b(sv[1]);
  UniqueFd memfd(::memfd_create("t", MFD_CLOEXEC));
  ASSERT_TRUE(memfd);
  ASSERT_OK(SendWithFd(a.get(), "xyz", memfd.get()));
  char buf[3];
  ASSERT_OK_AND_ASSIGN(ReceivedWithFd got, RecvWithFd(b.get(), buf, sizeof(buf)));
  EXPECT_GE(got.bytes, 1u);
  ASSERT_TRUE(got.fd);
  EXPECT_TRUE(::fcntl(got.fd.get(), F_GETFD) & FD_CLOEXEC);
}

TEST(SocketIoTest, SeveralFdsAreRefusedAndAllClosed) {
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  UniqueFd a(sv[0]), b(sv[1]);
  int fds[2] = {::memfd_create("x", MFD_CLOEXEC), ::memfd_create("y", MFD_CLOEXEC)};
  ASSERT_OK_AND_ASSIGN(size_t sent, SendSomeWithFds(a.get(), "x", fds, SocketWait::kBlock));
  ASSERT_EQ(sent, 1u);
  ::close(fds[0]);
  ::close(fds[1]);
  int before = bench::CountOpenFds();
  char buf[1];
  EXPECT_THAT(RecvWithFd(b.get(), buf, 1), HasErrorCode(ErrorCode::kProtocolError));
  EXPECT_EQ(bench::CountOpenFds(), before);
}

TEST(SocketIoTest, NonBlockingReceiveOnAnEmptySocketReportsWouldBlock) {
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  UniqueFd a(sv[0]), b(sv[1]);
  char buf[4];
  ASSERT_OK_AND_ASSIGN(ReceivedWithFds got, RecvSomeWithFds(b.get(), buf, sizeof(buf), 1, SocketWait::kDontWait));
  EXPECT_TRUE(got.would_block);
  EXPECT_EQ(got.bytes, 0u);
  ASSERT_OK_AND_ASSIGN(size_t sent, SendSomeWithFds(a.get(), "abcd", {}, SocketWait::kDontWait));
  ASSERT_EQ(sent, 4u);
  ASSERT_OK_AND_ASSIGN(got, RecvSomeWithFds(b.get(), buf, sizeof(buf), 1, SocketWait::kDontWait));
  EXPECT_FALSE(got.would_block);
  EXPECT_EQ(got.bytes, 4u);
  EXPECT_TRUE(got.fds.empty());
}

TEST(SocketIoTest, GatheredPiecesArriveAsOneStreamInOrderAndTooManyAreRefused) {
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  UniqueFd a(sv[0]), b(sv[1]);
  const absl::string_view pieces[] = {"one", "", "two", "three"};
  ASSERT_OK_AND_ASSIGN(size_t sent, SendSomeGathered(a.get(), pieces, {}, SocketWait::kDontWait));
  ASSERT_EQ(sent, 11u);
  char buf[16];
  ASSERT_OK_AND_ASSIGN(ReceivedWithFds got, RecvSomeWithFds(b.get(), buf, sizeof(buf), 1, SocketWait::kDontWait));
  EXPECT_EQ(absl::string_view(buf, got.bytes), "onetwothree");
  std::vector<absl::string_view> many(kMaxGatherPieces + 1, "x");
  EXPECT_THAT(SendSomeGathered(a.get(), many, {}, SocketWait::kDontWait).status(),
              HasErrorCode(ErrorCode::kInvalidArgument));
  const absl::string_view empty_first[] = {"", "x"};
  EXPECT_THAT(SendSomeGathered(a.get(), empty_first, {}, SocketWait::kDontWait).status(),
              HasErrorCode(ErrorCode::kInvalidArgument));
}

TEST(SocketIoTest, MoreFdsThanRoomAreReportedTruncatedAndNoneLeak) {
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  UniqueFd a(sv[0]), b(sv[1]);
  std::vector<UniqueFd> owned;
  std::vector<int> fds;
  for (int i = 0; i < 8; ++i) {
    owned.emplace_back(::memfd_create("f", MFD_CLOEXEC));
    fds.push_back(owned.back().get());
  }
  ASSERT_OK_AND_ASSIGN(size_t sent, SendSomeWithFds(a.get(), "x", fds, SocketWait::kBlock));
  ASSERT_EQ(sent, 1u);
  owned.clear();
  const int before = bench::CountOpenFds();
  {
    char buf[1];
    ASSERT_OK_AND_ASSIGN(ReceivedWithFds got, RecvSomeWithFds(b.get(), buf, 1, 2, SocketWait::kBlock));
    EXPECT_EQ(got.bytes, 1u);
    EXPECT_TRUE(got.fds_truncated);
    EXPECT_LE(got.fds.size(), 2u);
  }
  EXPECT_EQ(bench::CountOpenFds(), before);
}

TEST(SocketIoTest, ListenConnectAndPeerCredentials) {
  bench::ScratchDir dir = bench::ScratchDir::CreateOrDie();
  std::string path = dir.Join("s.sock");
  ASSERT_OK_AND_ASSIGN(UniqueFd listener, UnixListen(path));
  ASSERT_OK_AND_ASSIGN(UniqueFd client, UnixConnect(path));
  UniqueFd server(::accept(listener.get(), nullptr, nullptr));
  ASSERT_TRUE(server);
  ASSERT_OK_AND_ASSIGN(PeerCredentials cred, GetPeerCredentials(server.get()));
  EXPECT_EQ(cred.uid, ::getuid());
  EXPECT_EQ(cred.pid, ::getpid());
}

TEST(SocketIoTest, ConnectToMissingSocketIsUnavailable) {
  bench::ScratchDir dir = bench::ScratchDir::CreateOrDie();
  EXPECT_THAT(UnixConnect(dir.Join("none.sock")), HasErrorCode(ErrorCode::kUnavailable));
}

}  // namespace
}  // namespace rplasma
