// DirectoryCodec: key schema and bounded decoding of values read from Redis.
#include "manager/directory/directory_codec.h"

#include <string>

#include <gtest/gtest.h>

#include "tests/support/status_matchers.h"

namespace rplasma {
namespace {

using ::rplasma::testing::HasErrorCode;

TEST(DirectoryCodecTest, KeysFollowTheDocumentedSchema) {
  DirectoryCodec codec("rp");
  ObjectID id = ObjectID::FromLabel("x");
  EXPECT_EQ(codec.NodeKey("n1"), "rp:node:n1");
  EXPECT_EQ(codec.NodesKey(), "rp:nodes");
  EXPECT_EQ(codec.ObjectKey(id), "rp:obj:" + id.Hex());
  EXPECT_EQ(codec.NodeObjectsKey("n1"), "rp:node-objects:n1");
}

TEST(DirectoryCodecTest, NodeIdsAreCheckedAgainstTheirCharsetAndLength) {
  EXPECT_TRUE(DirectoryCodec::IsValidNodeId("host-1.example:7_a"));
  EXPECT_TRUE(DirectoryCodec::IsValidNodeId(std::string(128, 'a')));
  EXPECT_FALSE(DirectoryCodec::IsValidNodeId(""));
  EXPECT_FALSE(DirectoryCodec::IsValidNodeId(std::string(129, 'a')));
  EXPECT_FALSE(DirectoryCodec::IsValidNodeId("a b"));
  EXPECT_FALSE(DirectoryCodec::IsValidNodeId("a|b"));
  EXPECT_FALSE(DirectoryCodec::IsValidNodeId(std::string("a\0b", 3)));
  EXPECT_FALSE(DirectoryCodec::IsValidNodeId("\xc3\xa9"));
}

TEST(DirectoryCodecTest, NumbersAreDecimalDigitsThatFitIn64Bits) {
  EXPECT_EQ(DirectoryCodec::ParseUint64("0").value(), 0u);
  EXPECT_EQ(DirectoryCodec::ParseUint64("18446744073709551615").value(), UINT64_MAX);
  EXPECT_THAT(DirectoryCodec::ParseUint64("18446744073709551616"), HasErrorCode(ErrorCode::kProtocolError));
  EXPECT_THAT(DirectoryCodec::ParseUint64("99999999999999999999"), HasErrorCode(ErrorCode::kProtocolError));
  EXPECT_THAT(DirectoryCodec::ParseUint64("000000000000000000001"), HasErrorCode(ErrorCode::kProtocolError));
  for (const char* bad : {"", "-1", "+1", " 1", "1 ", "1a", "0x10", "1e3", "1.0"}) {
    EXPECT_THAT(DirectoryCodec::ParseUint64(bad), HasErrorCode(ErrorCode::kProtocolError)) << bad;
  }
}

TEST(DirectoryCodecTest, LocationRoundTripsThroughItsEncoding) {
  ObjectLocation location{"node-a", {123, 4, UINT64_MAX, 987654321}};
  std::string value = DirectoryCodec::EncodeLocation(location);
  EXPECT_EQ(value, "123,4,18446744073709551615,987654321");
  ASSERT_OK_AND_ASSIGN(ObjectLocation decoded, DirectoryCodec::DecodeLocation("node-a", value));
  EXPECT_EQ(decoded.node_id, "node-a");
  EXPECT_EQ(decoded.object.data_size, 123u);
  EXPECT_EQ(decoded.object.metadata_size, 4u);
  EXPECT_EQ(decoded.object.generation, UINT64_MAX);
  EXPECT_EQ(decoded.object.checksum, 987654321u);
}

TEST(DirectoryCodecTest, MalformedLocationsAreRejected) {
  for (const std::string& bad :
       {std::string(""), std::string("1,2,3"), std::string("1,2,3,4,5"), std::string("1,,3,4"), std::string("a,2,3,4"),
        std::string("-1,2,3,4"), std::string("1,2,3,18446744073709551616"), std::string(100, '1'),
        std::string(1 << 20, ','), std::string("1,2,3,4\n")}) {
    EXPECT_THAT(DirectoryCodec::DecodeLocation("n", bad), HasErrorCode(ErrorCode::kProtocolError)) << bad.substr(0, 40);
  }
  EXPECT_THAT(DirectoryCodec::DecodeLocation("bad node", "1,2,3,4"), HasErrorCode(ErrorCode::kProtocolError));
  EXPECT_THAT(DirectoryCodec::DecodeLocation("", "1,2,3,4"), HasErrorCode(ErrorCode::kProtocolError));
}

TEST(DirectoryCodecTest, NodeRecordRoundTripsIncludingEmptyAddresses) {
  NodeRecord node{"n1", "10.0.0.1:7000", "", 1700000000123};
  std::string value = DirectoryCodec::EncodeNodeRecord(node);
  EXPECT_EQ(value, "epoch=1700000000123|tcp=10.0.0.1:7000|verbs=");
  ASSERT_OK_AND_ASSIGN(NodeRecord decoded, DirectoryCodec::DecodeNodeRecord("n1", value));
  EXPECT_EQ(decoded.node_id, "n1");
  EXPECT_EQ(decoded.tcp_address, "10.0.0.1:7000");
  EXPECT_EQ(decoded.verbs_address, "");
  EXPECT_EQ(decoded.epoch, 1700000000123u);

  NodeRecord v6{"n2", "[::1]:7000", "[fe80::1%eth0]:7001", 0};
  ASSERT_OK_AND_ASSIGN(NodeRecord decoded_v6,
                       DirectoryCodec::DecodeNodeRecord("n2", DirectoryCodec::EncodeNodeRecord(v6)));
  EXPECT_EQ(decoded_v6.verbs_address, "[fe80::1%eth0]:7001");
}

TEST(DirectoryCodecTest, MalformedNodeRecordsAreRejected) {
  for (const std::string& bad :
       {std::string(""), std::string("garbage"), std::string("epoch=1|tcp=a:1"),
        std::string("epoch=1|tcp=a:1|verbs=b:2|x=1"), std::string("tcp=a:1|epoch=1|verbs=b:2"),
        std::string("epoch=|tcp=a:1|verbs="), std::string("epoch=x|tcp=a:1|verbs="),
        std::string("epoch=1|tcp=a b:1|verbs="), std::string("epoch=1|tcp=" + std::string(300, 'a') + "|verbs="),
        std::string(1 << 16, 'e')}) {
    EXPECT_THAT(DirectoryCodec::DecodeNodeRecord("n", bad), HasErrorCode(ErrorCode::kProtocolError))
        << bad.substr(0, 40);
  }
}

TEST(DirectoryCodecTest, ObjectMembersAreFortyHexDigits) {
  ObjectID id = ObjectID::FromLabel("member");
  ASSERT_OK_AND_ASSIGN(ObjectID decoded, DirectoryCodec::DecodeObjectMember(id.Hex()));
  EXPECT_EQ(decoded, id);
  EXPECT_THAT(DirectoryCodec::DecodeObjectMember("abc"), HasErrorCode(ErrorCode::kProtocolError));
  EXPECT_FALSE(DirectoryCodec::DecodeObjectMember(std::string(40, 'g')).ok());
  EXPECT_FALSE(DirectoryCodec::DecodeObjectMember(std::string(2000, 'a')).ok());
}

}  // namespace
}  // namespace rplasma
