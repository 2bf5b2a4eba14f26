// RedisSlotMap::Parse over CLUSTER SLOTS replies given as RESP bytes: well-formed maps, and
// malformed ones refused (never a crash, never a slot out of range).
#include "manager/directory/redis_slot_map.h"

#include <initializer_list>
#include <string>

#include "absl/strings/str_cat.h"
#include <gtest/gtest.h>

#include "tests/support/status_matchers.h"

namespace rplasma {
namespace {

using ::rplasma::testing::HasErrorCode;
using ::testing::ElementsAre;

std::string Int(int64_t n) { return absl::StrCat(":", n, "\r\n"); }
std::string Bulk(const std::string& s) { return absl::StrCat("$", s.size(), "\r\n", s, "\r\n"); }
std::string Arr(std::initializer_list<std::string> elements) {
  std::string out = absl::StrCat("*", elements.size(), "\r\n");
  for (const std::string& e : elements) out += e;
  return out;
}
std::string Node(const std::string& host, int64_t port) { return Arr({Bulk(host), Int(port), Bulk("id")}); }

absl::StatusOr<RedisSlotMap> ParseResp(const std::string& resp, const std::string& queried_host = "10.0.0.9") {
  absl::StatusOr<RedisReply> reply = RedisReply::Parse(resp);
  if (!reply.ok()) return reply.status();
  return RedisSlotMap::Parse(reply->view(), queried_host);
}

TEST(RedisSlotMapTest, ParsesRangesWithTheirMastersAndReplicas) {
  const std::string resp = Arr({Arr({Int(0), Int(5460), Node("127.0.0.1", 7000), Node("127.0.0.1", 7003)}),
                                Arr({Int(5461), Int(16383), Node("", 7001)}),  // "": the node that answered
                                Arr({Int(100), Int(100), Node("::1", 7002)})});
  ASSERT_OK_AND_ASSIGN(RedisSlotMap map, ParseResp(resp));
  EXPECT_EQ(map.ServedSlots(), 16384);
  EXPECT_EQ(*map.MasterOf(0), "127.0.0.1:7000");
  EXPECT_EQ(*map.MasterOf(99), "127.0.0.1:7000");
  EXPECT_EQ(*map.MasterOf(100), "[::1]:7002");  // a later range wins
  EXPECT_EQ(*map.MasterOf(5461), "10.0.0.9:7001");
  EXPECT_EQ(*map.MasterOf(16383), "10.0.0.9:7001");
  EXPECT_THAT(map.KnownAddresses(), ElementsAre("127.0.0.1:7000", "10.0.0.9:7001", "[::1]:7002", "127.0.0.1:7003"));
  EXPECT_THAT(map.ServingMasters(), ElementsAre("127.0.0.1:7000", "10.0.0.9:7001", "[::1]:7002"));
  map.Assign(100, "127.0.0.1:7000");  // [::1]:7002's only slot moves away
  EXPECT_THAT(map.ServingMasters(), ElementsAre("127.0.0.1:7000", "10.0.0.9:7001"));
}

TEST(RedisSlotMapTest, AnEmptyReplyServesNoSlotAndAnUnknownEndpointLeavesItsRangeUnserved) {
  ASSERT_OK_AND_ASSIGN(RedisSlotMap empty, ParseResp("*0\r\n"));
  EXPECT_EQ(empty.ServedSlots(), 0);
  ASSERT_OK_AND_ASSIGN(RedisSlotMap unknown, ParseResp(Arr({Arr({Int(0), Int(9), Node("?", 7000)})})));
  EXPECT_EQ(unknown.ServedSlots(), 0);
  EXPECT_EQ(unknown.MasterOf(0), nullptr);
}

TEST(RedisSlotMapTest, MalformedRepliesAreProtocolErrors) {
  for (const std::string& bad : {
           Bulk("not an array"), Arr({Int(1)}),                            // a range that is no array
           Arr({Arr({Int(0), Int(10)})}),                                  // no master
           Arr({Arr({Int(-1), Int(10), Node("a", 1)})}),                   // slot below 0
           Arr({Arr({Int(0), Int(16384), Node("a", 1)})}),                 // slot beyond the last
           Arr({Arr({Int(10), Int(0), Node("a", 1)})}),                    // first > last
           Arr({Arr({Bulk("0"), Int(10), Node("a", 1)})}),                 // slot as a string
           Arr({Arr({Int(0), Int(10), Node("a", 0)})}),                    // port 0
           Arr({Arr({Int(0), Int(10), Node("a", 65536)})}),                // port too big
           Arr({Arr({Int(0), Int(10), Arr({Bulk("a")})})}),                // node without a port
           Arr({Arr({Int(0), Int(10), Arr({Int(1), Int(2)})})}),           // host not a string
           Arr({Arr({Int(0), Int(10), Node("a b", 1)})}),                  // host with a space
           Arr({Arr({Int(0), Int(10), Node(std::string(300, 'h'), 1)})}),  // host too long
           Arr({Arr({Int(0), Int(10), Node("a", 1), Node("b", -5)})}),     // a bad replica
       }) {
    EXPECT_THAT(ParseResp(bad), HasErrorCode(ErrorCode::kProtocolError)) << bad;
  }
}

TEST(RedisSlotMapTest, RespThatIsNotOneWholeReplyIsRefused) {
  EXPECT_THAT(RedisReply::Parse("*2\r\n:1\r\n"), HasErrorCode(ErrorCode::kProtocolError));  // incomplete
  EXPECT_THAT(RedisReply::Parse(":1\r\n:2\r\n"), HasErrorCode(ErrorCode::kProtocolError));  // two replies
  EXPECT_THAT(RedisReply::Parse("?what\r\n"), HasErrorCode(ErrorCode::kProtocolError));     // no type
  ASSERT_OK_AND_ASSIGN(RedisReply error, RedisReply::Parse("-MOVED 1 a:1\r\n"));
  EXPECT_TRUE(error.view().is_error());
  EXPECT_EQ(error.view().str(), "MOVED 1 a:1");
}

}  // namespace
}  // namespace rplasma
