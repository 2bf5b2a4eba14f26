// The object lifecycle through the client library against a real rplasma-store: create, seal,
// get, release, abort, delete, out-of-memory, get timeouts, batches above the per-request limit.
#include <cstring>
#include <thread>

#include <gtest/gtest.h>

#include "tests/integration/client_test_fixture.h"

namespace rplasma::testing {
namespace {

class ClientLifecycleTest : public ClientStoreTest {};

TEST_F(ClientLifecycleTest, PutThenGetReturnsTheSameBytesZeroCopyWithChecksum) {
  ASSERT_NO_FATAL_FAILURE(StartStore());
  const ObjectID id = ObjectID::FromLabel("hello");
  const std::vector<uint8_t> data = TestBytes<std::vector<uint8_t>>(1, 100000);
  const std::vector<uint8_t> metadata = TestBytes<std::vector<uint8_t>>(2, 37);
  ASSERT_OK(client_->Put(id, AsSpan(data), AsSpan(metadata)));
  {
    ASSERT_OK_AND_ASSIGN(ObjectBuffer buffer, client_->GetOne(id));
    ASSERT_TRUE(buffer.valid());
    EXPECT_EQ(std::vector<uint8_t>(buffer.data().begin(), buffer.data().end()), data);
    EXPECT_EQ(std::vector<uint8_t>(buffer.metadata().begin(), buffer.metadata().end()), metadata);
    EXPECT_EQ(buffer.info().checksum, ObjectChecksum(AsSpan(data), AsSpan(metadata)));
    // Zero copy: the buffer points into the mapped arena.
    EXPECT_GE(buffer.data().data(), client_->arena_base());
    EXPECT_LE(buffer.data().data() + data.size() + metadata.size(), client_->arena_base() + client_->arena_size());
    // Sealed and local: held through a slot, with no Get message; the store counts it all the same.
    ASSERT_OK_AND_ASSIGN(StatsReply held, client_->Stats());
    EXPECT_EQ(held.slot_references, 1u);
    EXPECT_EQ(held.ref_count, 1u);
    ASSERT_OK_AND_ASSIGN(bool present, client_->Contains(id));
    EXPECT_TRUE(present);
  }
  ASSERT_OK(client_->Delete({id}));
  ASSERT_OK_AND_ASSIGN(bool present, client_->Contains(id));
  EXPECT_FALSE(present);
  ExpectBackAtBaseline();
}

TEST_F(ClientLifecycleTest, PutOnEitherSideOfTheInlineLimitStoresTheBytesAndTheirChecksumUnreferenced) {
  ASSERT_NO_FATAL_FAILURE(StartStore());
  // Inline (one request), exactly at the limit, and just above it (create, copy+hash, seal).
  const size_t sizes[] = {0, 1000, kMaxInlinePutBytes - 5, kMaxInlinePutBytes - 4, 3 * kMaxInlinePutBytes + 3};
  const std::vector<uint8_t> metadata = TestBytes<std::vector<uint8_t>>(9, 5);
  for (size_t size : sizes) {
    SCOPED_TRACE(size);
    const ObjectID id = ObjectID::FromLabel(absl::StrCat("put-", size));
    const std::vector<uint8_t> data = TestBytes<std::vector<uint8_t>>(size, size);
    ASSERT_OK(client_->Put(id, AsSpan(data), AsSpan(metadata)));
    ASSERT_OK_AND_ASSIGN(StatsReply after_put, client_->Stats());
    EXPECT_EQ(after_put.ref_count, 0u);
    ASSERT_OK_AND_ASSIGN(ObjectBuffer buffer, client_->GetOne(id));
    EXPECT_EQ(std::vector<uint8_t>(buffer.data().begin(), buffer.data().end()), data);
    EXPECT_EQ(std::vector<uint8_t>(buffer.metadata().begin(), buffer.metadata().end()), metadata);
    EXPECT_EQ(buffer.info().checksum, ObjectChecksum(AsSpan(data), AsSpan(metadata)));
    ASSERT_OK(buffer.Release());
    ASSERT_OK(client_->Delete({id}));
  }
  const std::vector<uint8_t> big = TestBytes<std::vector<uint8_t>>(1, kMaxInlinePutBytes + 1);
  EXPECT_THAT(client_->PutInline(ObjectID::FromLabel("big"), AsSpan(big), {}, 0),
              HasErrorCode(ErrorCode::kInvalidArgument));
  ExpectBackAtBaseline();
}

TEST_F(ClientLifecycleTest, SealAndReleaseLeavesNoReferenceAndAFailedOneKeepsIt) {
  ASSERT_NO_FATAL_FAILURE(StartStore());
  const ObjectID id = ObjectID::FromLabel("seal-and-release");
  ASSERT_OK_AND_ASSIGN(CreatedObject created, client_->Create(id, 10));
  std::memset(created.data.data(), 1, 10);
  ASSERT_OK(client_->SealAndRelease(id, ObjectChecksum(created.data, {})));
  ASSERT_OK_AND_ASSIGN(StatsReply sealed, client_->Stats());
  EXPECT_EQ(sealed.ref_count, 0u);
  EXPECT_EQ(sealed.objects_sealed, baseline_.objects_sealed + 1);
  EXPECT_THAT(client_->SealAndRelease(id, 0), HasErrorCode(ErrorCode::kObjectAlreadySealed));
  ASSERT_OK(client_->Delete({id}));
  ExpectBackAtBaseline();
}

TEST_F(ClientLifecycleTest, CreatedObjectIsInvisibleUntilSealedAndCreatorKeepsItsReference) {
  ASSERT_NO_FATAL_FAILURE(StartStore());
  const ObjectID id = ObjectID::FromLabel("unsealed");
  ASSERT_OK_AND_ASSIGN(CreatedObject created,
                       client_->Create(id, 4096, AsSpan(TestBytes<std::vector<uint8_t>>(3, 10))));
  EXPECT_EQ(created.data.size(), 4096u);
  EXPECT_EQ(created.metadata.size(), 10u);
  std::memset(created.data.data(), 0x5a, created.data.size());
  EXPECT_THAT(client_->GetOne(id), HasErrorCode(ErrorCode::kObjectNotSealed));
  ASSERT_OK_AND_ASSIGN(bool present, client_->Contains(id));
  EXPECT_FALSE(present);
  const ObjectID sealed_id = ObjectID::FromLabel("sealed beside it");
  ASSERT_OK(client_->Put(sealed_id, AsSpan(TestBytes<std::vector<uint8_t>>(4, 100))));
  const ObjectID unknown = ObjectID::FromLabel("never created");
  ASSERT_OK_AND_ASSIGN(std::vector<bool> batch, client_->Contains(std::vector<ObjectID>{id, sealed_id, unknown}));
  EXPECT_EQ(batch, (std::vector<bool>{false, true, false})) << "batch Contains: unsealed, sealed, unknown";
  ASSERT_OK(client_->Delete({sealed_id}));
  ASSERT_OK(client_->Seal(id));
  ASSERT_OK_AND_ASSIGN(StatsReply sealed, client_->Stats());
  EXPECT_EQ(sealed.ref_count, 1u) << "the creator keeps its reference after Seal";
  ASSERT_OK(client_->Release(id));
  ASSERT_OK_AND_ASSIGN(ObjectBuffer buffer, client_->GetOne(id));
  EXPECT_EQ(buffer.data()[4095], 0x5a);
  ASSERT_OK(buffer.Release());
  EXPECT_OK(buffer.Release()) << "Release is idempotent";
  ASSERT_OK(client_->Delete({id}));
  ExpectBackAtBaseline();
}

TEST_F(ClientLifecycleTest, DuplicateCreateAndDoubleSealAreCleanErrors) {
  ASSERT_NO_FATAL_FAILURE(StartStore());
  const ObjectID id = ObjectID::FromLabel("dup");
  ASSERT_OK(client_->Create(id, 128).status());
  EXPECT_THAT(client_->Create(id, 128), HasErrorCode(ErrorCode::kObjectExists));
  ASSERT_OK(client_->Seal(id));
  EXPECT_THAT(client_->Seal(id), HasErrorCode(ErrorCode::kObjectAlreadySealed));
  EXPECT_THAT(client_->Abort(id), HasErrorCode(ErrorCode::kObjectAlreadySealed));
  EXPECT_THAT(client_->Create(id, 128), HasErrorCode(ErrorCode::kObjectExists));
  ASSERT_OK(client_->Release(id));
  EXPECT_THAT(client_->Release(id), ::testing::Not(IsOk())) << "no reference left to release";
  // Another client cannot seal or abort what it did not create.
  const ObjectID other = ObjectID::FromLabel("other");
  ASSERT_OK(client_->Create(other, 16).status());
  std::unique_ptr<Client> second = Connect("second");
  EXPECT_THAT(second->Seal(other), HasErrorCode(ErrorCode::kNotCreator));
  EXPECT_THAT(second->Abort(other), HasErrorCode(ErrorCode::kNotCreator));
  ASSERT_OK(client_->Abort(other));
  second.reset();
  ASSERT_OK(client_->Delete({id}));
  EXPECT_THAT(client_->Delete({id}), HasErrorCode(ErrorCode::kObjectNotFound));
  ExpectBackAtBaseline();
}

TEST_F(ClientLifecycleTest, CreateAbortCreateThousandTimesLeavesNothingBehind) {
  ASSERT_NO_FATAL_FAILURE(StartStore());
  const ObjectID id = ObjectID::FromLabel("churn");
  for (int i = 0; i < 1000; ++i) {
    ASSERT_OK(client_->Create(id, 1000 + i).status()) << i;
    ASSERT_OK(client_->Abort(id)) << i;
    ASSERT_OK_AND_ASSIGN(CreatedObject again, client_->Create(id, 64));
    EXPECT_EQ(again.data.size(), 64u);
    ASSERT_OK(client_->Abort(id)) << i;
  }
  EXPECT_THAT(client_->Abort(id), HasErrorCode(ErrorCode::kObjectNotFound));
  ExpectBackAtBaseline();
}

TEST_F(ClientLifecycleTest, DeleteOfAnObjectInUseIsDeferredUntilRelease) {
  ASSERT_NO_FATAL_FAILURE(StartStore());
  const ObjectID id = ObjectID::FromLabel("in-use");
  const std::vector<uint8_t> data = TestBytes<std::vector<uint8_t>>(4, 50000);
  ASSERT_OK(client_->Put(id, AsSpan(data)));
  std::unique_ptr<Client> reader = Connect("reader");
  ASSERT_OK_AND_ASSIGN(ObjectBuffer held, reader->GetOne(id));
  ASSERT_OK(client_->Delete({id}));
  // Gone for everyone else at once, but the holder's bytes stay intact and allocated.
  ASSERT_OK_AND_ASSIGN(bool present, client_->Contains(id));
  EXPECT_FALSE(present);
  EXPECT_THAT(client_->GetOne(id), HasErrorCode(ErrorCode::kObjectNotFound));
  ASSERT_OK_AND_ASSIGN(StatsReply during, client_->Stats());
  EXPECT_GT(during.used_bytes, baseline_.used_bytes);
  EXPECT_EQ(std::vector<uint8_t>(held.data().begin(), held.data().end()), data);
  held = ObjectBuffer();  // releases
  ASSERT_TRUE(WaitForStats([&](const StatsReply& s) { return s.used_bytes == baseline_.used_bytes; }));
  reader.reset();
  ExpectBackAtBaseline();
  // The id is free again.
  ASSERT_OK(client_->Put(id, AsSpan(data)));
  ASSERT_OK(client_->Delete({id}));
  ExpectBackAtBaseline();
}

TEST_F(ClientLifecycleTest, FullStoreWithEverythingReferencedFailsCleanlyAndRecoversAfterRelease) {
  ASSERT_NO_FATAL_FAILURE(StartStore(1 << 20));
  constexpr size_t kSize = 64 << 10;
  std::vector<ObjectBuffer> held;
  std::vector<ObjectID> ids;
  absl::Status full;
  for (int i = 0; i < 64 && full.ok(); ++i) {
    const ObjectID id = ObjectID::FromLabel(absl::StrCat("full-", i));
    full = client_->Put(id, AsSpan(TestBytes<std::vector<uint8_t>>(i, kSize)));
    if (!full.ok()) break;
    ASSERT_OK_AND_ASSIGN(ObjectBuffer buffer, client_->GetOne(id));
    held.push_back(std::move(buffer));
    ids.push_back(id);
  }
  ASSERT_THAT(full, HasErrorCode(ErrorCode::kOutOfMemory));
  ASSERT_GE(held.size(), 8u);
  // Nothing referenced was evicted to make room, and every held object is intact.
  ASSERT_OK_AND_ASSIGN(StatsReply stats, client_->Stats());
  EXPECT_EQ(stats.evictions, 0u);
  EXPECT_EQ(stats.objects_sealed, held.size());
  for (size_t i = 0; i < held.size(); ++i) {
    EXPECT_EQ(ObjectChecksum(held[i].data(), held[i].metadata()), held[i].info().checksum) << i;
  }
  // One release: the next create succeeds (by evicting the one unreferenced object).
  held.pop_back();
  const ObjectID fresh = ObjectID::FromLabel("full-after-release");
  ASSERT_OK(client_->Put(fresh, AsSpan(TestBytes<std::vector<uint8_t>>(999, kSize))));
  ids.push_back(fresh);
  for (const ObjectBuffer& b : held) {
    ASSERT_OK_AND_ASSIGN(bool present, client_->Contains(b.id()));
    EXPECT_TRUE(present);
  }
  held.clear();
  ASSERT_OK(client_->Evict(uint64_t{1} << 30).status());
  ExpectBackAtBaseline();
}

TEST_F(ClientLifecycleTest, GetTimesOutAfterAboutTheRequestedTime) {
  ASSERT_NO_FATAL_FAILURE(StartStore());
  const ObjectID missing = ObjectID::FromLabel("never");
  for (int i = 0; i < 5; ++i) {
    const absl::Time start = absl::Now();
    EXPECT_THAT(client_->GetOne(missing, absl::Milliseconds(100)), HasErrorCode(ErrorCode::kDeadlineExceeded));
    const absl::Duration took = absl::Now() - start;
    EXPECT_GE(took, absl::Milliseconds(50));
    // The store's timer answered, not the client's fallback at 100 ms + reply_grace (500 ms).
    EXPECT_LE(took, absl::Milliseconds(450));
  }
  // A batch: present entries are served, missing ones come back failed after the timeout.
  const ObjectID present = ObjectID::FromLabel("present");
  ASSERT_OK(client_->Put(present, AsSpan(TestBytes<std::vector<uint8_t>>(5, 10))));
  const absl::Time start = absl::Now();
  ASSERT_OK_AND_ASSIGN(std::vector<ObjectBuffer> got, client_->Get({present, missing}, absl::Milliseconds(100)));
  const absl::Duration took = absl::Now() - start;
  EXPECT_GE(took, absl::Milliseconds(50));
  EXPECT_LE(took, absl::Milliseconds(450));
  ASSERT_EQ(got.size(), 2u);
  EXPECT_TRUE(got[0].valid());
  EXPECT_FALSE(got[1].valid());
  EXPECT_THAT(got[1].status(), HasErrorCode(ErrorCode::kObjectNotFound));
  EXPECT_EQ(got[1].id(), missing);
  got.clear();
  ASSERT_OK(client_->Delete({present}));
  ExpectBackAtBaseline();
}

TEST_F(ClientLifecycleTest, BatchesAboveThePerRequestLimitAreSplit) {
  ASSERT_NO_FATAL_FAILURE(StartStore());
  constexpr int kCount = kMaxIdsPerRequest + 904;  // two requests each way
  const std::vector<ObjectID> ids = Labels("batch", kCount);
  for (int i = 0; i < kCount; i += 2) ASSERT_OK(client_->Put(ids[i], AsSpan(TestBytes<std::vector<uint8_t>>(i, 8))));
  {
    ASSERT_OK_AND_ASSIGN(std::vector<ObjectBuffer> got, client_->Get(ids));
    ASSERT_EQ(got.size(), static_cast<size_t>(kCount));
    for (int i = 0; i < kCount; ++i) {
      ASSERT_EQ(got[i].valid(), i % 2 == 0) << i;
      EXPECT_EQ(got[i].id(), ids[i]);
      if (i % 2 == 0) {
        EXPECT_EQ(got[i].data()[0], TestBytes<std::vector<uint8_t>>(i, 8)[0]);
      }
    }
    ASSERT_OK_AND_ASSIGN(StatsReply stats, client_->Stats());
    EXPECT_EQ(HeldReferences(stats), static_cast<uint64_t>(kCount / 2));
    ASSERT_OK_AND_ASSIGN(std::vector<ObjectInfo> listed, client_->List());
    EXPECT_EQ(listed.size(), static_cast<size_t>(kCount / 2));
  }
  std::vector<ObjectID> present;
  for (int i = 0; i < kCount; i += 2) present.push_back(ids[i]);
  ASSERT_OK(client_->Delete(present));
  ExpectBackAtBaseline();
}

TEST_F(ClientLifecycleTest, AHugeBatchFromOneThreadDoesNotDeadlockAgainstTheStoresFlowControl) {
  ASSERT_NO_FATAL_FAILURE(StartStore());
  // Far more reply bytes than the store queues before it stops reading this connection.
  constexpr int kCount = 20 * kMaxIdsPerRequest + 17;
  const std::vector<ObjectID> ids = Labels("absent", kCount);
  const ObjectID present = ids[kCount - 1];
  ASSERT_OK(client_->Put(present, AsSpan(TestBytes<std::vector<uint8_t>>(1, 16))));
  ASSERT_OK_AND_ASSIGN(std::vector<ObjectBuffer> got, client_->Get(ids));
  ASSERT_EQ(got.size(), ids.size());
  for (int i = 0; i + 1 < kCount; ++i) ASSERT_THAT(got[i].status(), HasErrorCode(ErrorCode::kObjectNotFound)) << i;
  EXPECT_TRUE(got.back().valid());
  got.clear();
  ASSERT_OK(client_->Delete({present}));
  ExpectBackAtBaseline();
}

TEST_F(ClientLifecycleTest, DuplicateIdsInOneGetEachHoldAReference) {
  ASSERT_NO_FATAL_FAILURE(StartStore());
  const ObjectID id = ObjectID::FromLabel("twice");
  ASSERT_OK(client_->Put(id, AsSpan(TestBytes<std::vector<uint8_t>>(6, 64))));
  {
    ASSERT_OK_AND_ASSIGN(std::vector<ObjectBuffer> got, client_->Get({id, id, id}));
    ASSERT_EQ(got.size(), 3u);
    for (const ObjectBuffer& b : got) EXPECT_TRUE(b.valid());
    ASSERT_OK_AND_ASSIGN(StatsReply stats, client_->Stats());
    EXPECT_EQ(stats.slot_references, 3u);  // one slot each
  }
  ASSERT_OK(client_->Delete({id}));
  ExpectBackAtBaseline();
}

TEST_F(ClientLifecycleTest, AStoreThatDiesTurnsEveryCallIntoUnavailable) {
  ASSERT_NO_FATAL_FAILURE(StartStore());
  const ObjectID id = ObjectID::FromLabel("before-death");
  ASSERT_OK(client_->Put(id, AsSpan(TestBytes<std::vector<uint8_t>>(7, 1000))));
  ASSERT_OK_AND_ASSIGN(ObjectBuffer held_in_slot, client_->GetOne(id));
  std::unique_ptr<Client> socket_client = Connect("socket-gets", /*without_ipc=*/false);
  ASSERT_NE(socket_client, nullptr);
  ASSERT_OK_AND_ASSIGN(ObjectBuffer held, socket_client->GetOne(id));
  absl::Status waiting;
  std::thread waiter(
      [&] { waiting = client_->GetOne(ObjectID::FromLabel("never"), absl::InfiniteDuration()).status(); });
  ASSERT_TRUE(WaitForStats([](const StatsReply& s) { return s.waiting_gets == 1; }));
  store_->Kill();
  waiter.join();
  EXPECT_THAT(waiting, HasErrorCode(ErrorCode::kUnavailable));
  EXPECT_THAT(client_->Stats(), HasErrorCode(ErrorCode::kUnavailable));
  EXPECT_THAT(client_->Put(ObjectID::FromLabel("after"), AsSpan(TestBytes<std::vector<uint8_t>>(8, 10))),
              HasErrorCode(ErrorCode::kUnavailable));
  // The mapping outlives the store: held bytes are still readable.
  EXPECT_EQ(held.data()[999], TestBytes<std::vector<uint8_t>>(7, 1000)[999]);
  EXPECT_EQ(held_in_slot.data()[999], TestBytes<std::vector<uint8_t>>(7, 1000)[999]);
  // A reference the store counted cannot be given back; one held through a slot needs no store.
  EXPECT_THAT(held.Release(), HasErrorCode(ErrorCode::kUnavailable));
  EXPECT_OK(held_in_slot.Release());
  // The connection is known broken: no get answers from the dead store's index any more.
  EXPECT_THAT(client_->GetOne(id), HasErrorCode(ErrorCode::kUnavailable));
}

TEST_F(ClientLifecycleTest, AFullIndexAndExhaustedSlotsFallBackToTheSocketAndNeverFail) {
  // The smallest index and slot regions: 16 entries, 16 slots (one window each).
  ASSERT_NO_FATAL_FAILURE(StartStore(64ull << 20, {"--index-entries=16", "--slots-per-client=16"}));
  constexpr int kCount = 100;
  const std::vector<ObjectID> ids = Labels("crowded", kCount);
  for (int i = 0; i < kCount; ++i) ASSERT_OK(client_->Put(ids[i], AsSpan(TestBytes<std::vector<uint8_t>>(i, 32))));
  ASSERT_OK_AND_ASSIGN(StatsReply stored, client_->Stats());
  EXPECT_LE(stored.indexed_objects, 16u);  // the rest are reachable through the socket only
  EXPECT_GT(stored.indexed_objects, 0u);
  {
    ASSERT_OK_AND_ASSIGN(std::vector<ObjectBuffer> got, client_->Get(ids));
    ASSERT_EQ(got.size(), static_cast<size_t>(kCount));
    for (int i = 0; i < kCount; ++i) {
      ASSERT_TRUE(got[i].valid()) << i << ": " << got[i].status();
      EXPECT_EQ(got[i].data()[31], TestBytes<std::vector<uint8_t>>(i, 32)[31]) << i;
    }
    ASSERT_OK_AND_ASSIGN(StatsReply held, client_->Stats());
    EXPECT_EQ(HeldReferences(held), static_cast<uint64_t>(kCount));
    EXPECT_GT(held.slot_references, 0u);
    EXPECT_LE(held.slot_references, 16u);
    EXPECT_GE(held.ref_count, static_cast<uint64_t>(kCount - 16));
  }
  ASSERT_OK(client_->Delete(ids));
  ExpectBackAtBaseline();
}

TEST_F(ClientLifecycleTest, ReleaseByIdDropsAReferenceTakenThroughTheIndexAndThenAnswersAsTheSocketDoes) {
  // One window of 16 slots: every object's references share the same 16 words.
  ASSERT_NO_FATAL_FAILURE(StartStore(64ull << 20, {"--slots-per-client=16"}));
  const ObjectID x = ObjectID::FromLabel("release by id x");
  const ObjectID y = ObjectID::FromLabel("release by id y");
  ASSERT_OK(client_->Put(x, AsSpan(TestBytes<std::vector<uint8_t>>(1, 4000))));
  ASSERT_OK(client_->Put(y, AsSpan(TestBytes<std::vector<uint8_t>>(2, 4000))));
  std::unique_ptr<Client> reader = Connect("reader");
  std::unique_ptr<Client> stranger = Connect("stranger");
  const absl::Status never_held = stranger->Release(x);  // what the socket path answers
  EXPECT_FALSE(never_held.ok());
  {
    ASSERT_OK_AND_ASSIGN(ObjectBuffer bx, reader->GetOne(x));
    ASSERT_OK_AND_ASSIGN(StatsReply held, client_->Stats());
    ASSERT_EQ(held.slot_references, 1u) << "the get went through the index";
    ASSERT_OK(reader->Release(x));
    ASSERT_OK_AND_ASSIGN(StatsReply released, client_->Stats());
    EXPECT_EQ(HeldReferences(released), 0u);
    EXPECT_EQ(ErrorCodeOf(reader->Release(x)), ErrorCodeOf(never_held)) << "a second release answers as before";
    // Fill the other 15 words, so that y's get must take the word x's reference had; dropping x's
    // buffer then must not give y's back.
    const ObjectID z = ObjectID::FromLabel("release by id z");
    ASSERT_OK(client_->Put(z, AsSpan(TestBytes<std::vector<uint8_t>>(3, 100))));
    std::vector<ObjectBuffer> zs;
    for (int i = 0; i < 15; ++i) {
      ASSERT_OK_AND_ASSIGN(ObjectBuffer bz, reader->GetOne(z));
      zs.push_back(std::move(bz));
    }
    ASSERT_OK_AND_ASSIGN(ObjectBuffer by, reader->GetOne(y));
    ASSERT_OK_AND_ASSIGN(StatsReply full, client_->Stats());
    ASSERT_EQ(full.slot_references, 16u) << "y took the last free word: x's";
    bx = ObjectBuffer();
    ASSERT_OK_AND_ASSIGN(StatsReply after, client_->Stats());
    EXPECT_EQ(after.slot_references, 16u) << "y is still held";
    zs.clear();
    ASSERT_OK(client_->Delete({z}));
    ASSERT_OK(client_->Delete({y}));
    ASSERT_OK_AND_ASSIGN(StatsReply deferred, client_->Stats());
    EXPECT_GT(deferred.used_bytes, baseline_.used_bytes + 4000) << "y's bytes stay while held";
    EXPECT_EQ(std::vector<uint8_t>(by.data().begin(), by.data().end()), TestBytes<std::vector<uint8_t>>(2, 4000));
    // Released by id while its object is being reclaimed: the store frees it then.
    ASSERT_OK(reader->Release(y));
    EXPECT_TRUE(WaitForStats([&](const StatsReply& st) { return st.slot_references == 0; }));
  }
  ASSERT_OK(client_->Delete({x}));
  reader.reset();
  stranger.reset();
  ExpectBackAtBaseline();
}

TEST_F(ClientLifecycleTest, ReferenceCountsIncludeHoldsThroughTheIndex) {
  ASSERT_NO_FATAL_FAILURE(StartStore());
  const ObjectID id = ObjectID::FromLabel("counted");
  ASSERT_OK(client_->Put(id, AsSpan(TestBytes<std::vector<uint8_t>>(7, 2000))));
  std::unique_ptr<Client> reader = Connect("reader");
  std::unique_ptr<Client> socket_reader = Connect("socket reader", /*without_ipc=*/false);
  std::vector<ObjectBuffer> held;
  for (int i = 0; i < 3; ++i) {
    ASSERT_OK_AND_ASSIGN(ObjectBuffer b, reader->GetOne(id));
    held.push_back(std::move(b));
  }
  ASSERT_OK_AND_ASSIGN(ObjectBuffer by_socket, socket_reader->GetOne(id));
  ASSERT_OK_AND_ASSIGN(StatsReply stats, client_->Stats());
  EXPECT_EQ(stats.ref_count, 4u) << "every reference, whichever way it was taken";
  EXPECT_EQ(stats.slot_references, 3u) << "of which through slots";
  ASSERT_OK_AND_ASSIGN(std::vector<ObjectInfo> listed, client_->List());
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].ref_count, 4);
  held.clear();
  by_socket = ObjectBuffer();
  // That release has no reply: a round trip on its connection orders it before the List.
  ASSERT_OK(socket_reader->Stats().status());
  ASSERT_OK_AND_ASSIGN(listed, client_->List());
  EXPECT_EQ(listed[0].ref_count, 0);
  ASSERT_OK(client_->Delete({id}));
  reader.reset();
  socket_reader.reset();
  ExpectBackAtBaseline();
}

