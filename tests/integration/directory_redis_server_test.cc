// The bench::RedisServer test helper: a real redis-server on a free loopback port that tests can kill
// and restart on the same port.
#include <gtest/gtest.h>

#include "bench-mpi/launch/redis_server.h"
#include "tests/support/skip.h"
#include "tests/support/status_matchers.h"

namespace rplasma::testing {
namespace {

TEST(RedisServerTest, StartedServerAnswersPingOnLoopback) {
  RPLASMA_SKIP_IF_NO_REDIS_SERVER();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<bench::RedisServer> redis, bench::RedisServer::Start());
  EXPECT_EQ(redis->address(), "127.0.0.1:" + std::to_string(redis->port()));
  EXPECT_GT(redis->pid(), 0);
  EXPECT_TRUE(redis->running());
  EXPECT_TRUE(redis->Ping());
}

TEST(RedisServerTest, KilledServerStopsAnsweringAndRestartsOnTheSamePort) {
  RPLASMA_SKIP_IF_NO_REDIS_SERVER();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<bench::RedisServer> redis, bench::RedisServer::Start());
  const std::string address = redis->address();
  const pid_t first_pid = redis->pid();

  redis->Kill();
  EXPECT_FALSE(redis->running());
  EXPECT_EQ(redis->pid(), -1);
  EXPECT_FALSE(redis->Ping());

  ASSERT_OK(redis->Restart());
  EXPECT_EQ(redis->address(), address);
  EXPECT_NE(redis->pid(), first_pid);
  EXPECT_TRUE(redis->Ping());
}

TEST(RedisServerTest, TwoServersGetDifferentPorts) {
  RPLASMA_SKIP_IF_NO_REDIS_SERVER();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<bench::RedisServer> a, bench::RedisServer::Start());
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<bench::RedisServer> b, bench::RedisServer::Start());
  EXPECT_NE(a->port(), b->port());
  EXPECT_TRUE(a->Ping());
  EXPECT_TRUE(b->Ping());
}

TEST(RedisServerTest, MissingBinaryIsAClearError) {
  bench::RedisServerOptions options;
  options.binary = "/nonexistent/redis-server";
  absl::StatusOr<std::unique_ptr<bench::RedisServer>> redis = bench::RedisServer::Start(options);
  EXPECT_THAT(redis, HasErrorCode(ErrorCode::kUnavailable));
  EXPECT_THAT(redis.status().message(), ::testing::HasSubstr("redis-server not found"));
}

}  // namespace
}  // namespace rplasma::testing
