// Redis Cluster hash slots, redirections and seed lists: pure functions, no Redis.
#include "manager/directory/redis_cluster_slots.h"

#include <string>

#include <gtest/gtest.h>

#include "manager/directory/redis_router.h"
#include "manager/directory/redis_slot_map.h"
#include "tests/support/status_matchers.h"

namespace rplasma {
namespace {

using ::rplasma::testing::HasErrorCode;
using ::testing::ElementsAre;

TEST(RedisClusterSlotsTest, Crc16IsTheXmodemVariant) {
  EXPECT_EQ(Crc16Xmodem("123456789"), 0x31C3);  // the check value of CRC-16/XMODEM
  EXPECT_EQ(Crc16Xmodem(""), 0);
  EXPECT_EQ(Crc16Xmodem(std::string(1, '\0')), 0);
}

TEST(RedisClusterSlotsTest, SlotsMatchWhatRedisAnswersToClusterKeyslot) {
  // Each value below is redis-server 7.0's answer to CLUSTER KEYSLOT <key>.
  EXPECT_EQ(KeyHashSlot("123456789"), 12739);
  EXPECT_EQ(KeyHashSlot("foo"), 12182);
  EXPECT_EQ(KeyHashSlot("bar"), 5061);
  EXPECT_EQ(KeyHashSlot(""), 0);
  EXPECT_EQ(KeyHashSlot("rplasma:nodes"), 3888);
  EXPECT_EQ(KeyHashSlot("rplasma:node:node-a"), 13270);
}

TEST(RedisClusterSlotsTest, OnlyTheFirstNonEmptyHashTagDecidesTheSlot) {
  EXPECT_EQ(KeyHashSlot("{user1000}.following"), 3443);
  EXPECT_EQ(KeyHashSlot("{user1000}.followers"), 3443);
  EXPECT_EQ(KeyHashSlot("foo{bar}{zap}"), KeyHashSlot("bar"));
  EXPECT_EQ(KeyHashSlot("foo{bar}{zap}"), 5061);
  EXPECT_EQ(KeyHashSlot("foo{}{bar}"), 8363);     // an empty first tag: the whole key
  EXPECT_EQ(KeyHashSlot("foo{{bar}}zap"), 4015);  // the tag is "{bar"
  EXPECT_EQ(KeyHashSlot("{}"), 15257);
  EXPECT_EQ(KeyHashSlot("a{b"), 13340);  // no closing brace: the whole key
  EXPECT_EQ(HashTagOf("x{tag}y"), "tag");
  EXPECT_EQ(HashTagOf("x{}y"), "x{}y");
}

TEST(RedisClusterSlotsTest, EverySlotIsInRange) {
  for (int i = 0; i < 100000; ++i) {
    const int slot = KeyHashSlot("key-" + std::to_string(i));
    ASSERT_GE(slot, 0);
    ASSERT_LT(slot, kRedisClusterSlots);
  }
}

TEST(RedisSlotMapTest, RedirectionsAreParsedAndMalformedOnesRejected) {
  std::optional<RedisRedirect> moved = ParseRedirect("MOVED 3999 127.0.0.1:6381", "10.0.0.9");
  ASSERT_TRUE(moved.has_value());
  EXPECT_FALSE(moved->ask);
  EXPECT_EQ(moved->slot, 3999);
  EXPECT_EQ(moved->address, "127.0.0.1:6381");

  std::optional<RedisRedirect> ask = ParseRedirect("ASK 0 :7000", "10.0.0.9");  // empty host: the answering node's
  ASSERT_TRUE(ask.has_value());
  EXPECT_TRUE(ask->ask);
  EXPECT_EQ(ask->slot, 0);
  EXPECT_EQ(ask->address, "10.0.0.9:7000");

  std::optional<RedisRedirect> v6 = ParseRedirect("MOVED 16383 [::1]:7001", "h");
  ASSERT_TRUE(v6.has_value());
  EXPECT_EQ(v6->address, "[::1]:7001");

  for (const char* bad : {"MOVED", "MOVED 16384 a:1", "MOVED -1 a:1", "MOVED 1 a", "MOVED 1 a:0", "MOVED 1 a:70000",
                          "ASK x a:1", "MOVED 1 a b:1", "ERR MOVED 1 a:1", "MOVED 1 [::1:7001", "CLUSTERDOWN down"}) {
    EXPECT_FALSE(ParseRedirect(bad, "h").has_value()) << bad;
  }
  EXPECT_FALSE(ParseRedirect("MOVED 1 " + std::string(1000, 'a') + ":1", "h").has_value());
}

TEST(RedisSlotMapTest, AnEmptyMapServesNothingAndAssignAddsAMaster) {
  RedisSlotMap map;
  EXPECT_EQ(map.ServedSlots(), 0);
  EXPECT_EQ(map.MasterOf(0), nullptr);
  map.Assign(5, "127.0.0.1:7000");
  ASSERT_NE(map.MasterOf(5), nullptr);
  EXPECT_EQ(*map.MasterOf(5), "127.0.0.1:7000");
  EXPECT_EQ(map.ServedSlots(), 1);
  map.Assign(6, "127.0.0.1:7000");
  EXPECT_THAT(map.masters(), ElementsAre("127.0.0.1:7000"));
}

TEST(RedisRouterTest, SeedListsAreCommaSeparatedAddresses) {
  ASSERT_OK_AND_ASSIGN(std::vector<std::string> one, ParseRedisSeeds("127.0.0.1:6379"));
  EXPECT_THAT(one, ElementsAre("127.0.0.1:6379"));
  ASSERT_OK_AND_ASSIGN(std::vector<std::string> three, ParseRedisSeeds("a:1,[::1]:2,unix:/tmp/r.sock"));
  EXPECT_THAT(three, ElementsAre("a:1", "[::1]:2", "unix:/tmp/r.sock"));
  for (const char* bad : {"", ",", "a:1,", ",a:1", "a:1,,b:2", "a:1,b", "a:1 ,b:2"}) {
    EXPECT_THAT(ParseRedisSeeds(bad), HasErrorCode(ErrorCode::kInvalidArgument)) << bad;
  }
  std::string many;
  for (int i = 0; i < 65; ++i) many += (i > 0 ? "," : "") + std::string("h:") + std::to_string(i + 1);
  EXPECT_THAT(ParseRedisSeeds(many), HasErrorCode(ErrorCode::kInvalidArgument));
}

}  // namespace
}  // namespace rplasma
