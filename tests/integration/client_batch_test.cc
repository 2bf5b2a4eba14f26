// The client's batched calls against a real rplasma-store: CreateMany, SealAndReleaseMany,
// PutInlineMany, Release of many ObjectBuffers and a CreateMany started and finished later — one result per object, one
// object's failure never touching the others, batches far above the per-request and frame limits split.
#include <cstring>
#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include "tests/integration/client_test_fixture.h"

namespace rplasma::testing {
namespace {

class ClientBatchTest : public ClientStoreTest {};

TEST_F(ClientBatchTest, CreateManyAndSealAndReleaseManyReportEachObjectOnItsOwn) {
  ASSERT_NO_FATAL_FAILURE(StartStore());
  const ObjectID existing = ObjectID::FromLabel("existing");
  const ObjectID a = ObjectID::FromLabel("a"), b = ObjectID::FromLabel("b"), empty = ObjectID::FromLabel("empty");
  const ObjectID too_big = ObjectID::FromLabel("too-big"), absurd = ObjectID::FromLabel("absurd");
  ASSERT_OK(client_->Put(existing, AsSpan(TestBytes<std::vector<uint8_t>>(1, 10))));
  const std::vector<CreateSpec> specs = {{a, 1000, 10},  {existing, 10, 0}, {too_big, client_->arena_size() + 1, 0},
                                         {b, 100000, 0}, {empty, 0, 0},     {absurd, kMaxObjectBytes, 1}};
  ASSERT_OK_AND_ASSIGN(std::vector<absl::StatusOr<CreatedObject>> created, client_->CreateMany(specs));
  ASSERT_EQ(created.size(), specs.size());
  EXPECT_THAT(created[1], HasErrorCode(ErrorCode::kObjectExists));
  EXPECT_THAT(created[2], HasErrorCode(ErrorCode::kOutOfMemory));
  EXPECT_THAT(created[5], HasErrorCode(ErrorCode::kInvalidArgument));
  std::vector<SealSpec> seals;
  for (size_t i : {0u, 3u, 4u}) {
    ASSERT_OK(created[i]) << i;
    const CreatedObject& object = *created[i];
    EXPECT_EQ(object.id, specs[i].id);
    ASSERT_EQ(object.data.size(), specs[i].data_size);
    ASSERT_EQ(object.metadata.size(), specs[i].metadata_size);
    EXPECT_EQ(object.metadata.data(), object.data.data() + object.data.size());
    EXPECT_GE(object.base(), client_->arena_base());
    EXPECT_LE(object.base() + object.total_size(), client_->arena_base() + client_->arena_size());
    const std::vector<uint8_t> bytes = TestBytes<std::vector<uint8_t>>(i, object.total_size());
    if (!bytes.empty()) std::memcpy(object.base(), bytes.data(), bytes.size());
    seals.push_back({object.id, ObjectChecksum(object.data, object.metadata)});
  }
  ASSERT_OK_AND_ASSIGN(StatsReply held, client_->Stats());
  EXPECT_EQ(held.objects_created, 3u);
  EXPECT_EQ(held.ref_count, 3u);

  seals.push_back({existing, 0});
  seals.push_back({ObjectID::FromLabel("never-created"), 0});
  ASSERT_OK_AND_ASSIGN(std::vector<absl::Status> sealed, client_->SealAndReleaseMany(seals));
  ASSERT_EQ(sealed.size(), seals.size());
  for (size_t k = 0; k < 3; ++k) EXPECT_OK(sealed[k]) << k;
  EXPECT_THAT(sealed[3], HasErrorCode(ErrorCode::kObjectAlreadySealed));
  EXPECT_THAT(sealed[4], HasErrorCode(ErrorCode::kObjectNotFound));
  ASSERT_OK_AND_ASSIGN(StatsReply after, client_->Stats());
  EXPECT_EQ(after.objects_created, 0u);
  EXPECT_EQ(after.ref_count, 0u);
  {
    ASSERT_OK_AND_ASSIGN(std::vector<ObjectBuffer> got, client_->Get({a, b, empty}));
    size_t k = 0;
    for (size_t i : {0u, 3u, 4u}) {
      ASSERT_TRUE(got[k].valid()) << i;
      const std::vector<uint8_t> bytes =
          TestBytes<std::vector<uint8_t>>(i, specs[i].data_size + specs[i].metadata_size);
      std::vector<uint8_t> stored(got[k].data().begin(), got[k].data().end());
      stored.insert(stored.end(), got[k].metadata().begin(), got[k].metadata().end());
      EXPECT_EQ(stored, bytes) << i;
      EXPECT_EQ(got[k].info().checksum, seals[k].checksum) << i;
      ++k;
    }
  }
  ASSERT_OK(client_->Delete({existing, a, b, empty}));
  ExpectBackAtBaseline();
}

TEST_F(ClientBatchTest, ObjectsFromCreateManyCanBeSealedOrAbortedOneByOne) {
  ASSERT_NO_FATAL_FAILURE(StartStore());
  const ObjectID sealed = ObjectID::FromLabel("sealed"), aborted = ObjectID::FromLabel("aborted");
  ASSERT_OK_AND_ASSIGN(std::vector<absl::StatusOr<CreatedObject>> created,
                       client_->CreateMany(std::vector<CreateSpec>{{sealed, 500, 5}, {aborted, 64, 0}}));
  ASSERT_OK(created[0]);
  ASSERT_OK(created[1]);
  const std::vector<uint8_t> bytes = TestBytes<std::vector<uint8_t>>(3, 505);
  std::memcpy(created[0]->base(), bytes.data(), bytes.size());
  // Seal(id) finds the object CreateMany remembered and checksums its bytes.
  ASSERT_OK(client_->Seal(sealed));
  ASSERT_OK(client_->Release(sealed));
  ASSERT_OK(client_->Abort(aborted));
  ASSERT_OK_AND_ASSIGN(ObjectBuffer got, client_->GetOne(sealed));
  EXPECT_EQ(got.info().checksum, ObjectChecksum(created[0]->data, created[0]->metadata));
  ASSERT_OK(got.Release());
  ASSERT_OK(client_->Delete({sealed}));
  ExpectBackAtBaseline();
}

TEST_F(ClientBatchTest, TenThousandObjectsAreCreatedSealedFetchedAndReleasedInSplitBatches) {
  ASSERT_NO_FATAL_FAILURE(StartStore());
  constexpr int kCount = 10000;  // three requests of at most 4096 each way
  const std::vector<ObjectID> ids = Labels("many", kCount);
  std::vector<CreateSpec> specs;
  for (int i = 0; i < kCount; ++i) specs.push_back({ids[i], 100 + static_cast<uint64_t>(i % 50), 4});
  ASSERT_OK_AND_ASSIGN(std::vector<absl::StatusOr<CreatedObject>> created, client_->CreateMany(specs));
  ASSERT_EQ(created.size(), static_cast<size_t>(kCount));
  std::vector<SealSpec> seals;
  for (int i = 0; i < kCount; ++i) {
    ASSERT_OK(created[i]) << i;
    const std::vector<uint8_t> bytes = TestBytes<std::vector<uint8_t>>(i, created[i]->total_size());
    std::memcpy(created[i]->base(), bytes.data(), bytes.size());
    seals.push_back({ids[i], ObjectChecksum(created[i]->data, created[i]->metadata)});
  }
  ASSERT_OK_AND_ASSIGN(StatsReply held, client_->Stats());
  EXPECT_EQ(held.objects_created, static_cast<uint64_t>(kCount));
  ASSERT_OK_AND_ASSIGN(std::vector<absl::Status> sealed, client_->SealAndReleaseMany(seals));
  ASSERT_EQ(sealed.size(), static_cast<size_t>(kCount));
  for (int i = 0; i < kCount; ++i) ASSERT_OK(sealed[i]) << i;

  ASSERT_OK_AND_ASSIGN(std::vector<ObjectBuffer> got, client_->Get(ids));
  ASSERT_EQ(got.size(), static_cast<size_t>(kCount));
  for (int i = 0; i < kCount; ++i) {
    ASSERT_TRUE(got[i].valid()) << i;
    ASSERT_EQ(got[i].info().checksum, seals[i].checksum) << i;
    ASSERT_EQ(ObjectChecksum(got[i].data(), got[i].metadata()), seals[i].checksum) << i;
  }
  ASSERT_OK_AND_ASSIGN(StatsReply referenced, client_->Stats());
  EXPECT_EQ(HeldReferences(referenced), static_cast<uint64_t>(kCount));
  ASSERT_OK(client_->Release(absl::MakeSpan(got)));
  for (const ObjectBuffer& buffer : got) ASSERT_FALSE(buffer.valid());
  EXPECT_TRUE(WaitForStats([](const StatsReply& s) { return HeldReferences(s) == 0; }));
  ASSERT_OK(client_->Delete(ids));
  ExpectBackAtBaseline();
}

TEST_F(ClientBatchTest, PutInlineManySplitsByCountAndByFrameAndReportsEachObject) {
  ASSERT_NO_FATAL_FAILURE(StartStore());
  // 10,000 small objects (split by count) and 40 of the largest inline size (split by frame bytes:
  // about 15 per frame), an existing id, and one object above the inline limit.
  std::vector<std::vector<uint8_t>> data;
  std::vector<ObjectID> ids;
  for (int i = 0; i < 10000; ++i) {
    data.push_back(TestBytes<std::vector<uint8_t>>(i, 64 + i % 100));
    ids.push_back(ObjectID::FromLabel(absl::StrCat("small-", i)));
  }
  for (int i = 0; i < 40; ++i) {
    data.push_back(TestBytes<std::vector<uint8_t>>(20000 + i, kMaxInlinePutBytes - 8));
    ids.push_back(ObjectID::FromLabel(absl::StrCat("large-", i)));
  }
  const ObjectID existing = ObjectID::FromLabel("existing");
  ASSERT_OK(client_->Put(existing, AsSpan(TestBytes<std::vector<uint8_t>>(1, 10))));
  const std::vector<uint8_t> metadata = TestBytes<std::vector<uint8_t>>(99, 8);
  const std::vector<uint8_t> too_big = TestBytes<std::vector<uint8_t>>(5, kMaxInlinePutBytes + 1);
  std::vector<InlineObject> objects;
  for (size_t i = 0; i < ids.size(); ++i) {
    objects.push_back({ids[i], AsSpan(data[i]), AsSpan(metadata), ObjectChecksum(AsSpan(data[i]), AsSpan(metadata))});
  }
  const size_t existing_at = 5000, too_big_at = 7000;
  objects.insert(objects.begin() + existing_at, InlineObject{existing, AsSpan(metadata), {}, 0});
  objects.insert(objects.begin() + too_big_at, InlineObject{ObjectID::FromLabel("too-big"), AsSpan(too_big), {}, 0});

  ASSERT_OK_AND_ASSIGN(std::vector<absl::Status> put, client_->PutInlineMany(objects));
  ASSERT_EQ(put.size(), objects.size());
  for (size_t k = 0; k < put.size(); ++k) {
    if (k == existing_at) {
      EXPECT_THAT(put[k], HasErrorCode(ErrorCode::kObjectExists));
    } else if (k == too_big_at) {
      EXPECT_THAT(put[k], HasErrorCode(ErrorCode::kInvalidArgument));
    } else {
      ASSERT_OK(put[k]) << k;
    }
  }
  ASSERT_OK_AND_ASSIGN(StatsReply stored, client_->Stats());
  EXPECT_EQ(stored.objects_sealed, ids.size() + 1);
  EXPECT_EQ(stored.ref_count, 0u);  // a put leaves no reference
  {
    ASSERT_OK_AND_ASSIGN(std::vector<ObjectBuffer> got, client_->Get(ids));
    for (size_t i = 0; i < ids.size(); ++i) {
      ASSERT_TRUE(got[i].valid()) << i;
      ASSERT_EQ(std::vector<uint8_t>(got[i].data().begin(), got[i].data().end()), data[i]) << i;
      ASSERT_EQ(got[i].info().checksum, ObjectChecksum(AsSpan(data[i]), AsSpan(metadata))) << i;
    }
    ASSERT_OK(client_->Release(absl::MakeSpan(got)));
  }
  EXPECT_TRUE(WaitForStats([](const StatsReply& s) { return s.ref_count == 0; }));
  ids.push_back(existing);
  ASSERT_OK(client_->Delete(ids));
  ExpectBackAtBaseline();
}

TEST_F(ClientBatchTest, ReleaseOfBuffersDropsEveryReferenceAndSkipsInvalidOnes) {
  ASSERT_NO_FATAL_FAILURE(StartStore());
  const std::vector<ObjectID> ids = Labels("held", 10);
  for (size_t i = 0; i < ids.size(); ++i)
    ASSERT_OK(client_->Put(ids[i], AsSpan(TestBytes<std::vector<uint8_t>>(i, 100))));
  std::vector<ObjectID> asked = ids;
  asked.insert(asked.end(), ids.begin(), ids.end());  // each id twice: two references each
  asked.push_back(ObjectID::FromLabel("absent"));     // a failed entry: no reference
  ASSERT_OK_AND_ASSIGN(std::vector<ObjectBuffer> got, client_->Get(asked));
  ASSERT_FALSE(got.back().valid());
  got.emplace_back();  // a default-constructed buffer
  // A second client's buffer in the same span is released through its own client.
  std::unique_ptr<Client> other = Connect("other");
  ASSERT_NE(other, nullptr);
  ASSERT_OK_AND_ASSIGN(ObjectBuffer others, other->GetOne(ids[0]));
  got.push_back(std::move(others));
  ASSERT_OK_AND_ASSIGN(StatsReply held, client_->Stats());
  EXPECT_EQ(HeldReferences(held), 21u);

  ASSERT_OK(client_->Release(absl::MakeSpan(got)));
  for (const ObjectBuffer& buffer : got) EXPECT_FALSE(buffer.valid());
  ASSERT_OK(client_->Release(absl::MakeSpan(got)));  // nothing left to release: a no-op
  // The store handles each connection's requests in order: the other client's buffer was released
  // on its own connection, so ask there too before counting.
  ASSERT_OK(other->Stats().status());
  ASSERT_OK_AND_ASSIGN(StatsReply released, client_->Stats());
  EXPECT_EQ(HeldReferences(released), 0u);
  other.reset();
  ASSERT_OK(client_->Delete(ids));
  ExpectBackAtBaseline();
}

TEST_F(ClientBatchTest, AStartedCreateManyIsAnsweredAfterOtherRequestsOfTheClientInBetween) {
  ASSERT_NO_FATAL_FAILURE(StartStore());
  constexpr int kCount = 5000;  // two requests: the first sent at Start, the second in Finish
  const std::vector<ObjectID> ids = Labels("started", kCount);
  const ObjectID existing = ObjectID::FromLabel("existing"), between = ObjectID::FromLabel("between");
  ASSERT_OK(client_->Put(existing, AsSpan(TestBytes<std::vector<uint8_t>>(1, 10))));
  std::vector<CreateSpec> specs;
  for (int i = 0; i < kCount; ++i) specs.push_back({ids[i], 64 + static_cast<uint64_t>(i % 7), 0});
  specs[10].id = existing;
  specs[20].data_size = client_->arena_size() + 1;
  std::unique_ptr<PendingCreateMany> pending = client_->StartCreateMany(specs);
  // The client goes on using the store while the answer waits (a manager calls its peer here).
  const std::vector<uint8_t> bytes = TestBytes<std::vector<uint8_t>>(2, 100);
  ASSERT_OK(client_->Put(between, AsSpan(bytes)));
  ASSERT_OK_AND_ASSIGN(std::vector<bool> contained, client_->Contains({between, existing}));
  EXPECT_EQ(contained, (std::vector<bool>{true, true}));

  ASSERT_OK_AND_ASSIGN(std::vector<absl::StatusOr<CreatedObject>> created, pending->Finish());
  EXPECT_THAT(pending->Finish(), HasErrorCode(ErrorCode::kInvalidArgument));
  ASSERT_EQ(created.size(), specs.size());
  EXPECT_THAT(created[10], HasErrorCode(ErrorCode::kObjectExists));
  EXPECT_THAT(created[20], HasErrorCode(ErrorCode::kOutOfMemory));
  std::vector<SealSpec> seals;
  for (int i = 0; i < kCount; ++i) {
    if (i == 10 || i == 20) continue;
    ASSERT_OK(created[i]) << i;
    ASSERT_EQ(created[i]->id, ids[i]);
    const std::vector<uint8_t> object = TestBytes<std::vector<uint8_t>>(i, created[i]->total_size());
    std::memcpy(created[i]->base(), object.data(), object.size());
    seals.push_back({ids[i], ObjectChecksum(created[i]->data, created[i]->metadata)});
  }
  ASSERT_OK_AND_ASSIGN(std::vector<absl::Status> sealed, client_->SealAndReleaseMany(seals));
  for (size_t k = 0; k < seals.size(); ++k) ASSERT_OK(sealed[k]) << k;
  ASSERT_OK_AND_ASSIGN(ObjectBuffer got, client_->GetOne(ids[kCount - 1]));
  EXPECT_EQ(got.info().checksum, seals.back().checksum);
  ASSERT_OK(got.Release());
  std::vector<ObjectID> all = {between, existing};
  for (const SealSpec& seal : seals) all.push_back(seal.id);
  ASSERT_OK(client_->Delete(all));
  ExpectBackAtBaseline();
}

TEST_F(ClientBatchTest, AStartedCreateManyDroppedUnfinishedLeavesNothingCreated) {
  ASSERT_NO_FATAL_FAILURE(StartStore());
  const std::vector<ObjectID> ids = Labels("dropped", 300);
  std::vector<CreateSpec> specs;
  for (const ObjectID& id : ids) specs.push_back({id, 1024, 8});
  client_->StartCreateMany(specs).reset();
  ASSERT_OK_AND_ASSIGN(std::vector<bool> contained, client_->Contains(ids));
  for (size_t i = 0; i < ids.size(); ++i) EXPECT_FALSE(contained[i]) << i;
  // Nothing is left to seal or abort: the ids are free for a new create.
  ASSERT_OK_AND_ASSIGN(std::vector<absl::StatusOr<CreatedObject>> again, client_->CreateMany(specs));
  for (size_t i = 0; i < ids.size(); ++i) ASSERT_OK(again[i]) << i;
  for (const ObjectID& id : ids) ASSERT_OK(client_->Abort(id));
  ExpectBackAtBaseline();
}

TEST_F(ClientBatchTest, AStoreThatIsGoneFailsTheWholeCallWithUnavailable) {
  ASSERT_NO_FATAL_FAILURE(StartStore());
  const std::vector<uint8_t> bytes = TestBytes<std::vector<uint8_t>>(1, 10);
  store_->Kill();
  const ObjectID id = ObjectID::FromLabel("after");
  EXPECT_THAT(client_->CreateMany(std::vector<CreateSpec>{{id, 10, 0}}), HasErrorCode(ErrorCode::kUnavailable));
  EXPECT_THAT(client_->SealAndReleaseMany(std::vector<SealSpec>{{id, 0}}), HasErrorCode(ErrorCode::kUnavailable));
  EXPECT_THAT(client_->PutInlineMany(std::vector<InlineObject>{{id, AsSpan(bytes), {}, 0}}),
              HasErrorCode(ErrorCode::kUnavailable));
}

}  // namespace
}  // namespace rplasma::testing
