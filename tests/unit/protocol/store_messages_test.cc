#include "protocol/store_messages.h"

#include <cstring>
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "tests/support/status_matchers.h"

namespace rplasma {
namespace {

using ::rplasma::testing::HasErrorCode;

TEST(StoreMessagesTest, CreateRequestRoundTrips) {
  Request r{42, CreateRequest{ObjectID::FromLabel("x"), 1000, 10, false}};
  ASSERT_OK_AND_ASSIGN(Request back, DecodeRequest(EncodeRequest(r)));
  EXPECT_EQ(back.request_id, 42u);
  const auto& c = std::get<CreateRequest>(back.body);
  EXPECT_EQ(c.id, ObjectID::FromLabel("x"));
  EXPECT_EQ(c.data_size, 1000u);
  EXPECT_EQ(c.metadata_size, 10u);
  EXPECT_FALSE(c.evict_if_full);
}

TEST(StoreMessagesTest, PutSealAndReleaseFlagsRoundTrip) {
  const std::vector<uint8_t> data = {1, 2, 3, 4, 5};
  const std::vector<uint8_t> metadata = {9, 8};
  PutRequest put;
  put.id = ObjectID::FromLabel("put");
  put.data = data;
  put.metadata = metadata;
  put.checksum = 77;
  put.evict_if_full = false;
  const std::string encoded = EncodeRequest(Request{3, put});
  uint64_t rid = 0;
  ASSERT_OK_AND_ASSIGN(Request back, DecodeRequest(encoded, &rid));
  EXPECT_EQ(rid, 3u);
  const auto& p = std::get<PutRequest>(back.body);
  EXPECT_EQ(p.id, put.id);
  EXPECT_EQ(std::vector<uint8_t>(p.data.begin(), p.data.end()), data);
  EXPECT_EQ(std::vector<uint8_t>(p.metadata.begin(), p.metadata.end()), metadata);
  EXPECT_EQ(p.checksum, 77u);
  EXPECT_FALSE(p.evict_if_full);

  ASSERT_OK_AND_ASSIGN(Request seal, DecodeRequest(EncodeRequest(Request{4, SealRequest{put.id, 5, true}})));
  EXPECT_TRUE(std::get<SealRequest>(seal.body).release);
  ASSERT_OK_AND_ASSIGN(Request release, DecodeRequest(EncodeRequest(Request{5, ReleaseRequest{{put.id}, true}})));
  EXPECT_TRUE(std::get<ReleaseRequest>(release.body).no_reply);
  ASSERT_OK_AND_ASSIGN(Request plain, DecodeRequest(EncodeRequest(Request{6, ReleaseRequest{{put.id}}})));
  EXPECT_FALSE(std::get<ReleaseRequest>(plain.body).no_reply);
}

TEST(StoreMessagesTest, PutAboveTheInlineLimitIsRejectedWithItsRequestId) {
  const std::vector<uint8_t> data(kMaxInlinePutBytes, 1);
  const std::vector<uint8_t> one = {1};
  PutRequest put;
  put.id = ObjectID::FromLabel("big");
  put.data = data;
  put.metadata = one;
  uint64_t rid = 0;
  EXPECT_THAT(DecodeRequest(EncodeRequest(Request{42, put}), &rid), HasErrorCode(ErrorCode::kInvalidArgument));
  EXPECT_EQ(rid, 42u);
}

TEST(StoreMessagesTest, GetRequestRoundTripsIdsInOrder) {
  GetRequest g;
  for (int i = 0; i < 100; ++i) g.ids.push_back(ObjectID::FromLabel(std::to_string(i)));
  g.timeout_ms = 250;
  ASSERT_OK_AND_ASSIGN(Request back, DecodeRequest(EncodeRequest(Request{1, g})));
  const auto& got = std::get<GetRequest>(back.body);
  EXPECT_EQ(got.ids, g.ids);
  EXPECT_EQ(got.timeout_ms, 250);
}

TEST(StoreMessagesTest, TooManyIdsAreRejected) {
  GetRequest g;
  g.ids.assign(kMaxIdsPerRequest + 1, ObjectID());
  EXPECT_THAT(DecodeRequest(EncodeRequest(Request{1, g})), HasErrorCode(ErrorCode::kInvalidArgument));
}

TEST(StoreMessagesTest, EmptyIdListIsRejected) {
  EXPECT_THAT(DecodeRequest(EncodeRequest(Request{1, ReleaseRequest{}})), HasErrorCode(ErrorCode::kInvalidArgument));
}

TEST(StoreMessagesTest, OversizedCreateIsRejected) {
  Request r{1, CreateRequest{ObjectID(), kMaxObjectBytes, 1}};
  EXPECT_THAT(DecodeRequest(EncodeRequest(r)), HasErrorCode(ErrorCode::kInvalidArgument));
  Request overflow{1, CreateRequest{ObjectID(), ~uint64_t{0}, 2}};
  EXPECT_THAT(DecodeRequest(EncodeRequest(overflow)), HasErrorCode(ErrorCode::kInvalidArgument));
}

TEST(StoreMessagesTest, BadListLimitAndTimeoutAreRejected) {
  EXPECT_THAT(DecodeRequest(EncodeRequest(Request{1, ListRequest{std::nullopt, 0}})),
              HasErrorCode(ErrorCode::kInvalidArgument));
  EXPECT_THAT(DecodeRequest(EncodeRequest(Request{1, GetRequest{{ObjectID()}, -5}})),
              HasErrorCode(ErrorCode::kInvalidArgument));
}

TEST(StoreMessagesTest, RandomBytesNeverDecodeAndNeverCrash) {
  std::mt19937 rng(7);
  int decoded = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string junk(rng() % 256, '\0');
    for (char& c : junk) c = static_cast<char>(rng());
    decoded += DecodeRequest(junk).ok();
    (void)DecodeReply(junk);
  }
  EXPECT_LT(decoded, 20);  // a random buffer passing the verifier and the checks is rare
}

TEST(StoreMessagesTest, TruncatedAndBitFlippedRequestsNeverCrash) {
  GetRequest g;
  for (int i = 0; i < 8; ++i) g.ids.push_back(ObjectID::FromLabel(std::to_string(i)));
  std::string good = EncodeRequest(Request{9, g});
  for (size_t n = 0; n < good.size(); ++n) {
    EXPECT_FALSE(DecodeRequest(good.substr(0, n)).ok()) << "truncated to " << n;
  }
  for (size_t i = 0; i < good.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string bad = good;
      bad[i] ^= static_cast<char>(1 << bit);
      (void)DecodeRequest(bad);  // must not crash (ASan/UBSan builds check the reads)
    }
  }
}

