#include "client/manager_connection_pool.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <cerrno>
#include <cstdio>
#include <vector>

#include "absl/time/clock.h"
#include <gtest/gtest.h>

#include "bench-mpi/launch/child_process.h"
#include "client/store_subscription.h"
#include "protocol/base/socket_io.h"
#include "tests/support/status_matchers.h"

namespace rplasma {
namespace {

// The inode of the socket behind `fd`: the same connection has the same one.
ino_t SocketInode(int fd) {
  struct stat st {};
  EXPECT_EQ(::fstat(fd, &st), 0);
  return st.st_ino;
}

absl::Time Deadline() { return absl::Now() + absl::Seconds(10); }

// A listener that never accepts, its backlog filled: a blocking connect to it waits forever.
struct FullListener {
  explicit FullListener(const std::string& path) {
    listener = UniqueFd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path.c_str());
    EXPECT_EQ(::bind(listener.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    EXPECT_EQ(::listen(listener.get(), 0), 0);
    for (int i = 0; i < 64; ++i) {
      UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
      if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
        EXPECT_EQ(errno, EAGAIN);
        full = true;
        break;
      }
      pending.push_back(std::move(fd));
    }
  }
  UniqueFd listener;
  std::vector<UniqueFd> pending;
  bool full = false;
};

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

  bench::ScratchDir dir_ = bench::ScratchDir::CreateOrDie();
  std::string path_;
  UniqueFd listener_;
  std::vector<UniqueFd> accepted_;
};

TEST_F(ManagerConnectionPoolTest, AConnectionGivenBackIsTheOneTakenNext) {
  ManagerConnectionPool pool(path_, 4);
  ASSERT_OK_AND_ASSIGN(ManagerConnectionPool::Lease first, pool.Take(Deadline()));
  EXPECT_FALSE(first.reused);
  AcceptOne();
  const ino_t inode = SocketInode(first.fd.get());
  pool.GiveBack(std::move(first.fd));
  EXPECT_EQ(pool.idle(), 1u);
  ASSERT_OK_AND_ASSIGN(ManagerConnectionPool::Lease second, pool.Take(Deadline()));
  EXPECT_TRUE(second.reused);
  EXPECT_EQ(SocketInode(second.fd.get()), inode);
  EXPECT_EQ(pool.idle(), 0u);
}

TEST_F(ManagerConnectionPoolTest, ConcurrentTakersGetTheirOwnConnectionsAndAtMostMaxIdleAreKept) {
  ManagerConnectionPool pool(path_, 2);
  std::vector<ManagerConnectionPool::Lease> held;
  for (int i = 0; i < 3; ++i) {
    ASSERT_OK_AND_ASSIGN(ManagerConnectionPool::Lease lease, pool.Take(Deadline()));
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
  absl::StatusOr<ManagerConnectionPool::Lease> lease = pool.Take(Deadline());
  EXPECT_THAT(lease.status(), testing::HasErrorCode(ErrorCode::kUnavailable));
  EXPECT_NE(lease.status().message().find("nobody.sock"), absl::string_view::npos) << lease.status();
}

// Before, Take connected with no deadline and a manager that stopped accepting held Fetch forever
// (issue 21).
TEST(ManagerConnectionPoolDeadlineTest, AManagerThatStoppedAcceptingFailsTheTakeAtItsDeadline) {
  bench::ScratchDir dir = bench::ScratchDir::CreateOrDie();
  FullListener manager(dir.Join("stuck.sock"));
  ASSERT_TRUE(manager.full);
  ManagerConnectionPool pool(dir.Join("stuck.sock"), 4);
  const absl::Time start = absl::Now();
  absl::StatusOr<ManagerConnectionPool::Lease> lease = pool.Take(start + absl::Milliseconds(300));
  EXPECT_THAT(lease.status(), testing::HasErrorCode(ErrorCode::kDeadlineExceeded));
  EXPECT_NE(lease.status().message().find("stuck.sock"), absl::string_view::npos) << lease.status();
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(250));
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
}

TEST(StoreSubscriptionDeadlineTest, AStoreThatStoppedAcceptingFailsTheSubscriptionAtTheHandshakeTimeout) {
  bench::ScratchDir dir = bench::ScratchDir::CreateOrDie();
  FullListener store(dir.Join("stuck-store.sock"));
  ASSERT_TRUE(store.full);
  const absl::Time start = absl::Now();
  absl::StatusOr<std::unique_ptr<StoreSubscription>> subscription =
      StoreSubscription::Create(dir.Join("stuck-store.sock"), "test", true, absl::Milliseconds(300));
  EXPECT_THAT(subscription.status(), testing::HasErrorCode(ErrorCode::kDeadlineExceeded));
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
}

}  // namespace
}  // namespace rplasma
