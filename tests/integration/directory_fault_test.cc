// RedisDirectory when Redis dies, hangs, restarts or was never there.
#include <signal.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "bench-mpi/launch/child_process.h"
#include "bench-mpi/launch/process_fds.h"
#include "bench-mpi/launch/redis_server.h"
#include "manager/directory/redis_directory.h"
#include "tests/integration/directory_test_values.h"
#include "tests/support/skip.h"
#include "tests/support/status_matchers.h"
#include "tests/support/wait_for.h"

namespace rplasma {
namespace {

using ::rplasma::testing::HasErrorCode;
using ::rplasma::testing::kFailFastSlack;
using ::testing::HasSubstr;

class RedisDirectoryFaultTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RPLASMA_SKIP_IF_NO_REDIS_SERVER();
    ASSERT_OK_AND_ASSIGN(redis_, bench::RedisServer::Start());
    options_.address = redis_->address();
    options_.op_timeout = absl::Milliseconds(300);
  }

  std::unique_ptr<bench::RedisServer> redis_;
  RedisDirectoryOptions options_;
};

TEST_F(RedisDirectoryFaultTest, OperationsFailFastWithUnavailableWhileRedisIsDown) {
  ASSERT_OK_AND_ASSIGN(auto directory, RedisDirectory::Create(options_));
  ASSERT_OK(directory->RegisterNode(NodeRecord{"node-a", "127.0.0.1:1", "", 1}));
  ObjectID id = ObjectID::FromLabel("down");
  ASSERT_OK(directory->PublishObject(id, ObjectLocation{"", {1, 0, 1, 1}}));

  redis_->Kill();
  for (int i = 0; i < 12; ++i) {
    absl::Time start = absl::Now();
    absl::Status status;
    switch (i % 6) {
      case 0: status = directory->Heartbeat(); break;
      case 1: status = directory->PublishObject(id, ObjectLocation{"", {1, 0, 2, 1}}); break;
      case 2: status = directory->Lookup({id}).status(); break;
      case 3: status = directory->RemoveObject(id); break;
      case 4: status = directory->GetNode("node-a").status(); break;
      case 5: status = directory->SweepExpiredNodes(); break;
    }
    absl::Duration took = absl::Now() - start;
    EXPECT_THAT(status, HasErrorCode(ErrorCode::kUnavailable)) << i;
    EXPECT_THAT(std::string(status.message()), HasSubstr(redis_->address())) << i;
    EXPECT_LT(took, options_.op_timeout + kFailFastSlack) << i;
    // Pacing, not waiting: 12 calls 20 ms apart span several reconnect backoffs (50 ms doubling),
    // so both kinds of failure are timed — calls inside a backoff fail at once, calls after it
    // try to reconnect to the dead address.
    absl::SleepFor(absl::Milliseconds(20));
  }
  EXPECT_GE(directory->stats()["errors"], 12u);
}

TEST_F(RedisDirectoryFaultTest, OperationsTimeOutWithinOpTimeoutWhenRedisHangs) {
  ASSERT_OK_AND_ASSIGN(auto directory, RedisDirectory::Create(options_));
  ASSERT_OK(directory->RegisterNode(NodeRecord{"node-a", "", "", 1}));
  ASSERT_EQ(::kill(redis_->pid(), SIGSTOP), 0);
  for (int i = 0; i < 3; ++i) {
    absl::Time start = absl::Now();
    absl::Status status = directory->Lookup({ObjectID::FromLabel("hang")}).status();
    absl::Duration took = absl::Now() - start;
    EXPECT_THAT(status, HasErrorCode(ErrorCode::kUnavailable)) << i;
    EXPECT_LT(took, options_.op_timeout + kFailFastSlack) << i;
  }
  ASSERT_EQ(::kill(redis_->pid(), SIGCONT), 0);
  EXPECT_TRUE(testing::WaitFor([&] { return directory->Heartbeat().ok(); }, absl::Seconds(10)));
}

TEST_F(RedisDirectoryFaultTest, ReconnectAfterRestartRepublishesTheNodeAndRunsTheCallback) {
  ASSERT_OK_AND_ASSIGN(auto directory, RedisDirectory::Create(options_));
  ASSERT_OK(directory->RegisterNode(NodeRecord{"node-a", "127.0.0.1:7000", "", 9}));
  std::vector<std::pair<ObjectID, ObjectLocation>> held;
  for (int i = 0; i < 20; ++i)
    held.emplace_back(ObjectID::FromLabel("held-" + std::to_string(i)), ObjectLocation{"", {1, 0, 5, 6}});
  ASSERT_OK(directory->PublishObjects(held));

  // The owner's republish hook: what the manager does after Redis comes back.
  std::atomic<int> callbacks{0};
  std::atomic<bool> republished{false};
  RedisDirectory* raw = directory.get();
  directory->SetReconnectCallback([&] {
    callbacks++;
    republished = raw->PublishObjects(held).ok();
  });

  redis_->Kill();
  EXPECT_THAT(directory->Heartbeat(), HasErrorCode(ErrorCode::kUnavailable));
  ASSERT_OK(redis_->Restart());  // same port, empty

  ASSERT_TRUE(testing::WaitFor([&] { return directory->Heartbeat().ok(); }, absl::Seconds(10)));
  EXPECT_EQ(callbacks.load(), 1);
  EXPECT_TRUE(republished.load());
  EXPECT_GE(directory->stats()["reconnects"], 1u);

  // A fresh client sees the node record and every object again.
  ASSERT_OK_AND_ASSIGN(auto observer, RedisDirectory::Create(options_));
  ASSERT_OK_AND_ASSIGN(NodeRecord record, observer->GetNode("node-a"));
  EXPECT_EQ(record.epoch, 9u);
  std::vector<ObjectID> ids;
  for (const auto& [id, location] : held) ids.push_back(id);
  ASSERT_OK_AND_ASSIGN(auto found, observer->Lookup(ids));
  for (size_t i = 0; i < found.size(); ++i) EXPECT_EQ(found[i].size(), 1u) << i;
}

