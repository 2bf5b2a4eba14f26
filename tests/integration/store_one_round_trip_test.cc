// The store requests that save round trips, over the raw protocol against a real rplasma-store:
// an inline Put (create + copy + seal + release), a Seal that also releases, and a Release the
// store does not answer. Every test ends with the fixture's leak audit.
#include <sys/mman.h>

#include <cstring>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/integration/store_protocol_fixture.h"
#include "tests/support/test_bytes.h"

namespace rplasma::testing {
namespace {

using ::testing::ElementsAre;

TEST_F(StoreProtocolTest, InlinePutLeavesASealedUnreferencedObjectWithTheBytesAndChecksum) {
  const ObjectID id = ObjectID::FromLabel("inline-put");
  const std::vector<uint8_t> data = TestBytes<std::vector<uint8_t>>(1, 3000);
  const std::vector<uint8_t> metadata = TestBytes<std::vector<uint8_t>>(9, 17);
  PutRequest put;
  put.id = id;
  put.data = data;
  put.metadata = metadata;
  put.checksum = 1234;
  ASSERT_OK_AND_ASSIGN(Reply reply, client_->Call(put));
  ASSERT_OK(reply.status());
  const CreateReply& created = BodyOf<CreateReply>(reply);

  StatsReply stats = Stats(*client_);
  EXPECT_EQ(stats.objects_sealed, 1u);
  EXPECT_EQ(stats.objects_created, 0u);
  EXPECT_EQ(stats.ref_count, 0u);  // the putter holds nothing

  ASSERT_OK_AND_ASSIGN(auto reader, RawStoreClient::Connect(store_->socket_path(), "reader"));
  ASSERT_OK_AND_ASSIGN(Reply got, reader->Call(GetRequest{{id}, 0}));
  const ObjectsReply& objects = BodyOf<ObjectsReply>(got);
  ASSERT_EQ(objects.objects.size(), 1u);
  const ObjectInfo& info = objects.objects[0];
  EXPECT_EQ(info.error, ErrorCode::kOk);
  EXPECT_EQ(info.offset, created.offset);
  EXPECT_EQ(info.generation, created.generation);
  EXPECT_EQ(info.data_size, data.size());
  EXPECT_EQ(info.metadata_size, metadata.size());
  EXPECT_EQ(info.checksum, 1234u);
  EXPECT_EQ(info.ref_count, 1);
  const uint64_t arena = reader->connect_reply().arena_size;
  void* base = ::mmap(nullptr, arena, PROT_READ, MAP_SHARED, reader->arena_fd(), 0);
  ASSERT_NE(base, MAP_FAILED);
  const uint8_t* at = static_cast<const uint8_t*>(base) + info.offset;
  EXPECT_EQ(std::memcmp(at, data.data(), data.size()), 0);
  EXPECT_EQ(std::memcmp(at + data.size(), metadata.data(), metadata.size()), 0);
  ::munmap(base, arena);
  EXPECT_THAT(Codes(*reader, ReleaseRequest{{id}}), ElementsAre(ErrorCode::kOk));
  reader.reset();
  ExpectNoLeaks();
}

TEST_F(StoreProtocolTest, InlinePutWakesAGetWaitingForTheId) {
  const ObjectID id = ObjectID::FromLabel("put-wakes");
  ASSERT_OK_AND_ASSIGN(auto reader, RawStoreClient::Connect(store_->socket_path(), "reader"));
  ASSERT_OK_AND_ASSIGN(uint64_t get_rid, reader->Send(GetRequest{{id}, -1}));
  ASSERT_TRUE(WaitFor([&] { return Stats(*client_).waiting_gets == 1; }, absl::Seconds(5)));
  const std::vector<uint8_t> data = TestBytes<std::vector<uint8_t>>(3, 64);
  PutRequest put;
  put.id = id;
  put.data = data;
  ASSERT_OK_AND_ASSIGN(Reply reply, client_->Call(put));
  ASSERT_OK(reply.status());
  ASSERT_OK_AND_ASSIGN(Reply got, reader->Receive());
  EXPECT_EQ(got.request_id, get_rid);
  const ObjectsReply& objects = BodyOf<ObjectsReply>(got);
  ASSERT_EQ(objects.objects.size(), 1u);
  EXPECT_EQ(objects.objects[0].error, ErrorCode::kOk);
  EXPECT_EQ(objects.objects[0].ref_count, 1);
  EXPECT_THAT(Codes(*reader, ReleaseRequest{{id}}), ElementsAre(ErrorCode::kOk));
  reader.reset();
  ExpectNoLeaks();
}

TEST_F(StoreProtocolTest, InlinePutOfAnExistingIdOrAboveTheLimitIsRefusedAndChangesNothing) {
  const ObjectID id = ObjectID::FromLabel("put-twice");
  const std::vector<uint8_t> first = TestBytes<std::vector<uint8_t>>(1, 100);
  PutRequest put;
  put.id = id;
  put.data = first;
  ASSERT_OK_AND_ASSIGN(Reply ok, client_->Call(put));
  ASSERT_OK(ok.status());
  ASSERT_OK_AND_ASSIGN(Reply again, client_->Call(put));
  EXPECT_EQ(again.error, ErrorCode::kObjectExists);

  const std::vector<uint8_t> huge = TestBytes<std::vector<uint8_t>>(2, kMaxInlinePutBytes + 1);
  PutRequest too_big;
  too_big.id = ObjectID::FromLabel("too-big");
  too_big.data = huge;
  ASSERT_OK_AND_ASSIGN(Reply refused, client_->Call(too_big));  // answered; the connection stays
  EXPECT_EQ(refused.error, ErrorCode::kInvalidArgument);
  EXPECT_THAT(refused.error_message, ::testing::HasSubstr("inline"));

  const StatsReply stats = Stats(*client_);
  EXPECT_EQ(stats.objects_sealed, 1u);
  EXPECT_EQ(stats.objects_created, 0u);
  EXPECT_EQ(stats.used_bytes, 128u);  // the first put only, in 64-byte units
  ExpectNoLeaks();
}

TEST_F(StoreProtocolTest, SealWithReleaseDropsTheCreatorsReferenceOnlyWhenTheSealTakes) {
  const ObjectID id = ObjectID::FromLabel("seal-release");
  ASSERT_OK_AND_ASSIGN(Reply created, client_->Call(CreateRequest{id, 10, 0, true}));
  ASSERT_OK(created.status());
  EXPECT_EQ(Stats(*client_).ref_count, 1u);
  ASSERT_OK_AND_ASSIGN(Reply sealed, client_->Call(SealRequest{id, 7, /*release=*/true}));
  ASSERT_OK(sealed.status());
  StatsReply stats = Stats(*client_);
  EXPECT_EQ(stats.ref_count, 0u);
  EXPECT_EQ(stats.objects_sealed, 1u);
  // A second seal fails, and drops no reference of anyone's.
  ASSERT_OK_AND_ASSIGN(auto reader, RawStoreClient::Connect(store_->socket_path(), "reader"));
  ASSERT_OK_AND_ASSIGN(Reply got, reader->Call(GetRequest{{id}, 0}));
  ASSERT_OK(got.status());
  ASSERT_OK_AND_ASSIGN(Reply twice, client_->Call(SealRequest{id, 7, /*release=*/true}));
  EXPECT_EQ(twice.error, ErrorCode::kObjectAlreadySealed);
  EXPECT_EQ(Stats(*client_).ref_count, 1u);  // the reader's
  EXPECT_THAT(Codes(*reader, ReleaseRequest{{id}}), ElementsAre(ErrorCode::kOk));
  reader.reset();
  ExpectNoLeaks();
}

TEST_F(StoreProtocolTest, ReleaseWithNoReplyReleasesAndTheNextReplyIsTheNextRequests) {
  const ObjectID id = ObjectID::FromLabel("no-reply");
  CreateSealed(*client_, id);
  ASSERT_OK_AND_ASSIGN(uint64_t release_rid, client_->Send(ReleaseRequest{{id}, /*no_reply=*/true}));
  // Also a release of a reference not held: ignored, and still answered by nothing.
  ASSERT_OK(client_->Send(ReleaseRequest{{ObjectID::FromLabel("never")}, /*no_reply=*/true}).status());
  ASSERT_OK_AND_ASSIGN(uint64_t stats_rid, client_->Send(StatsRequest{}));
  ASSERT_OK_AND_ASSIGN(Reply next, client_->Receive());
  EXPECT_NE(next.request_id, release_rid);
  EXPECT_EQ(next.request_id, stats_rid);
  EXPECT_EQ(BodyOf<StatsReply>(next).ref_count, 0u);
  ExpectNoLeaks();
}

}  // namespace
}  // namespace rplasma::testing
