// The batch requests of the store protocol (CreateBatch, SealBatch, PutBatch): round trips, the
// object-count limits, a bad object rejecting its batch, and the frame budget of a full batch; and
// the batched events (ObjectEvents): in order, a full frame fits, malformed ones are refused.
#include <random>
#include <string>
#include <vector>

#include "flatbuffers/flatbuffers.h"
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "protocol/frame.h"
#include "protocol/object_id_fb.h"
#include "protocol/store_generated.h"
#include "protocol/store_messages.h"
#include "tests/support/status_matchers.h"

namespace rplasma {
namespace {

using ::rplasma::testing::HasErrorCode;
using ::testing::HasSubstr;

ObjectID Id(int i) { return ObjectID::FromLabel("batch-" + std::to_string(i)); }

CreateBatchRequest Creates(size_t count) {
  CreateBatchRequest batch;
  for (size_t i = 0; i < count; ++i) {
    batch.objects.push_back(CreateRequest{Id(static_cast<int>(i)), 1000 + i, i % 7, i % 2 == 0});
  }
  return batch;
}

SealBatchRequest Seals(size_t count) {
  SealBatchRequest batch;
  for (size_t i = 0; i < count; ++i) batch.objects.push_back(SealRequest{Id(static_cast<int>(i)), ~i, i % 3 == 0});
  return batch;
}

TEST(StoreBatchMessagesTest, CreateBatchRoundTripsEveryObjectInOrder) {
  const CreateBatchRequest batch = Creates(100);
  ASSERT_OK_AND_ASSIGN(Request back, DecodeRequest(EncodeRequest(Request{17, batch})));
  EXPECT_EQ(back.request_id, 17u);
  const auto& got = std::get<CreateBatchRequest>(back.body);
  ASSERT_EQ(got.objects.size(), batch.objects.size());
  for (size_t i = 0; i < got.objects.size(); ++i) {
    EXPECT_EQ(got.objects[i].id, batch.objects[i].id) << i;
    EXPECT_EQ(got.objects[i].data_size, batch.objects[i].data_size) << i;
    EXPECT_EQ(got.objects[i].metadata_size, batch.objects[i].metadata_size) << i;
    EXPECT_EQ(got.objects[i].evict_if_full, batch.objects[i].evict_if_full) << i;
  }
}

TEST(StoreBatchMessagesTest, SealBatchRoundTripsChecksumsAndReleaseFlags) {
  const SealBatchRequest batch = Seals(50);
  ASSERT_OK_AND_ASSIGN(Request back, DecodeRequest(EncodeRequest(Request{2, batch})));
  const auto& got = std::get<SealBatchRequest>(back.body);
  ASSERT_EQ(got.objects.size(), batch.objects.size());
  for (size_t i = 0; i < got.objects.size(); ++i) {
    EXPECT_EQ(got.objects[i].id, batch.objects[i].id) << i;
    EXPECT_EQ(got.objects[i].checksum, batch.objects[i].checksum) << i;
    EXPECT_EQ(got.objects[i].release, batch.objects[i].release) << i;
  }
}

TEST(StoreBatchMessagesTest, PutBatchRoundTripsTheBytesOfEveryObject) {
  std::vector<std::vector<uint8_t>> data;
  std::vector<std::vector<uint8_t>> metadata;
  for (int i = 0; i < 10; ++i) {
    data.emplace_back(static_cast<size_t>(i * 100), static_cast<uint8_t>(i));  // object 0 is empty
    metadata.emplace_back(static_cast<size_t>(i % 3), static_cast<uint8_t>(0x80 + i));
  }
  data.emplace_back(kMaxInlinePutBytes, 0xee);  // the largest inline object still fits its batch
  metadata.emplace_back();
  PutBatchRequest batch;
  for (size_t i = 0; i < data.size(); ++i) {
    batch.objects.push_back(PutRequest{Id(static_cast<int>(i)), data[i], metadata[i], 1000 + i, i % 2 == 1});
  }
  const std::string encoded = EncodeRequest(Request{3, batch});
  ASSERT_OK_AND_ASSIGN(Request back, DecodeRequest(encoded));
  const auto& got = std::get<PutBatchRequest>(back.body);
  ASSERT_EQ(got.objects.size(), batch.objects.size());
  for (size_t i = 0; i < got.objects.size(); ++i) {
    EXPECT_EQ(got.objects[i].id, batch.objects[i].id) << i;
    EXPECT_EQ(std::vector<uint8_t>(got.objects[i].data.begin(), got.objects[i].data.end()), data[i]) << i;
    EXPECT_EQ(std::vector<uint8_t>(got.objects[i].metadata.begin(), got.objects[i].metadata.end()), metadata[i]) << i;
    EXPECT_EQ(got.objects[i].checksum, 1000 + i) << i;
    EXPECT_EQ(got.objects[i].evict_if_full, i % 2 == 1) << i;
  }
}

TEST(StoreBatchMessagesTest, EmptyBatchesAreRejectedWithTheirRequestId) {
  for (const RequestBody& body :
       {RequestBody(CreateBatchRequest{}), RequestBody(SealBatchRequest{}), RequestBody(PutBatchRequest{})}) {
    uint64_t rid = 0;
    absl::StatusOr<Request> decoded = DecodeRequest(EncodeRequest(Request{77, body}), &rid);
    EXPECT_THAT(decoded, HasErrorCode(ErrorCode::kInvalidArgument));
    EXPECT_THAT(decoded.status().message(), HasSubstr("no objects"));
    EXPECT_EQ(rid, 77u);
  }
}

TEST(StoreBatchMessagesTest, BatchesAboveTheObjectLimitAreRejectedAndAFullOneIsNot) {
  EXPECT_OK(DecodeRequest(EncodeRequest(Request{1, Creates(kMaxIdsPerRequest)})));
  EXPECT_OK(DecodeRequest(EncodeRequest(Request{1, Seals(kMaxIdsPerRequest)})));

  absl::StatusOr<Request> creates = DecodeRequest(EncodeRequest(Request{1, Creates(kMaxIdsPerRequest + 1)}));
  EXPECT_THAT(creates, HasErrorCode(ErrorCode::kInvalidArgument));
  EXPECT_THAT(creates.status().message(), HasSubstr("exceed the limit of 4096"));
  EXPECT_THAT(DecodeRequest(EncodeRequest(Request{1, Seals(kMaxIdsPerRequest + 1)})),
              HasErrorCode(ErrorCode::kInvalidArgument));
  PutBatchRequest puts;
  puts.objects.assign(kMaxIdsPerRequest + 1, PutRequest{Id(1), {}, {}, 0, true});
  EXPECT_THAT(DecodeRequest(EncodeRequest(Request{1, puts})), HasErrorCode(ErrorCode::kInvalidArgument));
}

TEST(StoreBatchMessagesTest, ABadObjectRejectsItsWholeBatchNamingItsIndex) {
  CreateBatchRequest creates = Creates(5);
  creates.objects[2].data_size = kMaxObjectBytes;
  creates.objects[2].metadata_size = 1;
  uint64_t rid = 0;
  absl::StatusOr<Request> decoded = DecodeRequest(EncodeRequest(Request{9, creates}), &rid);
  EXPECT_THAT(decoded, HasErrorCode(ErrorCode::kInvalidArgument));
  EXPECT_THAT(decoded.status().message(), HasSubstr("create batch, object 2: create("));
  EXPECT_EQ(rid, 9u);

  const std::vector<uint8_t> too_big(kMaxInlinePutBytes + 1, 1);
  const std::vector<uint8_t> small(10, 2);
  PutBatchRequest puts;
  puts.objects.push_back(PutRequest{Id(0), small, {}, 0, true});
  puts.objects.push_back(PutRequest{Id(1), too_big, {}, 0, true});
  decoded = DecodeRequest(EncodeRequest(Request{10, puts}));
  EXPECT_THAT(decoded, HasErrorCode(ErrorCode::kInvalidArgument));
  EXPECT_THAT(decoded.status().message(), HasSubstr("put batch, object 1: put("));
}

TEST(StoreBatchMessagesTest, AnObjectWithoutAnIdRejectsItsBatch) {
  // The encoder always writes ids; build the batch by hand with the second object's id left out.
  flatbuffers::FlatBufferBuilder b;
  idfb::ObjectIdFb id = ObjectIdToFb(Id(0));
  std::vector<flatbuffers::Offset<fb::SealRequest>> objects = {fb::CreateSealRequest(b, &id, 1),
                                                               fb::CreateSealRequest(b, nullptr, 2)};
  auto batch = fb::CreateSealBatchRequest(b, b.CreateVector(objects));
  b.Finish(fb::CreateStoreRequest(b, 4, fb::RequestBody::SealBatchRequest, batch.Union()));
  absl::StatusOr<Request> decoded =
      DecodeRequest(absl::string_view(reinterpret_cast<const char*>(b.GetBufferPointer()), b.GetSize()));
  EXPECT_THAT(decoded, HasErrorCode(ErrorCode::kInvalidArgument));
  EXPECT_THAT(decoded.status().message(), HasSubstr("seal batch, object 1: seal: missing object id"));
}

TEST(StoreBatchMessagesTest, FullBatchesAndTheirRepliesFitInOneFrame) {
  EXPECT_LT(EncodeRequest(Request{~uint64_t{0}, Creates(kMaxIdsPerRequest)}).size(), kDefaultMaxFrameBytes);
  EXPECT_LT(EncodeRequest(Request{~uint64_t{0}, Seals(kMaxIdsPerRequest)}).size(), kDefaultMaxFrameBytes);
  Reply objects;
  objects.request_id = ~uint64_t{0};
  objects.body = ObjectsReply{std::vector<ObjectInfo>(kMaxIdsPerRequest), false};
  EXPECT_LT(EncodeReply(objects).size(), kDefaultMaxFrameBytes);
  Reply codes;
  codes.body = CodesReply{std::vector<ErrorCode>(kMaxIdsPerRequest, ErrorCode::kOutOfMemory)};
  EXPECT_LT(EncodeReply(codes).size(), kDefaultMaxFrameBytes);
}

TEST(StoreBatchMessagesTest, CreateBatchReplyCarriesPerObjectErrorsInOrder) {
  Reply reply;
  reply.request_id = 8;
  ObjectsReply objects;
  ObjectInfo created;
  created.id = Id(0);
  created.offset = 128;
  created.data_size = 10;
  created.metadata_size = 2;
  created.generation = 99;
  objects.objects.push_back(created);
  ObjectInfo failed;
  failed.id = Id(1);
  failed.error = ErrorCode::kOutOfMemory;
  objects.objects.push_back(failed);
  reply.body = objects;
  ASSERT_OK_AND_ASSIGN(Reply back, DecodeReply(EncodeReply(reply)));
  const auto& got = std::get<ObjectsReply>(back.body);
  ASSERT_EQ(got.objects.size(), 2u);
  EXPECT_EQ(got.objects[0].error, ErrorCode::kOk);
  EXPECT_EQ(got.objects[0].offset, 128u);
  EXPECT_EQ(got.objects[0].generation, 99u);
  EXPECT_EQ(got.objects[1].id, Id(1));
  EXPECT_EQ(got.objects[1].error, ErrorCode::kOutOfMemory);
}

TEST(StoreBatchMessagesTest, TruncatedAndBitFlippedBatchesNeverCrash) {
  // Eight bytes: no padding at the buffer's end, so every truncation cuts something the verifier needs.
  const std::vector<uint8_t> bytes = {1, 2, 3, 4, 5, 6, 7, 8};
  PutBatchRequest puts;
  for (int i = 0; i < 4; ++i) puts.objects.push_back(PutRequest{Id(i), bytes, bytes, 5, true});
  for (const std::string& good :
       {EncodeRequest(Request{9, Creates(4)}), EncodeRequest(Request{9, Seals(4)}), EncodeRequest(Request{9, puts})}) {
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
}

TEST(StoreBatchMessagesTest, EventsOfOneFrameRoundTripInOrderAndAFullFrameFits) {
  ObjectEvents events;
  for (int i = 0; i < 5; ++i) {
    ObjectEvent e;
    e.kind = static_cast<EventKind>(i % 3);
    e.object.id = Id(i);
    e.object.data_size = 100 + i;
    e.object.generation = 7 + i;
    e.object.state = ObjectState::kSealed;
    events.events.push_back(e);
  }
  ASSERT_OK_AND_ASSIGN(Reply back, DecodeReply(EncodeReply(Reply{0, ErrorCode::kOk, "", events})));
  const auto& got = std::get<ObjectEvents>(back.body).events;
  ASSERT_EQ(got.size(), 5u);
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(got[i].kind, static_cast<EventKind>(i % 3));
    EXPECT_EQ(got[i].object.id, Id(i));
    EXPECT_EQ(got[i].object.data_size, 100u + i);
    EXPECT_EQ(got[i].object.generation, 7u + i);
  }
  ObjectEvents full;
  full.events.resize(kMaxEventsPerFrame);
  EXPECT_LT(EncodeReply(Reply{0, ErrorCode::kOk, "", full}).size(), kDefaultMaxFrameBytes);
  full.events.emplace_back();
  EXPECT_THAT(DecodeReply(EncodeReply(Reply{0, ErrorCode::kOk, "", full})), HasErrorCode(ErrorCode::kProtocolError));
}

TEST(StoreBatchMessagesTest, MalformedEventFramesAreProtocolErrors) {
  auto encoded = [](std::vector<uint8_t> kinds, size_t objects, bool with_kinds) {
    flatbuffers::FlatBufferBuilder b;
    std::vector<fb::ObjectInfoFb> infos(objects);
    const auto objects_offset = b.CreateVectorOfStructs(infos);
    flatbuffers::Offset<flatbuffers::Vector<fb::EventKindFb>> kinds_offset;
    if (with_kinds) {
      std::vector<fb::EventKindFb> k;
      for (uint8_t v : kinds) k.push_back(static_cast<fb::EventKindFb>(v));
      kinds_offset = b.CreateVector(k);
    }
    auto body = fb::CreateObjectEvents(b, kinds_offset, objects_offset);
    b.Finish(fb::CreateStoreReply(b, 0, 0, 0, fb::ReplyBody::ObjectEvents, body.Union()));
    return std::string(reinterpret_cast<const char*>(b.GetBufferPointer()), b.GetSize());
  };
  EXPECT_THAT(DecodeReply(encoded({0, 1}, 2, true)), ::rplasma::testing::IsOk());
  EXPECT_THAT(DecodeReply(encoded({0, 1}, 3, true)), HasErrorCode(ErrorCode::kProtocolError)) << "counts differ";
  EXPECT_THAT(DecodeReply(encoded({}, 2, false)), HasErrorCode(ErrorCode::kProtocolError)) << "no kinds";
  EXPECT_THAT(DecodeReply(encoded({0, 9}, 2, true)), HasErrorCode(ErrorCode::kProtocolError)) << "unknown kind";
}

}  // namespace
}  // namespace rplasma
