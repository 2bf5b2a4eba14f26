// HandshakePool over socketpairs: real clients get through, silent and hostile ones are closed by
// the deadline or at once, the caps evict the oldest, and a flood never locks out a real peer.
#include "manager/auth/handshake_pool.h"

#include <sys/socket.h>

#include <future>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "manager/auth/peer_auth.h"
#include "protocol/base/mutex_lock.h"
#include "protocol/base/unique_fd.h"
#include "tests/support/status_matchers.h"
#include "tests/support/wait_for.h"
#include "tests/unit/auth/socket_pair.h"

namespace rplasma::auth {
namespace {

using ::rplasma::testing::HasErrorCode;
using ::rplasma::testing::IsOk;
using ::rplasma::testing::WaitFor;

constexpr char kPoolSecret[] = "handshake-pool-test-secret";

// True once the server side closed `fd` (after whatever it sent).
bool ClosedByServer(int fd, absl::Duration within) {
  const absl::Time deadline = absl::Now() + within;
  char buf[64];
  while (absl::Now() < deadline) {
    const ssize_t n = ::recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) return true;
    if (n < 0) absl::SleepFor(absl::Milliseconds(2));
  }
  return false;
}

class HandshakePoolTest : public ::testing::Test {
 protected:
  void Start(HandshakeLimits limits) {
    auto pool = HandshakePool::Create(
        "test", kPoolSecret, limits,
        [this](UniqueFd fd, const std::string& peer) {
          MutexLock lock(&mu_);
          authenticated_.push_back(peer);
          authenticated_fds_.push_back(std::move(fd));
        },
        [this](const std::string& peer, const absl::Status& why) {
          MutexLock lock(&mu_);
          failures_.push_back(why);
        });
    ASSERT_TRUE(pool.ok()) << pool.status();
    pool_ = *std::move(pool);
  }
  size_t authenticated() {
    MutexLock lock(&mu_);
    return authenticated_.size();
  }
  size_t failures(ErrorCode code) {
    MutexLock lock(&mu_);
    size_t n = 0;
    for (const absl::Status& s : failures_) n += ErrorCodeOf(s) == code;
    return n;
  }
  size_t failures() {
    MutexLock lock(&mu_);
    return failures_.size();
  }

  absl::Mutex mu_;
  std::vector<std::string> authenticated_ ABSL_GUARDED_BY(mu_);
  std::vector<UniqueFd> authenticated_fds_ ABSL_GUARDED_BY(mu_);
  std::vector<absl::Status> failures_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<HandshakePool> pool_;
};

TEST(HandshakeLimitsTest, OutOfRangeLimitsAreRefused) {
  EXPECT_THAT(HandshakeLimits{}.Validate(), IsOk());
  EXPECT_THAT((HandshakeLimits{absl::ZeroDuration(), 8, 4}).Validate(), HasErrorCode(ErrorCode::kInvalidArgument));
  EXPECT_THAT((HandshakeLimits{absl::Seconds(1), 0, 1}).Validate(), HasErrorCode(ErrorCode::kInvalidArgument));
  EXPECT_THAT((HandshakeLimits{absl::Seconds(1), 8, 9}).Validate(), HasErrorCode(ErrorCode::kInvalidArgument));
}

TEST(HandshakePoolSourceTest, SourceIsTheHostWithoutThePort) {
  EXPECT_EQ(SourceOf("10.1.2.3:4567"), "10.1.2.3");
  EXPECT_EQ(SourceOf("[fe80::1]:80"), "fe80::1");
  EXPECT_EQ(SourceOf("unknown"), "unknown");
}

TEST_F(HandshakePoolTest, RealClientIsHandedOverAuthenticated) {
  Start({});
  SocketPair p = MakeSocketPair();
  pool_->Add(std::move(p.server), "10.0.0.1:1000");
  EXPECT_THAT(AuthenticateAsClient(p.client.get(), kPoolSecret, absl::Now() + absl::Seconds(5)), IsOk());
  ASSERT_TRUE(WaitFor([&] { return authenticated() == 1; }, absl::Seconds(5)));
  EXPECT_EQ(failures(), 0u);
  EXPECT_EQ(pool_->pending(), 0u);
  // The handed-over fd is the live connection: bytes sent now arrive on it.
  ASSERT_EQ(::send(p.client.get(), "hi", 2, MSG_NOSIGNAL), 2);
  int handed_over = -1;
  {
    MutexLock lock(&mu_);
    handed_over = authenticated_fds_[0].get();
  }
  char buf[2];
  ASSERT_TRUE(WaitFor([&] { return ::recv(handed_over, buf, 2, MSG_PEEK | MSG_DONTWAIT) == 2; }, absl::Seconds(5)));
}

TEST_F(HandshakePoolTest, WrongSecretAndGarbageFailAtOnceAndAreClosed) {
  Start({});
  SocketPair wrong = MakeSocketPair();
  SocketPair garbage = MakeSocketPair();
  pool_->Add(std::move(wrong.server), "10.0.0.1:1");
  pool_->Add(std::move(garbage.server), "10.0.0.2:2");
  EXPECT_THAT(AuthenticateAsClient(wrong.client.get(), "not-the-pool-secret-at-all", absl::Now() + absl::Seconds(5)),
              HasErrorCode(ErrorCode::kPermissionDenied));
  std::vector<uint8_t> junk(kResponseBytes, 0xEE);
  ASSERT_EQ(::send(garbage.client.get(), junk.data(), junk.size(), MSG_NOSIGNAL), static_cast<ssize_t>(junk.size()));
  ASSERT_TRUE(WaitFor([&] { return failures() == 2; }, absl::Seconds(5)));
  EXPECT_EQ(failures(ErrorCode::kPermissionDenied), 1u);
  EXPECT_EQ(failures(ErrorCode::kProtocolError), 1u);
  EXPECT_TRUE(ClosedByServer(garbage.client.get(), absl::Seconds(5)));
  EXPECT_EQ(authenticated(), 0u);
}

TEST_F(HandshakePoolTest, SilentConnectionsAreClosedByTheDeadline) {
  Start({absl::Milliseconds(100), 64, 64});
  std::vector<UniqueFd> clients;
  const absl::Time start = absl::Now();
  for (int i = 0; i < 20; ++i) {
    SocketPair p = MakeSocketPair();
    pool_->Add(std::move(p.server), "10.0.0.1:" + std::to_string(i));
    clients.push_back(std::move(p.client));
  }
  ASSERT_TRUE(WaitFor([&] { return failures(ErrorCode::kDeadlineExceeded) == 20; }, absl::Seconds(5)));
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(100));
  for (const UniqueFd& c : clients) EXPECT_TRUE(ClosedByServer(c.get(), absl::Seconds(1)));
  EXPECT_EQ(pool_->pending(), 0u);
}