TEST_F(ClientLifecycleTest, ReadsThroughTheIndexKeepObjectsYoungForEviction) {
  constexpr uint64_t kMiB = 1 << 20;
  ASSERT_NO_FATAL_FAILURE(StartStore(10 * kMiB));
  ASSERT_OK_AND_ASSIGN(StatsReply empty, client_->Stats());
  const uint64_t fits = empty.capacity / kMiB;
  ASSERT_GE(fits, 4u);
  const std::vector<ObjectID> ids = Labels("lru", static_cast<int>(fits) + 2);
  for (uint64_t i = 0; i < fits; ++i) ASSERT_OK(client_->Put(ids[i], AsSpan(TestBytes<std::vector<uint8_t>>(i, kMiB))));
  // Objects 0 and 1 are read (get + release) through the index: no message to the store.
  std::unique_ptr<Client> reader = Connect("reader");
  for (int i = 0; i < 2; ++i) {
    ASSERT_OK_AND_ASSIGN(ObjectBuffer b, reader->GetOne(ids[i]));
    ASSERT_OK_AND_ASSIGN(StatsReply held, client_->Stats());
    ASSERT_EQ(held.slot_references, 1u) << "read through the index";
    EXPECT_EQ(b.data()[kMiB - 1], TestBytes<std::vector<uint8_t>>(i, kMiB)[kMiB - 1]);
  }
  // Two more objects: two must go, and the least recently used are 2 and 3, not 0 and 1.
  for (uint64_t i = fits; i < fits + 2; ++i)
    ASSERT_OK(client_->Put(ids[i], AsSpan(TestBytes<std::vector<uint8_t>>(i, kMiB))));
  ASSERT_OK_AND_ASSIGN(std::vector<bool> present, client_->Contains(ids));
  EXPECT_TRUE(present[0]) << "read just before: kept";
  EXPECT_TRUE(present[1]) << "read just before: kept";
  EXPECT_FALSE(present[2]) << "the least recently used: evicted";
  EXPECT_FALSE(present[3]);
  for (uint64_t i = 4; i < fits + 2; ++i) EXPECT_TRUE(present[i]) << i;
  std::vector<ObjectID> left;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (present[i]) left.push_back(ids[i]);
  }
  ASSERT_OK(client_->Delete(left));
  reader.reset();
  ExpectBackAtBaseline();
}

TEST_F(ClientLifecycleTest, ConnectingToNothingIsUnavailable) {
  ClientOptions options;
  options.store_socket = "/nonexistent/rplasma/store.sock";
  EXPECT_THAT(Client::Connect(options), HasErrorCode(ErrorCode::kUnavailable));
  options.store_socket = "";
  EXPECT_THAT(Client::Connect(options), HasErrorCode(ErrorCode::kInvalidArgument));
}

}  // namespace
}  // namespace rplasma::testing
