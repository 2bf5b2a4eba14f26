#include "client/manager_connection_pool.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <vector>

#include "protocol/base/socket_io.h"
#include "tests/support/status_matchers.h"
#include "tests/support/temp_dir.h"

namespace rplasma {
namespace {

// The inode of the socket behind `fd`: the same connection has the same one.
ino_t SocketInode(int fd) {
  struct stat st {};
  EXPECT_EQ(::fstat(fd, &st), 0);
  return st.st_ino;
}

class ManagerConnectionPoolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = dir_.Join("manager.sock");
    ASSERT_OK_AND_ASSIGN(listener_, UnixListen(path_));
  }
  // Accepts one pending connection (kept open, like the manager's serving thread).
  void AcceptOne() {
    const int fd = ::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC);
    ASSERT_GE(fd, 0);
    accepted_.emplace_back(fd);
  }

  testing::TempDir dir_;
  std::string path_;
  UniqueFd listener_;
  std::vector<UniqueFd> accepted_;
};

TEST_F(ManagerConnectionPoolTest, AConnectionGivenBackIsTheOneTakenNext) {
  ManagerConnectionPool pool(path_, 4);
  ASSERT_OK_AND_ASSIGN(ManagerConnectionPool::Lease first, pool.Take());
  EXPECT_FALSE(first.reused);
  AcceptOne();
  const ino_t inode = SocketInode(first.fd.get());
  pool.GiveBack(std::move(first.fd));
  EXPECT_EQ(pool.idle(), 1u);
  ASSERT_OK_AND_ASSIGN(ManagerConnectionPool::Lease second, pool.Take());
  EXPECT_TRUE(second.reused);
  EXPECT_EQ(SocketInode(second.fd.get()), inode);
  EXPECT_EQ(pool.idle(), 0u);
}

TEST_F(ManagerConnectionPoolTest, ConcurrentTakersGetTheirOwnConnectionsAndAtMostMaxIdleAreKept) {
  ManagerConnectionPool pool(path_, 2);
  std::vector<ManagerConnectionPool::Lease> held;
  for (int i = 0; i < 3; ++i) {
    ASSERT_OK_AND_ASSIGN(ManagerConnectionPool::Lease lease, pool.Take());
    EXPECT_FALSE(lease.reused);
    AcceptOne();
    held.push_back(std::move(lease));
  }
  EXPECT_NE(SocketInode(held[0].fd.get()), SocketInode(held[1].fd.get()));
  for (auto& lease : held) pool.GiveBack(std::move(lease.fd));
  EXPECT_EQ(pool.idle(), 2u);
  pool.Clear();
  EXPECT_EQ(pool.idle(), 0u);
}

TEST_F(ManagerConnectionPoolTest, NoManagerListeningIsUnavailableNamingTheSocket) {
  ManagerConnectionPool pool(dir_.Join("nobody.sock"), 4);
  absl::StatusOr<ManagerConnectionPool::Lease> lease = pool.Take();
  EXPECT_THAT(lease.status(), testing::HasErrorCode(ErrorCode::kUnavailable));
  EXPECT_NE(lease.status().message().find("nobody.sock"), absl::string_view::npos) << lease.status();
}

}  // namespace
}  // namespace rplasma
