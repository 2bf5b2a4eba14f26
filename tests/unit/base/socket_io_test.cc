#include "protocol/base/socket_io.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "tests/support/status_matchers.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

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
  char byte = 'x';
  iovec iov{&byte, 1};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(fds))] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof(control);
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(fds));
  std::memcpy(CMSG_DATA(c), fds, sizeof(fds));
  ASSERT_EQ(::sendmsg(a.get(), &msg, 0), 1);
  ::close(fds[0]);
  ::close(fds[1]);
  int before = testing::CountOpenFds();
  char buf[1];
  EXPECT_THAT(RecvWithFd(b.get(), buf, 1), HasErrorCode(ErrorCode::kProtocolError));
  EXPECT_EQ(testing::CountOpenFds(), before);
}

TEST(SocketIoTest, ListenConnectAndPeerCredentials) {
  testing::TempDir dir;
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
  testing::TempDir dir;
  EXPECT_THAT(UnixConnect(dir.Join("none.sock")), HasErrorCode(ErrorCode::kUnavailable));
}

}  // namespace
}  // namespace rplasma
