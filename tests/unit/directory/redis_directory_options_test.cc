// RedisDirectoryOptions validation and Redis address parsing (no server needed).
#include "manager/directory/redis_directory_options.h"

#include <gtest/gtest.h>

#include "manager/directory/redis_connection.h"
#include "tests/support/status_matchers.h"

namespace rplasma {
namespace {

using ::rplasma::testing::HasErrorCode;

TEST(RedisAddressTest, HostPortAndUnixSocketAddressesParse) {
  ASSERT_OK_AND_ASSIGN(RedisAddress tcp, ParseRedisAddress("127.0.0.1:6379"));
  EXPECT_EQ(tcp.host, "127.0.0.1");
  EXPECT_EQ(tcp.port, 6379);
  EXPECT_TRUE(tcp.unix_path.empty());

  ASSERT_OK_AND_ASSIGN(RedisAddress v6, ParseRedisAddress("[::1]:7000"));
  EXPECT_EQ(v6.host, "::1");
  EXPECT_EQ(v6.port, 7000);

  ASSERT_OK_AND_ASSIGN(RedisAddress named, ParseRedisAddress("redis.example-1:1"));
  EXPECT_EQ(named.host, "redis.example-1");

  ASSERT_OK_AND_ASSIGN(RedisAddress unix_socket, ParseRedisAddress("unix:/run/redis.sock"));
  EXPECT_EQ(unix_socket.unix_path, "/run/redis.sock");
  EXPECT_TRUE(unix_socket.host.empty());
}

TEST(RedisAddressTest, MalformedAddressesAreInvalidArguments) {
  for (const char* bad : {"", "localhost", ":6379", "host:", "host:0", "host:65536", "host:-1", "host:12a", "host:+80",
                          "[::1]", "[::1:80", "a b:80", "unix:", "unix:relative.sock", "host:123456"}) {
    EXPECT_THAT(ParseRedisAddress(bad), HasErrorCode(ErrorCode::kInvalidArgument)) << bad;
  }
  EXPECT_THAT(ParseRedisAddress("unix:/" + std::string(200, 'a')), HasErrorCode(ErrorCode::kInvalidArgument));
}

TEST(RedisDirectoryOptionsTest, DefaultsAreValid) { EXPECT_OK(RedisDirectoryOptions().Validate()); }

TEST(RedisDirectoryOptionsTest, AddressMayBeASeedListOfARedisCluster) {
  RedisDirectoryOptions o;
  o.address = "10.0.0.1:7000,10.0.0.2:7000,[::1]:7001";
  EXPECT_OK(o.Validate());
  for (const char* bad : {"10.0.0.1:7000,", "10.0.0.1:7000,,10.0.0.2:7000", "10.0.0.1:7000,nope"}) {
    o.address = bad;
    EXPECT_THAT(o.Validate(), HasErrorCode(ErrorCode::kInvalidArgument)) << bad;
  }
}

TEST(RedisDirectoryOptionsTest, EachBadFieldIsNamed) {
  auto expect_bad = [](RedisDirectoryOptions options, const char* field) {
    absl::Status status = options.Validate();
    EXPECT_THAT(status, HasErrorCode(ErrorCode::kInvalidArgument)) << field;
    EXPECT_THAT(std::string(status.message()), ::testing::HasSubstr(field));
  };
  RedisDirectoryOptions o;
  o.address = "nope";
  expect_bad(o, "nope");
  o = {};
  o.node_ttl = absl::Milliseconds(1);
  expect_bad(o, "node_ttl");
  o = {};
  o.op_timeout = absl::ZeroDuration();
  expect_bad(o, "op_timeout");
  o = {};
  o.reconnect_backoff_max = absl::Milliseconds(10);
  expect_bad(o, "reconnect_backoff_max");
  o = {};
  o.key_prefix = "bad prefix";
  expect_bad(o, "key_prefix");
  o = {};
  o.max_pipeline = 1;
  expect_bad(o, "max_pipeline");
}

}  // namespace
}  // namespace rplasma
