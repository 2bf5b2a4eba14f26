// The fetch engine's batches (issue 10): several ids from one source travel together in one
// round trip, small ones inline and large ones pinned, each id failing or arriving on its own.
// Part of fetch_unit_test (FetchEngineTest's fixture).
#include <vector>

#include "absl/strings/str_cat.h"
#include <gtest/gtest.h>

#include "manager/peer/batch_transfer.h"
#include "nlohmann/json.hpp"
#include "protocol/store_messages.h"
#include "tests/support/status_matchers.h"
#include "tests/unit/fetch/fetch_engine_fixture.h"

namespace rplasma::fetch {
namespace {

TEST_F(FetchEngineTest, AMixedBatchMovesInOneRoundTripWithEveryByteIntact) {
  std::vector<ObjectID> ids;
  std::vector<std::string> bytes;
  for (int i = 0; i < 30; ++i) {
    ids.push_back(ObjectID::FromLabel(absl::StrCat("mixed ", i)));
    // Both sides of the 4096-byte threshold: 20 small (with metadata), 10 large.
    bytes.push_back(i < 20 ? testing::TestBytes(i, 500 + 97 * i) : testing::TestBytes(i, 100000 + 4099 * i));
    PutRemote(ids.back(), bytes.back(), i % 3 == 0 ? "m" : "");
    if (i % 3 == 0) bytes.back() += "m";
  }
  std::vector<ObjectID> asked = ids;
  asked.push_back(ids[3]);  // duplicates share the outcome
  asked.push_back(ids[25]);
  std::vector<absl::Status> result = engine_->Fetch(asked, absl::Seconds(5));
  ASSERT_EQ(result.size(), asked.size());
  for (const absl::Status& s : result) EXPECT_OK(s);
  for (int i = 0; i < 30; ++i) EXPECT_EQ(local_.Bytes(ids[i]), bytes[i]) << i;
  EXPECT_EQ(service_->stats()["fetch_batches"], 1u);
  EXPECT_EQ(service_->stats()["gets"], 20u) << "the small ones inline";
  EXPECT_EQ(service_->stats()["pins"], 10u) << "the large ones pinned, in the same reply";
  EXPECT_EQ(service_->stats()["unpins"], 10u) << "one UnpinBatch ends every lease";
  EXPECT_EQ(channel_->calls.load(), 2) << "FetchBatch, UnpinBatch";
  EXPECT_EQ(owner_.total_refs(), 0) << "no store reference or lease left on the owner";
  EXPECT_EQ(local_.total_refs(), 0);
  EXPECT_EQ(local_.unsealed(), 0);
  const nlohmann::json json = nlohmann::json::parse(stats_.ToJson({}));
  EXPECT_EQ(json.at("by_protocol").at("get").at("objects"), 20) << json;
  EXPECT_EQ(json.at("by_protocol").at("pin").at("objects"), 10) << json;
}

// The owner chooses by each object's true size and by what its reply may still carry: what does
// not fit the reply's inline budget is pinned in the same reply, never refused.
TEST_F(FetchEngineTest, ObjectsBeyondTheRepliesInlineBudgetArePinnedInTheSameRoundTrip) {
  std::vector<ObjectID> ids;
  for (int i = 0; i < 5; ++i) {
    ids.push_back(ObjectID::FromLabel(absl::StrCat("budget ", i)));
    PutRemote(ids.back(), testing::TestBytes(i, 1000));
  }
  peer::BatchTransferOptions options;
  options.inline_budget_bytes = 2500;  // two of the five fit
  const peer::BatchTransferResult result =
      peer::TransferBatch(*channel_, local_, ids, ~uint64_t{0}, clock_.Now() + absl::Seconds(5), options, clock_);
  for (int i = 0; i < 5; ++i) {
    EXPECT_OK(result.statuses[i]) << i;
    EXPECT_EQ(local_.Bytes(ids[i]), testing::TestBytes(i, 1000)) << i;
  }
  EXPECT_EQ(service_->stats()["gets"], 2u);
  EXPECT_EQ(service_->stats()["pins"], 3u);
  EXPECT_EQ(result.pinned_objects, 3u);
  EXPECT_EQ(result.pinned_bytes, 3000u);
  EXPECT_EQ(result.bytes, 5000u);
  EXPECT_EQ(channel_->calls.load(), 2) << "FetchBatch, then one UnpinBatch for the three leases";
  EXPECT_EQ(owner_.total_refs(), 0);
  EXPECT_EQ(local_.unsealed(), 0);
  // inline_max 0: every object with bytes is pinned.
  std::vector<ObjectID> more = {ObjectID::FromLabel("pin all 1"), ObjectID::FromLabel("pin all 2")};
  PutRemote(more[0], testing::TestBytes(7, 10));
  PutRemote(more[1], testing::TestBytes(8, 20));
  const peer::BatchTransferResult pinned =
      peer::TransferBatch(*channel_, local_, more, 0, clock_.Now() + absl::Seconds(5), options, clock_);
  EXPECT_OK(pinned.statuses[0]);
  EXPECT_OK(pinned.statuses[1]);
  EXPECT_EQ(pinned.pinned_objects, 2u);
  EXPECT_EQ(local_.Bytes(more[1]), testing::TestBytes(8, 20));
}

// Inline objects of a small batch go to the store in one-request puts, but never one above the
// store's inline put limit (the fake refuses those as the store does): a single object may come
// inline far larger, and is created in place.
TEST_F(FetchEngineTest, InlineObjectsAboveTheStoresPutLimitAreCreatedInPlace) {
  const std::vector<ObjectID> one = {ObjectID::FromLabel("inline large")};
  PutRemote(one[0], testing::TestBytes(1, kMaxInlinePutBytes + 4096));
  peer::BatchTransferOptions options;
  const peer::BatchTransferResult single =
      peer::TransferBatch(*channel_, local_, one, ~uint64_t{0}, clock_.Now() + absl::Seconds(5), options, clock_);
  EXPECT_OK(single.statuses[0]);
  EXPECT_EQ(single.pinned_objects, 0u) << "it came inline";
  EXPECT_EQ(local_.Bytes(one[0]), testing::TestBytes(1, kMaxInlinePutBytes + 4096));
  const std::vector<ObjectID> two = {ObjectID::FromLabel("inline half 1"), ObjectID::FromLabel("inline half 2")};
  PutRemote(two[0], testing::TestBytes(2, kMaxInlinePutBytes / 2));
  PutRemote(two[1], testing::TestBytes(3, kMaxInlinePutBytes / 2));
  const peer::BatchTransferResult pair =
      peer::TransferBatch(*channel_, local_, two, ~uint64_t{0}, clock_.Now() + absl::Seconds(5), options, clock_);
  EXPECT_OK(pair.statuses[0]);
  EXPECT_OK(pair.statuses[1]);
  EXPECT_EQ(local_.Bytes(two[1]), testing::TestBytes(3, kMaxInlinePutBytes / 2));
  EXPECT_EQ(local_.unsealed(), 0);
  EXPECT_EQ(local_.total_refs(), 0);
}

TEST_F(FetchEngineTest, AbsentIdsInABatchFailAloneAndTheRestArrive) {
  std::vector<ObjectID> ids;
  for (int i = 0; i < 6; ++i) {
    ids.push_back(ObjectID::FromLabel(absl::StrCat("present ", i)));
    PutRemote(ids.back(), testing::TestBytes(i, i < 3 ? 800 : 9000));
  }
  // Listed on "b" but gone from its store (deleted there), small and large.
  const ObjectID gone_small = ObjectID::FromLabel("gone small");
  const ObjectID gone_large = ObjectID::FromLabel("gone large");
  ASSERT_OK(directory_.PublishObject(gone_small, ObjectLocation{"b", {700, 0, 1, 1}}));
  ASSERT_OK(directory_.PublishObject(gone_large, ObjectLocation{"b", {70000, 0, 1, 1}}));
  const ObjectID unknown = ObjectID::FromLabel("listed nowhere");
  std::vector<ObjectID> asked = ids;
  asked.insert(asked.begin() + 2, gone_small);
  asked.insert(asked.begin() + 5, gone_large);
  asked.push_back(unknown);
  std::vector<absl::Status> result = engine_->Fetch(asked, absl::Seconds(1));
  ASSERT_EQ(result.size(), asked.size());
  for (size_t k = 0; k < asked.size(); ++k) {
    if (asked[k] == gone_small || asked[k] == gone_large || asked[k] == unknown) {
      EXPECT_THAT(result[k], HasErrorCode(ErrorCode::kDeadlineExceeded)) << k;
    } else {
      EXPECT_OK(result[k]);
    }
  }
  for (int i = 0; i < 6; ++i) EXPECT_EQ(local_.Bytes(ids[i]), testing::TestBytes(i, i < 3 ? 800 : 9000));
  EXPECT_EQ(local_.unsealed(), 0);
  EXPECT_EQ(owner_.total_refs(), 0);
}

TEST_F(FetchEngineTest, IdsOnTwoSourcesComeFromBothInOneFetch) {
  FakeLocalStore other(16 << 20);
  peer::PeerServiceOptions service_options;
  std::unique_ptr<peer::PeerService> other_service =
      *peer::PeerService::Create(service_options, &other, testing::ArenaRegion);
  auto other_channel = std::make_shared<FakeChannel>(other_service.get(), &other, 2);
  connector_.Add("c", other_channel);
  std::vector<ObjectID> ids;
  for (int i = 0; i < 20; ++i) {
    ids.push_back(ObjectID::FromLabel(absl::StrCat("two sources ", i)));
    if (i % 2 == 0) {
      PutRemote(ids.back(), testing::TestBytes(i, 1000 + i));
    } else {
      FakeLocalStore::Entry e = other.Put(ids.back(), testing::TestBytes(i, 1000 + i));
      ASSERT_OK(directory_.PublishObject(ids.back(), ObjectLocation{"c", e.description()}));
    }
  }
  std::vector<absl::Status> result = engine_->Fetch(ids, absl::Seconds(5));
  for (const absl::Status& s : result) EXPECT_OK(s);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(local_.Bytes(ids[i]), testing::TestBytes(i, 1000 + i));
  EXPECT_EQ(channel_->calls.load(), 1);
  EXPECT_EQ(other_channel->calls.load(), 1);
  EXPECT_EQ(stats_.batch_transfers.load(), 2u);
  connector_.Add("c", nullptr);
  other_channel.reset();
  other_service->Shutdown();
}

TEST_F(FetchEngineTest, TenThousandIdsInOneFetchAreSplitNeverRefused) {
  std::vector<ObjectID> ids;
  for (int i = 0; i < 10000; ++i) {
    ids.push_back(ObjectID::FromLabel(absl::StrCat("many ", i)));
    PutRemote(ids.back(), absl::StrCat("object number ", i));
  }
  std::vector<absl::Status> result = engine_->Fetch(ids, absl::Seconds(30));
  ASSERT_EQ(result.size(), ids.size());
  for (const absl::Status& s : result) ASSERT_OK(s);
  for (int i = 0; i < 10000; i += 7) EXPECT_EQ(local_.Bytes(ids[i]), absl::StrCat("object number ", i));
  // Led in chunks of pipeline_ids (each at most kMaxBatchIds): one FetchBatch per chunk.
  const size_t chunk = std::min(FetchEngineOptions{}.pipeline_ids, peer::kMaxBatchIds);
  EXPECT_EQ(channel_->calls.load(), static_cast<int>((10000 + chunk - 1) / chunk));
  EXPECT_EQ(service_->stats()["gets"], 10000u);
}

TEST_F(FetchEngineTest, ACorruptedObjectInABatchIsRejectedAloneAndNeverSealed) {
  std::vector<ObjectID> ids;
  for (int i = 0; i < 8; ++i) {
    ids.push_back(ObjectID::FromLabel(absl::StrCat("corrupt batch ", i)));
    PutRemote(ids.back(), testing::TestBytes(i, i < 4 ? 2000 : 50000));
  }
  // After the seal, one small and one large object's bytes change on the owner.
  for (int i : {1, 6}) owner_.arena_base()[owner_.Get(ids[i]).offset + 17] ^= 0x5a;
  // A mismatch may be an object replaced meanwhile: the two are retried (alone) until the deadline.
  std::vector<absl::Status> result = engine_->Fetch(ids, absl::Seconds(1));
  for (int i = 0; i < 8; ++i) {
    if (i == 1 || i == 6) {
      EXPECT_THAT(result[i], HasErrorCode(ErrorCode::kDeadlineExceeded)) << i;
      EXPECT_NE(result[i].message().find("checksum"), absl::string_view::npos) << result[i];
      EXPECT_FALSE(*local_.Contains(ids[i]));
    } else {
      EXPECT_OK(result[i]) << i;
      EXPECT_EQ(local_.Bytes(ids[i]), testing::TestBytes(i, i < 4 ? 2000 : 50000));
    }
  }
  EXPECT_GE(stats_.checksum_mismatches.load(), 2u);
  EXPECT_EQ(local_.unsealed(), 0) << "the large one is created, read and aborted at each attempt";
  EXPECT_GE(local_.aborts(), 1);
  EXPECT_EQ(owner_.total_refs(), 0);
}

TEST_F(FetchEngineTest, ABatchLargerThanTheFreeArenaBringsWhatFitsAndTheRestFailsOutOfMemory) {
  // A reader holds the filler, so the store cannot evict it to make room.
  local_.Put(ObjectID::FromLabel("filler"), std::string(40 << 20, 'f'));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<peer::PinnedObject> held, local_.Pin(ObjectID::FromLabel("filler")));
  std::vector<ObjectID> ids;
  for (int i = 0; i < 10; ++i) {
    ids.push_back(ObjectID::FromLabel(absl::StrCat("too many ", i)));
    PutRemote(ids.back(), testing::TestBytes(i, 4 << 20));
  }
  std::vector<absl::Status> result = engine_->Fetch(ids, absl::Seconds(10));
  int ok = 0, oom = 0;
  for (int i = 0; i < 10; ++i) {
    if (result[i].ok()) {
      ++ok;
      EXPECT_EQ(local_.Bytes(ids[i]), testing::TestBytes(i, 4 << 20));
    } else {
      EXPECT_THAT(result[i], HasErrorCode(ErrorCode::kOutOfMemory)) << i;
      ++oom;
    }
  }
  EXPECT_GE(ok, 4);  // 24 MiB free: five of 4 MiB fit
  EXPECT_GE(oom, 1);
  EXPECT_EQ(ok + oom, 10);
  EXPECT_EQ(local_.unsealed(), 0);
  EXPECT_EQ(owner_.total_refs(), 0) << "every lease ended, the refused ones too";
}

}  // namespace
}  // namespace rplasma::fetch