// The flatbuffers Verifier (2.0.8) checks the alignment of a vector's length field, not of its
// 8-byte structs: a store reply could place ObjectInfo entries 4 bytes off alignment (found while
// fuzzing the peer protocol's 8-byte vectors, tests/fuzz/). Decoding copies each entry out first;
// without that, UBSan (the asan build) reports a misaligned load here.
TEST(StoreMessagesTest, ObjectsReplyWithMisalignedEntriesDecodes) {
  ObjectInfo info;
  info.id = ObjectID::FromLabel("misaligned");
  info.state = ObjectState::kSealed;
  info.offset = 4096;
  info.data_size = 100;
  info.generation = 7;
  info.checksum = 0xfeedface;
  std::string wire = EncodeReply(Reply{1, ErrorCode::kOk, "", ObjectsReply{{info}, false}});
  auto get32 = [&](size_t at) {
    uint32_t v;
    std::memcpy(&v, wire.data() + at, 4);
    return v;
  };
  // The entry starts with its id; the vector's length field is just before it, and a table field
  // (a uoffset relative to itself) points at that length field.
  const size_t entry = wire.find(std::string(info.id.binary()));
  ASSERT_NE(entry, std::string::npos);
  const size_t vector = entry - 4;
  size_t field = 0;
  for (size_t at = 0; at + 4 <= vector; at += 4) {
    if (at + get32(at) == vector) field = at;
  }
  ASSERT_NE(field, 0u);
  const size_t entry_bytes = wire.size() - entry;  // the entry is last: the builder writes backwards
  ASSERT_GE(entry_bytes, 48u);
  // Move the vector to the end, its length 8-aligned so its entries are 4 bytes off.
  const std::string moved = wire.substr(vector, 4 + entry_bytes);
  wire.resize((wire.size() + 7) / 8 * 8, '\0');
  const uint32_t to = static_cast<uint32_t>(wire.size() - field);
  std::memcpy(wire.data() + field, &to, 4);
  wire += moved;
  ASSERT_EQ((wire.size() - entry_bytes) % 8, 4u);

  ASSERT_OK_AND_ASSIGN(Reply reply, DecodeReply(wire));
  const auto& objects = std::get<ObjectsReply>(reply.body).objects;
  ASSERT_EQ(objects.size(), 1u);
  EXPECT_EQ(objects[0].id, info.id);
  EXPECT_EQ(objects[0].offset, 4096u);
  EXPECT_EQ(objects[0].data_size, 100u);
  EXPECT_EQ(objects[0].generation, 7u);
  EXPECT_EQ(objects[0].checksum, 0xfeedfaceu);
}

