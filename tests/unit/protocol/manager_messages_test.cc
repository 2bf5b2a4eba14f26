// The manager's client protocol: a fetch reply carries one code and one message per id, the
// messages of OK outcomes (empty) sharing one string on the wire.
#include "protocol/manager_messages.h"

#include <string>

#include <gtest/gtest.h>

#include "protocol/base/status.h"
#include "tests/support/status_matchers.h"

namespace rplasma {
namespace {

using ::rplasma::testing::HasErrorCode;

ManagerReply FetchReplyOf(ManagerFetchReply fetch) {
  ManagerReply reply;
  reply.request_id = 42;
  reply.body = std::move(fetch);
  return reply;
}

TEST(ManagerMessagesTest, AFetchReplyKeepsEveryIdsCodeAndMessageInOrder) {
  ManagerFetchReply fetch;
  for (int i = 0; i < 1000; ++i) {
    const bool failed = i % 250 == 7;
    fetch.codes.push_back(failed ? ErrorCode::kObjectNotFound : ErrorCode::kOk);
    fetch.messages.push_back(failed ? "fetch " + std::to_string(i) + ": not sealed anywhere" : "");
  }
  const std::string wire = EncodeManagerReply(FetchReplyOf(fetch));
  // 1000 codes (2 bytes) and message offsets (4 bytes), one shared empty string, four messages:
  // far under a string of its own for each OK outcome (12 bytes apiece more).
  EXPECT_LT(wire.size(), 1000u * 6 + 4 * 64 + 256);
  ASSERT_OK_AND_ASSIGN(ManagerReply decoded, DecodeManagerReply(wire));
  EXPECT_EQ(decoded.request_id, 42u);
  const auto* got = std::get_if<ManagerFetchReply>(&decoded.body);
  ASSERT_NE(got, nullptr);
  EXPECT_EQ(got->codes, fetch.codes);
  EXPECT_EQ(got->messages, fetch.messages);
}

TEST(ManagerMessagesTest, ALongMessageIsCutToTheLimit) {
  ManagerFetchReply fetch;
  fetch.codes = {ErrorCode::kUnavailable, ErrorCode::kOk};
  fetch.messages = {std::string(3 * kMaxFetchMessageBytes, 'x'), ""};
  ASSERT_OK_AND_ASSIGN(ManagerReply decoded, DecodeManagerReply(EncodeManagerReply(FetchReplyOf(fetch))));
  const auto& got = std::get<ManagerFetchReply>(decoded.body);
  EXPECT_EQ(got.messages[0], std::string(kMaxFetchMessageBytes, 'x'));
  EXPECT_EQ(got.messages[1], "");
}

TEST(ManagerMessagesTest, GarbageIsAProtocolError) {
  EXPECT_THAT(DecodeManagerReply("not a flatbuffer at all"), HasErrorCode(ErrorCode::kProtocolError));
  EXPECT_THAT(DecodeManagerReply(""), HasErrorCode(ErrorCode::kProtocolError));
}

}  // namespace
}  // namespace rplasma