TEST_F(RedisDirectoryFaultTest, ReconnectAttemptsBackOffWhileRedisStaysDown) {
  options_.reconnect_backoff_initial = absl::Seconds(1);  // long enough to observe on a slow machine
  ASSERT_OK_AND_ASSIGN(auto directory, RedisDirectory::Create(options_));
  redis_->Kill();
  // First failure: the dead connection, then one refused connect. Next call: inside the backoff,
  // it fails without touching the network and says when it will try again.
  EXPECT_THAT(directory->GetNode("x").status(), HasErrorCode(ErrorCode::kUnavailable));
  absl::Status second = directory->GetNode("x").status();
  EXPECT_THAT(second, HasErrorCode(ErrorCode::kUnavailable));
  EXPECT_THAT(std::string(second.message()), HasSubstr("next reconnect attempt"));
  EXPECT_THAT(std::string(second.message()), HasSubstr(redis_->address()));
}

TEST_F(RedisDirectoryFaultTest, CreateFailsClearlyWhenRedisIsUnreachable) {
  const std::string address = redis_->address();
  redis_->Kill();
  absl::Time start = absl::Now();
  absl::StatusOr<std::unique_ptr<RedisDirectory>> directory = RedisDirectory::Create(options_);
  EXPECT_LT(absl::Now() - start, options_.op_timeout + kFailFastSlack);
  EXPECT_THAT(directory, HasErrorCode(ErrorCode::kUnavailable));
  EXPECT_THAT(std::string(directory.status().message()), HasSubstr(address));

  bench::ScratchDir dir = bench::ScratchDir::CreateOrDie();
  RedisDirectoryOptions unix_options = options_;
  unix_options.address = "unix:" + dir.Join("missing.sock");
  absl::StatusOr<std::unique_ptr<RedisDirectory>> over_unix = RedisDirectory::Create(unix_options);
  EXPECT_THAT(over_unix, HasErrorCode(ErrorCode::kUnavailable));
  EXPECT_THAT(std::string(over_unix.status().message()), HasSubstr("missing.sock"));

  RedisDirectoryOptions bad = options_;
  bad.address = "no-port";
  EXPECT_THAT(RedisDirectory::Create(bad), HasErrorCode(ErrorCode::kInvalidArgument));
}

TEST_F(RedisDirectoryFaultTest, RepeatedCrashesAndReconnectsLeakNoFileDescriptors) {
  options_.reconnect_backoff_initial = absl::Milliseconds(1);
  options_.reconnect_backoff_max = absl::Milliseconds(5);
  const int baseline = bench::CountOpenFds();
  {
    ASSERT_OK_AND_ASSIGN(auto directory, RedisDirectory::Create(options_));
    ASSERT_OK(directory->RegisterNode(NodeRecord{"node-a", "", "", 1}));
    std::atomic<int> callbacks{0};
    directory->SetReconnectCallback([&] { callbacks++; });
    for (int cycle = 0; cycle < 10; ++cycle) {
      redis_->Kill();
      EXPECT_THAT(directory->Heartbeat(), HasErrorCode(ErrorCode::kUnavailable));
      ASSERT_OK(redis_->Restart());
      ASSERT_TRUE(testing::WaitFor([&] { return directory->Heartbeat().ok(); }, absl::Seconds(5))) << cycle;
    }
    EXPECT_EQ(callbacks.load(), 10);
    EXPECT_EQ(directory->stats()["reconnects"], 10u);
  }
  EXPECT_EQ(bench::CountOpenFds(), baseline);
}

TEST_F(RedisDirectoryFaultTest, UnixSocketAddressesWork) {
  bench::ScratchDir dir = bench::ScratchDir::CreateOrDie();
  bench::RedisServerOptions server_options;
  server_options.extra_args = {"--unixsocket", dir.Join("redis.sock"), "--unixsocketperm", "700"};
  ASSERT_OK_AND_ASSIGN(auto redis, bench::RedisServer::Start(server_options));
  RedisDirectoryOptions options = options_;
  options.address = "unix:" + dir.Join("redis.sock");
  ASSERT_OK_AND_ASSIGN(auto directory, RedisDirectory::Create(options));
  ASSERT_OK(directory->RegisterNode(NodeRecord{"node-u", "", "", 1}));
  EXPECT_OK(directory->GetNode("node-u"));
}

}  // namespace
}  // namespace rplasma