TEST(StoreMessagesTest, RepliesRoundTrip) {
  Reply r;
  r.request_id = 5;
  ObjectsReply o;
  ObjectInfo info;
  info.id = ObjectID::FromLabel("a");
  info.state = ObjectState::kSealed;
  info.offset = 64;
  info.data_size = 100;
  info.generation = 3;
  info.checksum = 0xdeadbeef;
  info.ref_count = 2;
  o.objects.push_back(info);
  o.more = true;
  r.body = o;
  ASSERT_OK_AND_ASSIGN(Reply back, DecodeReply(EncodeReply(r)));
  const auto& got = std::get<ObjectsReply>(back.body);
  ASSERT_EQ(got.objects.size(), 1u);
  EXPECT_TRUE(got.more);
  EXPECT_EQ(got.objects[0].id, info.id);
  EXPECT_EQ(got.objects[0].checksum, 0xdeadbeefu);
  EXPECT_EQ(got.objects[0].state, ObjectState::kSealed);

  Reply err = ErrorReply(6, ObjectInUseError("delete(x): in use"));
  ASSERT_OK_AND_ASSIGN(Reply err_back, DecodeReply(EncodeReply(err)));
  EXPECT_THAT(err_back.status(), HasErrorCode(ErrorCode::kObjectInUse));
  EXPECT_EQ(err_back.status().message(), "delete(x): in use");
}

TEST(StoreMessagesTest, TheSharedIndexFieldsRoundTrip) {
  ASSERT_OK_AND_ASSIGN(Request connect, DecodeRequest(EncodeRequest(Request{1, ConnectRequest{"c", true}})));
  EXPECT_TRUE(std::get<ConnectRequest>(connect.body).shared_index);
  ASSERT_OK_AND_ASSIGN(Request plain, DecodeRequest(EncodeRequest(Request{2, ConnectRequest{"c"}})));
  EXPECT_FALSE(std::get<ConnectRequest>(plain.body).shared_index);
  ASSERT_OK_AND_ASSIGN(Request released, DecodeRequest(EncodeRequest(Request{3, SlotsReleasedRequest{}})));
  EXPECT_TRUE(std::holds_alternative<SlotsReleasedRequest>(released.body));

  ASSERT_OK_AND_ASSIGN(
      Reply reply, DecodeReply(EncodeReply(Reply{4, ErrorCode::kOk, "", ConnectReply{1 << 20, "s", 16, 8192, 256}})));
  const auto& c = std::get<ConnectReply>(reply.body);
  EXPECT_EQ(c.index_entries, 8192u);
  EXPECT_EQ(c.slots, 256u);
  StatsReply stats;
  stats.indexed_objects = 7;
  stats.slot_references = 5;
  stats.reclaims_waiting = 3;
  ASSERT_OK_AND_ASSIGN(Reply stats_back, DecodeReply(EncodeReply(Reply{5, ErrorCode::kOk, "", stats})));
  const auto& s = std::get<StatsReply>(stats_back.body);
  EXPECT_EQ(s.indexed_objects, 7u);
  EXPECT_EQ(s.slot_references, 5u);
  EXPECT_EQ(s.reclaims_waiting, 3u);
}

}  // namespace
}  // namespace rplasma
