// The store's batch requests over the raw protocol, against a real rplasma-store: every object of
// a CreateBatch, SealBatch or PutBatch handled as its single request would be, independently, in
// order; batches over the limits refused with a clear error. Part of store_protocol_test (its
// fixture and leak audit).
#include <sys/mman.h>

#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "protocol/frame.h"
#include "protocol/store_messages.h"
#include "tests/integration/store_protocol_fixture.h"
#include "tests/support/status_matchers.h"
#include "tests/support/store_process.h"

namespace rplasma {
namespace {

using ::rplasma::testing::BodyOf;
using ::rplasma::testing::HasErrorCode;
using ::rplasma::testing::RawStoreClient;
using ::rplasma::testing::StoreProtocolTest;
using ::rplasma::testing::WaitFor;
using ::testing::ElementsAre;

TEST_F(StoreProtocolTest, CreateBatchCreatesEachObjectIndependentlyAndSealBatchSealsThem) {
  const ObjectID existing = ObjectID::FromLabel("batch-existing");
  const ObjectID a = ObjectID::FromLabel("batch-a"), b = ObjectID::FromLabel("batch-b");
  const ObjectID too_big = ObjectID::FromLabel("batch-too-big"), missing = ObjectID::FromLabel("batch-missing");
  CreateSealed(*client_, existing, 100);
  const uint64_t arena = client_->connect_reply().arena_size;

  ASSERT_OK_AND_ASSIGN(
      Reply created,
      client_->Call(CreateBatchRequest{
          {{a, 100, 10, true}, {existing, 100, 0, true}, {too_big, arena + 1, 0, true}, {b, 5000, 0, true}}}));
  ASSERT_OK(created.status());
  const std::vector<ObjectInfo>& objects = BodyOf<ObjectsReply>(created).objects;
  ASSERT_EQ(objects.size(), 4u);
  EXPECT_EQ(objects[0].id, a);
  EXPECT_EQ(objects[0].error, ErrorCode::kOk);
  EXPECT_EQ(objects[0].data_size, 100u);
  EXPECT_EQ(objects[0].metadata_size, 10u);
  EXPECT_EQ(objects[0].state, ObjectState::kCreated);
  EXPECT_EQ(objects[1].id, existing);
  EXPECT_EQ(objects[1].error, ErrorCode::kObjectExists);
  EXPECT_EQ(objects[2].id, too_big);
  EXPECT_EQ(objects[2].error, ErrorCode::kOutOfMemory);
  EXPECT_EQ(objects[3].id, b);
  EXPECT_EQ(objects[3].error, ErrorCode::kOk);
  EXPECT_NE(objects[0].offset, objects[3].offset);
  EXPECT_NE(objects[0].generation, objects[3].generation);
  EXPECT_LE(objects[3].offset + 5000, arena);
  StatsReply s = Stats(*client_);
  EXPECT_EQ(s.objects_created, 2u);
  EXPECT_EQ(s.ref_count, 3u);  // existing's creator reference, a's and b's

  // A reader waits for b; the batch's seal wakes it after the batch's own reply.
  ASSERT_OK_AND_ASSIGN(auto reader, RawStoreClient::Connect(store_->socket_path(), "reader"));
  ASSERT_OK_AND_ASSIGN(uint64_t get_rid, reader->Send(GetRequest{{b}, -1}));
  EXPECT_TRUE(WaitFor([&] { return Stats(*client_).waiting_gets == 1; }, absl::Seconds(5)));
  ASSERT_OK_AND_ASSIGN(auto other, RawStoreClient::Connect(store_->socket_path(), "other"));
  // Another client cannot seal a; its batch fails for a only.
  EXPECT_THAT(Codes(*other, SealBatchRequest{{{a, 1, true}, {missing, 2, true}}}),
              ElementsAre(ErrorCode::kNotCreator, ErrorCode::kObjectNotFound));
  EXPECT_THAT(
      Codes(*client_, SealBatchRequest{{{a, 11, true}, {existing, 0, true}, {b, 22, false}, {missing, 0, true}}}),
      ElementsAre(ErrorCode::kOk, ErrorCode::kObjectAlreadySealed, ErrorCode::kOk, ErrorCode::kObjectNotFound));
  ASSERT_OK_AND_ASSIGN(Reply got, reader->Receive());
  EXPECT_EQ(got.request_id, get_rid);
  ASSERT_EQ(BodyOf<ObjectsReply>(got).objects.size(), 1u);
  EXPECT_EQ(BodyOf<ObjectsReply>(got).objects[0].checksum, 22u);
  EXPECT_EQ(BodyOf<ObjectsReply>(got).objects[0].offset, objects[3].offset);
  s = Stats(*client_);
  EXPECT_EQ(s.objects_created, 0u);
  EXPECT_EQ(s.objects_sealed, 3u);
  EXPECT_EQ(s.ref_count, 3u);  // a released with its seal; b (kept by its seal) and existing by client_, b by reader
  EXPECT_THAT(Codes(*client_, ReleaseRequest{{b, existing}}), ElementsAre(ErrorCode::kOk, ErrorCode::kOk));
  other.reset();
  reader.reset();
  ExpectNoLeaks();
}

TEST_F(StoreProtocolTest, PutBatchStoresEachObjectIndependentlyAndLeavesNoReference) {
  const ObjectID existing = ObjectID::FromLabel("put-existing");
  CreateSealed(*client_, existing, 100);
  std::vector<std::vector<uint8_t>> data = {std::vector<uint8_t>(1000, 0x11), {}, std::vector<uint8_t>(3000, 0x33)};
  const std::vector<uint8_t> metadata = {7, 8, 9};
  const std::vector<ObjectID> ids = {ObjectID::FromLabel("put-0"), existing, ObjectID::FromLabel("put-2")};
  PutBatchRequest batch;
  for (size_t i = 0; i < ids.size(); ++i) batch.objects.push_back(PutRequest{ids[i], data[i], metadata, 100 + i, true});
  // With 32 KiB left in the arena and no eviction asked for, the largest inline object alone is
  // OutOfMemory; the small ones on either side of it still fit.
  const std::vector<uint8_t> largest(kMaxInlinePutBytes, 0x44);
  const ObjectID no_room = ObjectID::FromLabel("put-no-room");
  const uint64_t arena = client_->connect_reply().arena_size;
  ASSERT_OK_AND_ASSIGN(Reply filler,
                       client_->Call(CreateRequest{ObjectID::FromLabel("filler"), arena - (32 << 10), 0, false}));
  ASSERT_OK(filler.status());
  batch.objects.insert(batch.objects.begin() + 1, PutRequest{no_room, largest, {}, 5, false});
  EXPECT_THAT(Codes(*client_, batch),
              ElementsAre(ErrorCode::kOk, ErrorCode::kOutOfMemory, ErrorCode::kObjectExists, ErrorCode::kOk));
  ASSERT_OK_AND_ASSIGN(Reply aborted, client_->Call(AbortRequest{ObjectID::FromLabel("filler")}));
  ASSERT_OK(aborted.status());

  ASSERT_OK_AND_ASSIGN(Reply got, client_->Call(GetRequest{{ids[0], ids[2], no_room}, 0}));
  const std::vector<ObjectInfo>& objects = BodyOf<ObjectsReply>(got).objects;
  ASSERT_EQ(objects.size(), 3u);
  EXPECT_EQ(objects[2].error, ErrorCode::kObjectNotFound);
  void* base = ::mmap(nullptr, arena, PROT_READ, MAP_SHARED, client_->arena_fd(), 0);
  ASSERT_NE(base, MAP_FAILED);
  for (size_t k = 0; k < 2; ++k) {
    const size_t i = k == 0 ? 0 : 2;
    ASSERT_EQ(objects[k].error, ErrorCode::kOk);
    EXPECT_EQ(objects[k].state, ObjectState::kSealed);
    EXPECT_EQ(objects[k].checksum, 100 + i);
    ASSERT_EQ(objects[k].data_size, data[i].size());
    ASSERT_EQ(objects[k].metadata_size, metadata.size());
    const uint8_t* at = static_cast<const uint8_t*>(base) + objects[k].offset;
    EXPECT_EQ(std::vector<uint8_t>(at, at + data[i].size()), data[i]) << i;
    EXPECT_EQ(std::vector<uint8_t>(at + data[i].size(), at + data[i].size() + metadata.size()), metadata) << i;
  }
  ::munmap(base, arena);
  EXPECT_EQ(Stats(*client_).ref_count, 3u);  // this Get's two and existing's creator reference
  EXPECT_THAT(Codes(*client_, ReleaseRequest{{ids[0], ids[2], existing}}),
              ElementsAre(ErrorCode::kOk, ErrorCode::kOk, ErrorCode::kOk));
  ExpectNoLeaks();
}

TEST_F(StoreProtocolTest, ABatchOverTheLimitIsRefusedWithAClearErrorAndTheConnectionStays) {
  CreateBatchRequest creates;
  for (uint32_t i = 0; i <= kMaxIdsPerRequest; ++i) {
    creates.objects.push_back(CreateRequest{ObjectID::FromLabel(absl::StrCat("over-", i)), 64, 0, true});
  }
  ASSERT_OK_AND_ASSIGN(uint64_t rid, client_->Send(creates));
  ASSERT_OK_AND_ASSIGN(Reply refused, client_->Receive());
  EXPECT_EQ(refused.request_id, rid);
  EXPECT_THAT(refused.status(), HasErrorCode(ErrorCode::kInvalidArgument));
  EXPECT_THAT(std::string(refused.status().message()), ::testing::HasSubstr("4097 objects exceed the limit of 4096"));
  ASSERT_OK_AND_ASSIGN(Reply empty, client_->Call(SealBatchRequest{}));
  EXPECT_THAT(empty.status(), HasErrorCode(ErrorCode::kInvalidArgument));
  // Same connection, still served; nothing of the refused batches was created.
  StatsReply s = Stats(*client_);
  EXPECT_EQ(s.objects_created, 0u);
  EXPECT_EQ(s.clients, 1u);
  creates.objects.resize(kMaxIdsPerRequest);
  ASSERT_OK_AND_ASSIGN(Reply full, client_->Call(creates));
  ASSERT_OK(full.status());
  EXPECT_EQ(BodyOf<ObjectsReply>(full).objects.size(), kMaxIdsPerRequest);
  EXPECT_EQ(Stats(*client_).objects_created, kMaxIdsPerRequest);
  client_.reset();  // the store aborts a departing client's unsealed objects
  ExpectNoLeaks();
}

TEST_F(StoreProtocolTest, APutBatchAboveTheFrameCapClosesOnlyItsConnection) {
  const std::vector<uint8_t> bytes(kMaxInlinePutBytes, 0x5a);
  PutBatchRequest batch;
  for (int i = 0; i < 17; ++i) {
    batch.objects.push_back(PutRequest{ObjectID::FromLabel(absl::StrCat("cap-", i)), bytes, {}, 0, true});
  }
  ASSERT_GT(EncodeRequest(Request{1, batch}).size(), kDefaultMaxFrameBytes);
  ASSERT_OK_AND_ASSIGN(auto other, RawStoreClient::Connect(store_->socket_path(), "other"));
  // The store refuses the frame on its header, answers ProtocolError and closes the connection,
  // possibly before the rest of the frame is written (the write then fails: broken pipe).
  (void)client_->Send(batch);
  absl::StatusOr<Reply> refused = client_->Receive(absl::Seconds(5));
  if (refused.ok()) {
    EXPECT_THAT(refused->status(), HasErrorCode(ErrorCode::kProtocolError));
    refused = client_->Receive(absl::Seconds(5));
  }
  EXPECT_THAT(refused, HasErrorCode(ErrorCode::kUnavailable));  // closed
  StatsReply s = Stats(*other);
  EXPECT_EQ(s.objects_sealed, 0u);
  EXPECT_EQ(s.objects_created, 0u);
  batch.objects.resize(15);  // 15 x 64 KiB stays under the cap
  EXPECT_THAT(Codes(*other, batch), ::testing::Each(ErrorCode::kOk));
  EXPECT_EQ(Stats(*other).objects_sealed, 15u);
  other.reset();
  ExpectNoLeaks();
}

}  // namespace
}  // namespace rplasma
