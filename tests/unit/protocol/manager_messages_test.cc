// The manager's client protocol: a fetch reply carries one code and one message per id, the
// messages of OK outcomes (empty) sharing one string on the wire; a fetch request carries the
// protocol its caller forces, and one it does not know is refused.
#include "protocol/manager_messages.h"

#include <string>

#include "flatbuffers/flatbuffers.h"
#include <gtest/gtest.h>

#include "protocol/base/status.h"
#include "protocol/manager_generated.h"
#include "protocol/object_id_fb.h"
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

TEST(ManagerMessagesTest, AFetchRequestCarriesTheProtocolItsCallerForces) {
  for (ForcedProtocol protocol : {ForcedProtocol::kNone, ForcedProtocol::kGet, ForcedProtocol::kPin}) {
    ManagerFetchRequest fetch;
    fetch.ids = {ObjectID::Random(), ObjectID::Random()};
    fetch.timeout_ms = 5000;
    fetch.hint_node = "rank1.3fa9c2d1";
    fetch.protocol = protocol;
    ASSERT_OK_AND_ASSIGN(ManagerRequest decoded, DecodeManagerRequest(EncodeManagerRequest({7, fetch})));
    const auto& got = std::get<ManagerFetchRequest>(decoded.body);
    EXPECT_EQ(got.protocol, protocol) << ForcedProtocolName(protocol);
    EXPECT_EQ(got.ids, fetch.ids);
    EXPECT_EQ(got.hint_node, fetch.hint_node);
  }
}

TEST(ManagerMessagesTest, AFetchRequestForcingAnUnknownProtocolIsRefused) {
  flatbuffers::FlatBufferBuilder b;
  const std::vector<ObjectID> ids = {ObjectID::Random()};
  auto body =
      mfb::CreateFetchRequest(b, ObjectIdVectorToFb(b, ids), 1000, 0, false, static_cast<mfb::ForcedProtocolFb>(3));
  b.Finish(mfb::CreateManagerRequest(b, 1, mfb::ManagerRequestBody::FetchRequest, body.Union()));
  const std::string wire(reinterpret_cast<const char*>(b.GetBufferPointer()), b.GetSize());
  EXPECT_THAT(DecodeManagerRequest(wire), HasErrorCode(ErrorCode::kInvalidArgument));
}

TEST(ManagerMessagesTest, GarbageIsAProtocolError) {
  EXPECT_THAT(DecodeManagerReply("not a flatbuffer at all"), HasErrorCode(ErrorCode::kProtocolError));
  EXPECT_THAT(DecodeManagerReply(""), HasErrorCode(ErrorCode::kProtocolError));
}

}  // namespace
}  // namespace rplasma