TEST_F(HandshakePoolTest, PerSourceCapEvictsThatSourcesOldestOnly) {
  Start({absl::Seconds(30), 64, 2});
  SocketPair a1 = MakeSocketPair(), a2 = MakeSocketPair(), b1 = MakeSocketPair(), a3 = MakeSocketPair();
  pool_->Add(std::move(a1.server), "10.0.0.1:1");
  pool_->Add(std::move(a2.server), "10.0.0.1:2");
  pool_->Add(std::move(b1.server), "10.0.0.2:1");
  ASSERT_TRUE(WaitFor([&] { return pool_->pending() == 3; }, absl::Seconds(5)));
  EXPECT_EQ(failures(), 0u);
  pool_->Add(std::move(a3.server), "10.0.0.1:3");
  ASSERT_TRUE(WaitFor([&] { return failures(ErrorCode::kUnavailable) == 1; }, absl::Seconds(5)));
  EXPECT_TRUE(ClosedByServer(a1.client.get(), absl::Seconds(5))) << "the oldest from 10.0.0.1 goes";
  EXPECT_FALSE(ClosedByServer(b1.client.get(), absl::Milliseconds(50)));
  EXPECT_FALSE(ClosedByServer(a2.client.get(), absl::Milliseconds(50)));
  EXPECT_EQ(pool_->pending(), 3u);
}

TEST_F(HandshakePoolTest, OverallCapEvictsTheOldest) {
  Start({absl::Seconds(30), 3, 3});
  std::vector<SocketPair> pairs;
  for (int i = 0; i < 4; ++i) {
    pairs.push_back(MakeSocketPair());
    pool_->Add(std::move(pairs.back().server), "10.0.0." + std::to_string(i) + ":1");
  }
  ASSERT_TRUE(WaitFor([&] { return failures(ErrorCode::kUnavailable) == 1; }, absl::Seconds(5)));
  EXPECT_TRUE(ClosedByServer(pairs[0].client.get(), absl::Seconds(5)));
  EXPECT_EQ(pool_->pending(), 3u);
}

TEST_F(HandshakePoolTest, AFloodFromTheSameSourceNeverLocksOutARealPeer) {
  Start({absl::Seconds(30), 16, 8});
  std::vector<UniqueFd> flood;
  for (int i = 0; i < 300; ++i) {
    SocketPair p = MakeSocketPair();
    pool_->Add(std::move(p.server), "127.0.0.1:" + std::to_string(1000 + i));
    flood.push_back(std::move(p.client));
  }
  SocketPair real = MakeSocketPair();
  pool_->Add(std::move(real.server), "127.0.0.1:9999");
  const absl::Time start = absl::Now();
  EXPECT_THAT(AuthenticateAsClient(real.client.get(), kPoolSecret, absl::Now() + absl::Seconds(5)), IsOk());
  EXPECT_LT(absl::Now() - start, absl::Seconds(1));
  ASSERT_TRUE(WaitFor([&] { return authenticated() == 1; }, absl::Seconds(5)));
  // The real peer took the per-source slot of the oldest of the 8 newest silent ones.
  EXPECT_EQ(pool_->pending(), 7u);
  EXPECT_EQ(failures(ErrorCode::kUnavailable), 300u - 7u) << "all but the newest 7 silent ones were evicted";
}

TEST_F(HandshakePoolTest, ShutdownClosesPendingHandshakesWithoutCallingBack) {
  Start({absl::Seconds(30), 8, 8});
  SocketPair p = MakeSocketPair();
  pool_->Add(std::move(p.server), "10.0.0.1:1");
  ASSERT_TRUE(WaitFor([&] { return pool_->pending() == 1; }, absl::Seconds(5)));
  pool_->Shutdown();
  EXPECT_TRUE(ClosedByServer(p.client.get(), absl::Seconds(5)));
  EXPECT_EQ(failures(), 0u);
  EXPECT_EQ(pool_->pending(), 0u);
  SocketPair late = MakeSocketPair();
  pool_->Add(std::move(late.server), "10.0.0.1:2");
  EXPECT_TRUE(ClosedByServer(late.client.get(), absl::Seconds(5))) << "Add after Shutdown closes the fd";
  pool_->Shutdown();  // idempotent
}

}  // namespace
}  // namespace rplasma::auth
