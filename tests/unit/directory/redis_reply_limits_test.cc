// Array replies of more elements than kMaxRedisArrayElements are refused as their header is read,
// before hiredis allocates their table of element pointers: in parsed bytes and on a connection
// to a server that sends such a header (a hostile or broken "Redis"). The fuzzer found
// "*488888888", a 3.9 GB allocation from 12 bytes.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "manager/directory/redis_connection.h"
#include "manager/directory/redis_reply.h"
#include "protocol/base/unique_fd.h"
#include "tests/support/status_matchers.h"

namespace rplasma {
namespace {

using ::rplasma::testing::HasErrorCode;
using ::testing::HasSubstr;

TEST(RedisReplyLimitsTest, AnArrayOfMoreElementsThanAllowedIsRefusedAtItsHeader) {
  const absl::StatusOr<RedisReply> huge = RedisReply::Parse("*2\r\n*488888888\r\n:0\r\n");
  EXPECT_THAT(huge, HasErrorCode(ErrorCode::kProtocolError));
  EXPECT_THAT(huge.status().message(), HasSubstr("488888888 elements"));
  // At the limit the header is taken, and the reply waits for its elements.
  const absl::StatusOr<RedisReply> at_limit =
      RedisReply::Parse(absl::StrCat("*", kMaxRedisArrayElements, "\r\n:1\r\n"));
  EXPECT_THAT(at_limit, HasErrorCode(ErrorCode::kProtocolError));
  EXPECT_THAT(at_limit.status().message(), HasSubstr("incomplete"));
  // And a refusal is not remembered into the next, good parse.
  ASSERT_OK_AND_ASSIGN(RedisReply good, RedisReply::Parse("*1\r\n:7\r\n"));
  EXPECT_EQ(good.view().element(0).integer(), 7);
}

TEST(RedisReplyLimitsTest, AConnectionRefusesAServersHugeArrayHeaderWithAClearError) {
  UniqueFd listener(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  ASSERT_TRUE(listener);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(listener.get(), reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  ASSERT_EQ(::listen(listener.get(), 1), 0);
  socklen_t length = sizeof(address);
  ASSERT_EQ(::getsockname(listener.get(), reinterpret_cast<sockaddr*>(&address), &length), 0);
  // The "server": answers its one client's first command with a header of 488888888 elements.
  std::thread server([&] {
    UniqueFd client(::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (!client) return;
    char command[256];
    if (::read(client.get(), command, sizeof(command)) <= 0) return;
    const std::string reply = "*488888888\r\n:0\r\n";
    (void)!::write(client.get(), reply.data(), reply.size());
    (void)!::read(client.get(), command, sizeof(command));  // until the client hangs up
  });
  [&] {
    absl::StatusOr<std::unique_ptr<RedisConnection>> connection =
        RedisConnection::Connect(absl::StrCat("127.0.0.1:", ntohs(address.sin_port)), absl::Seconds(5));
    ASSERT_OK(connection.status());
    const absl::Status status = (*connection)->Pipeline({{"PING"}}, absl::Now() + absl::Seconds(5)).status();
    EXPECT_THAT(status, HasErrorCode(ErrorCode::kUnavailable));
    EXPECT_THAT(status.message(), HasSubstr("488888888 elements"));
    EXPECT_TRUE((*connection)->broken());
  }();
  ::shutdown(listener.get(), SHUT_RDWR);  // a server still in accept (the connect failed) returns
  server.join();
}

}  // namespace
}  // namespace rplasma
