#include "manager/fetch/fetch_engine.h"

#include <atomic>
#include <thread>

#include "absl/strings/str_cat.h"
#include <gtest/gtest.h>

#include "manager/peer/batch_transfer.h"
#include "manager/peer/peer_service.h"
#include "nlohmann/json.hpp"
#include "protocol/base/notification.h"
#include "tests/support/fake_clock.h"
#include "tests/support/status_matchers.h"
#include "tests/support/wait_for.h"
#include "tests/unit/fetch/fetch_engine_fixture.h"

namespace rplasma::fetch {
namespace {

TEST_F(FetchEngineTest, SmallObjectsComeByGetAndLargeByPinWithEveryByteIntact) {
  const ObjectID small = ObjectID::FromLabel("small");
  const ObjectID large = ObjectID::FromLabel("large");
  PutRemote(small, testing::TestBytes(1, 1000), "meta");
  PutRemote(large, testing::TestBytes(2, 300000), "more-meta");
  std::vector<absl::Status> result = engine_->Fetch({small, large}, absl::Seconds(5));
  ASSERT_OK(result[0]);
  ASSERT_OK(result[1]);
  EXPECT_EQ(local_.Bytes(small), testing::TestBytes(1, 1000) + "meta");
  EXPECT_EQ(local_.Bytes(large), testing::TestBytes(2, 300000) + "more-meta");
  EXPECT_EQ(local_.Get(large).metadata_size, 9u);
  EXPECT_EQ(service_->stats()["gets"], 1u);
  EXPECT_EQ(service_->stats()["pins"], 1u);
  EXPECT_EQ(service_->stats()["unpins"], 1u);
  EXPECT_GE(channel_->reads.load(), 5) << "300 KB read in 64 KiB chunks";
  EXPECT_EQ(owner_.total_refs(), 0) << "no lease left behind";
  EXPECT_EQ(local_.total_refs(), 0);
  const nlohmann::json json = nlohmann::json::parse(stats_.ToJson({}));
  EXPECT_EQ(json.at("by_protocol").at("get").at("fetches"), 1) << json;
  EXPECT_EQ(json.at("by_protocol").at("pin").at("fetches"), 1) << json;
}

// With a LeaseEnder a Pin fetch answers its caller while its Unpin is still unanswered; the lease
// then ends on the ender's thread.
TEST_F(FetchEngineTest, APinFetchAnswersBeforeItsUnpinDoesAndTheLeaseEndsAfter) {
  peer::LeaseEnder ender(peer::LeaseEnderOptions{}, Clock::Real());
  lease_ender_ = &ender;
  ThresholdPolicyOptions policy_options;
  policy_options.setting.table.default_bytes = 4096;
  UsePolicy(policy_options);
  const ObjectID large = ObjectID::FromLabel("unpinned later");
  PutRemote(large, testing::TestBytes(3, 300000));
  Notification open;
  channel_->before_call = [&] {  // the FetchBatch goes through, the UnpinBatch after it waits
    if (channel_->calls.load() >= 2) (void)open.WaitForNotificationWithTimeout(absl::Seconds(10));
  };
  ASSERT_OK(engine_->Fetch({large}, absl::Seconds(5))[0]);
  EXPECT_EQ(local_.Bytes(large), testing::TestBytes(3, 300000));
  EXPECT_EQ(service_->stats()["pins"], 1u);
  EXPECT_EQ(service_->stats()["leases_live"], 1u) << "the Unpin is held: the fetch did not wait for it";
  open.Notify();
  EXPECT_TRUE(::rplasma::testing::WaitFor([&] { return service_->stats()["leases_live"] == 0; }, absl::Seconds(5)));
  EXPECT_EQ(owner_.total_refs(), 0) << "no lease left behind";
  EXPECT_EQ(ender.ended(), 1u);
  EXPECT_EQ(ender.failed(), 0u);
  engine_.reset();  // before the ender it borrows
}

// Each fetch's record says which protocol moved it and why (issue 25).
TEST_F(FetchEngineTest, EachFetchRecordSaysWhyItsProtocolWasChosen) {
  const ObjectID small = ObjectID::FromLabel("why small");
  const ObjectID large = ObjectID::FromLabel("why large");
  PutRemote(small, testing::TestBytes(1, 1000));
  PutRemote(large, testing::TestBytes(2, 300000));
  ASSERT_OK(engine_->Fetch({small}, absl::Seconds(5))[0]);
  ASSERT_OK(engine_->Fetch({large}, absl::Seconds(5))[0]);
  std::vector<ObjectID> batch = {ObjectID::FromLabel("why batch 1"), ObjectID::FromLabel("why batch 2")};
  PutRemote(batch[0], testing::TestBytes(3, 100));
  PutRemote(batch[1], testing::TestBytes(4, 100));
  for (const absl::Status& s : engine_->Fetch(batch, absl::Seconds(5))) ASSERT_OK(s);
  const nlohmann::json recent = nlohmann::json::parse(stats_.ToJson({})).at("recent_fetches");
  ASSERT_EQ(recent.size(), 3u) << recent;
  EXPECT_EQ(recent[0].at("protocol"), "get");
  EXPECT_EQ(recent[0].at("why"), "1000B <= the threshold 4KiB") << recent;
  EXPECT_EQ(recent[1].at("protocol"), "pin");
  EXPECT_EQ(recent[1].at("why"), "300000B > the threshold 4KiB") << recent;
  EXPECT_NE(recent[2].at("why").get<std::string>().find("batch of 2: inline up to the threshold 4KiB"),
            std::string::npos)
      << recent;
}

// Batches feed the threshold policy like single transfers do, in their own concurrency class, and
// only when the batch measured one protocol at one size (issue 25).
TEST_F(FetchEngineTest, UniformBatchesTeachThePolicyTheirClassAndMixedOnesDoNot) {
  ThresholdPolicyOptions policy_options;
  policy_options.setting.mode = ThresholdSetting::Mode::kAuto;
  policy_options.setting.table.default_bytes = 4096;
  policy_options.explore_every = 0;
  UsePolicy(policy_options);
  auto batch = [&](const std::string& label, std::vector<size_t> sizes) {
    std::vector<ObjectID> ids;
    for (size_t k = 0; k < sizes.size(); ++k) {
      ids.push_back(ObjectID::FromLabel(absl::StrCat(label, k)));
      PutRemote(ids.back(), testing::TestBytes(static_cast<int>(k), sizes[k]));
    }
    for (const absl::Status& s : engine_->Fetch(ids, absl::Seconds(5))) ASSERT_OK(s);
  };
  batch("uniform small a", std::vector<size_t>(20, 1000));
  batch("uniform small b", std::vector<size_t>(20, 900));
  batch("uniform large", std::vector<size_t>(20, 9000));
  batch("mixed protocols", {1000, 1000, 9000});
  batch("two buckets", std::vector<size_t>{100, 1000});
  const PeerExplanation e = policy_->Explain().at("b");
  EXPECT_TRUE(e.estimates.empty()) << "no single transfer yet";
  ASSERT_EQ(e.batches.size(), 2u) << "classes 2-16 and 17-256";
  EXPECT_EQ(e.batches[0].objects, "2-16");
  EXPECT_TRUE(e.batches[0].estimates.empty()) << "the mixed batches taught nothing";
  EXPECT_EQ(e.batches[1].objects, "17-256");
  ASSERT_EQ(e.batches[1].estimates.size(), 2u) << "1 KiB by Get, 16 KiB by Pin";
  EXPECT_EQ(e.batches[1].estimates[0].bytes, 1024u);
  EXPECT_EQ(e.batches[1].estimates[0].get_samples, 2u);
  EXPECT_EQ(e.batches[1].estimates[0].pin_samples, 0u);
  EXPECT_EQ(e.batches[1].estimates[1].bytes, 16384u);
  EXPECT_EQ(e.batches[1].estimates[1].pin_samples, 1u);
  EXPECT_EQ(e.batches[1].estimates[1].get_samples, 0u);
}

TEST_F(FetchEngineTest, AnExploredBatchGoesTheOtherWayWholeAndSaysSo) {
  ThresholdPolicyOptions policy_options;
  policy_options.setting.mode = ThresholdSetting::Mode::kAuto;
  policy_options.setting.table.default_bytes = 4096;
  policy_options.explore_every = 1;  // every batch next to the threshold explores
  UsePolicy(policy_options);
  std::vector<ObjectID> ids;
  for (int k = 0; k < 10; ++k) {
    ids.push_back(ObjectID::FromLabel(absl::StrCat("explored ", k)));
    PutRemote(ids.back(), testing::TestBytes(k, 3000));  // <= 4 KiB: inline unless exploring
  }
  for (const absl::Status& s : engine_->Fetch(ids, absl::Seconds(5))) ASSERT_OK(s);
  for (int k = 0; k < 10; ++k) EXPECT_EQ(local_.Bytes(ids[k]), testing::TestBytes(k, 3000));
  EXPECT_EQ(service_->stats()["pins"], 10u) << "the whole batch went by Pin";
  const nlohmann::json recent = nlohmann::json::parse(stats_.ToJson({})).at("recent_fetches");
  ASSERT_EQ(recent.size(), 1u) << recent;
  EXPECT_EQ(recent[0].at("protocol"), "pin");
  EXPECT_NE(recent[0].at("why").get<std::string>().find("exploring: the whole batch by pin"), std::string::npos)
      << recent;
  EXPECT_EQ(owner_.total_refs(), 0) << "no lease left behind";
  const PeerExplanation e = policy_->Explain().at("b");
  ASSERT_EQ(e.batches.size(), 1u);
  ASSERT_EQ(e.batches[0].estimates.size(), 1u);
  EXPECT_EQ(e.batches[0].estimates[0].pin_samples, 1u) << "the exploration measured Pin at 4 KiB";
}

TEST_F(FetchEngineTest, AnIdListedOnOtherNodesOnlyCostsNoStoreContains) {
  const ObjectID id = ObjectID::FromLabel("remote only");
  PutRemote(id, testing::TestBytes(10, 1024));
  std::vector<absl::Status> result = engine_->Fetch({id}, absl::Seconds(5));
  ASSERT_OK(result[0]);
  EXPECT_EQ(local_.contains_round_trips(), 0) << "the directory said: elsewhere only";
  EXPECT_EQ(directory_.lookups(), 1);
  EXPECT_EQ(channel_->calls.load(), 1);
  EXPECT_EQ(local_.Bytes(id), testing::TestBytes(10, 1024));
  EXPECT_EQ(stats_.fetch_local.load(), 0u);
}

TEST_F(FetchEngineTest, ABatchListedOnOtherNodesOnlyCostsNoStoreContains) {
  std::vector<ObjectID> ids;
  for (int i = 0; i < 5; ++i) {
    ids.push_back(ObjectID::FromLabel(absl::StrCat("remote batch ", i)));
    PutRemote(ids.back(), testing::TestBytes(i, 100 + i));
  }
  ids.push_back(ids[0]);
  std::vector<absl::Status> result = engine_->Fetch(ids, absl::Seconds(5));
  for (const absl::Status& s : result) EXPECT_OK(s);
  EXPECT_EQ(local_.contains_round_trips(), 0);
  EXPECT_EQ(channel_->calls.load(), 1) << "one FetchBatch for the five distinct ids of one source";
  for (int i = 0; i < 5; ++i) EXPECT_EQ(local_.Bytes(ids[i]), testing::TestBytes(i, 100 + i));
  EXPECT_EQ(stats_.batch_transfers.load(), 1u);
}

TEST_F(FetchEngineTest, AnIdListedNowhereButSealedHereSucceedsWithoutATransfer) {
  const ObjectID id = ObjectID::FromLabel("here, unpublished");
  local_.Put(id, "local bytes");
  std::vector<absl::Status> result = engine_->Fetch({id, id}, absl::Seconds(1));
  EXPECT_OK(result[0]);
  EXPECT_OK(result[1]);
  EXPECT_EQ(directory_.lookups(), 1);
  EXPECT_EQ(local_.contains_round_trips(), 1) << "listed nowhere: the store is asked once";
  EXPECT_EQ(channel_->calls.load(), 0);
  EXPECT_EQ(stats_.fetch_local.load(), 1u);
  EXPECT_EQ(local_.Bytes(id), "local bytes");
}

TEST_F(FetchEngineTest, AnIdListedOnThisNodeIsAskedOfTheStoreAndNotTransferred) {
  const ObjectID id = ObjectID::FromLabel("here and there");
  FakeLocalStore::Entry mine = local_.Put(id, "local bytes");
  ASSERT_OK(directory_.PublishObject(id, ObjectLocation{"a", {mine.data_size, 0, mine.generation, mine.checksum}}));
  PutRemote(id, "remote bytes");
  std::vector<absl::Status> result = engine_->Fetch({id}, absl::Seconds(1));
  ASSERT_OK(result[0]);
  EXPECT_EQ(local_.contains_round_trips(), 1);
  EXPECT_EQ(channel_->calls.load(), 0) << "sealed here: node b is never asked";
  EXPECT_EQ(stats_.fetch_local.load(), 1u);
  EXPECT_EQ(local_.Bytes(id), "local bytes");
}

TEST_F(FetchEngineTest, AStaleLocationOfThisNodeFallsBackToTheOtherSource) {
  const ObjectID id = ObjectID::FromLabel("evicted here");
  FakeLocalStore::Entry theirs = PutRemote(id, testing::TestBytes(11, 700));
  // The directory still lists this node (its object was evicted, the removal not yet published).
  ASSERT_OK(directory_.PublishObject(id, ObjectLocation{"a", {theirs.data_size, 0, 99, 1}}));
  std::vector<absl::Status> result = engine_->Fetch({id}, absl::Seconds(2));
  ASSERT_OK(result[0]);
  EXPECT_EQ(local_.contains_round_trips(), 1);
  EXPECT_EQ(channel_->calls.load(), 1);
  EXPECT_EQ(local_.Bytes(id), testing::TestBytes(11, 700));
}

TEST_F(FetchEngineTest, AnIdSealedHereButListedOnlyElsewhereSucceedsWhenCreateFindsIt) {
  const ObjectID id = ObjectID::FromLabel("here, listed there");
  local_.Put(id, "local bytes");
  PutRemote(id, "remote bytes");
  std::vector<absl::Status> result = engine_->Fetch({id}, absl::Seconds(1));
  ASSERT_OK(result[0]);
  EXPECT_EQ(local_.contains_round_trips(), 1) << "asked only after Create reported ObjectExists";
  EXPECT_EQ(local_.Bytes(id), "local bytes") << "the local object is untouched";
  EXPECT_EQ(local_.aborts(), 0);
  EXPECT_EQ(stats_.transfer_failures.load(), 0u);
  EXPECT_EQ(stats_.fetch_local.load(), 1u);
  EXPECT_EQ(owner_.total_refs(), 0);
}

TEST_F(FetchEngineTest, AnIdSealedHereWhileWaitingForALocationIsFoundWithoutATransfer) {
  const ObjectID id = ObjectID::FromLabel("sealed here later");
  // It is sealed here while the engine backs off; never published, so only the store can say.
  bool written = false;
  clock_.set_on_sleep([&] {
    if (!written) local_.Put(id, "arrived locally");
    written = true;
  });
  std::vector<absl::Status> result = engine_->Fetch({id}, absl::Seconds(10));
  ASSERT_OK(result[0]);
  EXPECT_GE(local_.contains_batches(), 2);
  EXPECT_EQ(channel_->calls.load(), 0);
  EXPECT_EQ(local_.Bytes(id), "arrived locally");
}

TEST_F(FetchEngineTest, ALocalIdSucceedsWhileTheDirectoryIsDownAndOthersFailWithUnavailable) {
  const ObjectID here = ObjectID::FromLabel("here, redis down");
  const ObjectID there = ObjectID::FromLabel("there, redis down");
  local_.Put(here, "local bytes");
  PutRemote(there, "remote bytes");
  directory_.SetDown(true);
  std::vector<absl::Status> result = engine_->Fetch({here, there}, absl::Seconds(10));
  EXPECT_OK(result[0]);
  EXPECT_THAT(result[1], HasErrorCode(ErrorCode::kUnavailable));
  EXPECT_EQ(local_.contains_batches(), 1);
  EXPECT_EQ(channel_->calls.load(), 0);
}

TEST_F(FetchEngineTest, AFailedStoreContainsFailsTheIdsItWasAskedAbout) {
  const ObjectID nowhere = ObjectID::FromLabel("listed nowhere, store fails");
  const ObjectID there = ObjectID::FromLabel("listed there, store fails");
  PutRemote(there, testing::TestBytes(12, 300));
  local_.fail_contains = true;
  std::vector<absl::Status> result = engine_->Fetch({nowhere, there}, absl::Seconds(10));
  EXPECT_THAT(result[0], HasErrorCode(ErrorCode::kUnavailable));
  EXPECT_OK(result[1]) << "an id listed elsewhere only never needed the store's Contains";
  EXPECT_EQ(local_.Bytes(there), testing::TestBytes(12, 300));
}

TEST_F(FetchEngineTest, ABatchAsksTheLocalStoreOnceAndFetchesOnlyWhatIsMissing) {
  std::vector<ObjectID> ids;
  for (int i = 0; i < 20; ++i) {
    ids.push_back(ObjectID::FromLabel(absl::StrCat("batch ", i)));
    if (i % 2 == 0) {
      local_.Put(ids.back(), "already here");
    } else {
      PutRemote(ids.back(), testing::TestBytes(i, 1000 + i));
    }
  }
  ids.push_back(ids[1]);  // a duplicate of a remote id
  std::vector<absl::Status> result = engine_->Fetch(ids, absl::Seconds(5));
  ASSERT_EQ(result.size(), ids.size());
  for (const absl::Status& s : result) EXPECT_OK(s);
  EXPECT_EQ(local_.contains_round_trips(), 1) << "one store round trip for the ids listed nowhere";
  EXPECT_EQ(stats_.fetch_local.load(), 10u);
  EXPECT_EQ(channel_->calls.load(), 1) << "one FetchBatch for the ten missing ids";
  for (int i = 1; i < 20; i += 2) EXPECT_EQ(local_.Bytes(ids[i]), testing::TestBytes(i, 1000 + i));
}

TEST_F(FetchEngineTest, ConcurrentFetchesOfOneIdAreMergedIntoOneTransfer) {
  const ObjectID id = ObjectID::FromLabel("merged");
  PutRemote(id, testing::TestBytes(3, 2000));
  Notification entered, release;
  channel_->before_call = [&] {
    if (!entered.HasBeenNotified()) entered.Notify();
    release.WaitForNotification();
  };
  std::vector<absl::Status> first;
  std::thread leader([&] { first = engine_->Fetch({id}, absl::Seconds(10)); });
  entered.WaitForNotification();
  std::vector<absl::Status> second;
  std::thread follower([&] { second = engine_->Fetch({id}, absl::Seconds(10)); });
  ASSERT_TRUE(::rplasma::testing::WaitFor([&] { return stats_.fetch_merged.load() == 1; }, absl::Seconds(5)));
  release.Notify();
  leader.join();
  follower.join();
  EXPECT_OK(first[0]);
  EXPECT_OK(second[0]);
  EXPECT_EQ(service_->stats()["gets"], 1u) << "one transfer for both callers";
  EXPECT_EQ(local_.Bytes(id), testing::TestBytes(3, 2000));
}

TEST_F(FetchEngineTest, AFailedReadAbortsTheLocalObjectAndReportsTheError) {
  const ObjectID id = ObjectID::FromLabel("read fails");
  PutRemote(id, testing::TestBytes(4, 100000));
  channel_->fail_reads = true;
  std::vector<absl::Status> result = engine_->Fetch({id}, absl::Seconds(2));
  EXPECT_THAT(result[0], HasErrorCode(ErrorCode::kUnavailable));
  EXPECT_FALSE(*local_.Contains(id));
  EXPECT_EQ(local_.unsealed(), 0) << "partial object never left behind";
  EXPECT_EQ(local_.aborts(), 1);
  EXPECT_EQ(owner_.total_refs(), 0) << "unpinned after the failure";
}

TEST_F(FetchEngineTest, ChecksumMismatchIsRejectedAndNeverSealed) {
  const ObjectID id = ObjectID::FromLabel("corrupt");
  PutRemote(id, testing::TestBytes(5, 100000));
  channel_->corrupt_reads = true;
  std::vector<absl::Status> result = engine_->Fetch({id}, absl::Milliseconds(300));
  EXPECT_THAT(result[0], HasErrorCode(ErrorCode::kDeadlineExceeded));
  EXPECT_NE(result[0].message().find("checksum"), absl::string_view::npos) << result[0];
  EXPECT_FALSE(*local_.Contains(id));
  EXPECT_EQ(local_.unsealed(), 0);
  EXPECT_GE(stats_.checksum_mismatches.load(), 1u);
}

TEST_F(FetchEngineTest, ReadsFinishingAfterTheLeaseExpiredAreDiscardedAndTheFetchRetries) {
  peer::PeerServiceOptions short_lease;
  short_lease.leases.ttl = absl::Milliseconds(100);
  short_lease.clock = &clock_;  // the owner's leases run on the same clock as the reader
  std::unique_ptr<peer::PeerService> service = *peer::PeerService::Create(short_lease, &owner_, testing::ArenaRegion);
  auto channel = std::make_shared<FakeChannel>(service.get(), &owner_, 2);
  connector_.Add("b", channel);
  // The reader is stalled after its first READ until its lease is over (a stopped process; the
  // reader judges the lease by its own clock):
  // after its only READ (one chunk; the lapse is found when the reads are done), or before the
  // next chunk is read (the lapse is found before asking the owner for bytes it may have reused).
  int expected_aborts = 0;
  for (size_t size : {50000, 200000}) {
    const ObjectID id = ObjectID::FromLabel(absl::StrCat("lease lapses ", size));
    PutRemote(id, testing::TestBytes(8, size));
    std::atomic<int> stalls{0};
    channel->after_read = [&] {
      if (stalls.fetch_add(1) == 0) clock_.Advance(absl::Milliseconds(150));
    };
    std::vector<absl::Status> result = engine_->Fetch({id}, absl::Seconds(5));
    ASSERT_OK(result[0]) << size;
    EXPECT_EQ(local_.Bytes(id), testing::TestBytes(8, size));
    EXPECT_EQ(local_.aborts(), ++expected_aborts) << "the read that outlived its lease was discarded, then retried";
    EXPECT_EQ(owner_.total_refs(), 0) << "the owner released the pin of both attempts";
    EXPECT_EQ(stats_.lease_lapses.load(), static_cast<uint64_t>(expected_aborts));
    EXPECT_EQ(stats_.checksum_mismatches.load(), 0u);
    channel->after_read = nullptr;
  }
  channel.reset();
  connector_.Add("b", channel_);
  service->Shutdown();
}

TEST_F(FetchEngineTest, OwnersGenerationWinsOverTheDirectoryHintAndIsCounted) {
  const ObjectID id = ObjectID::FromLabel("generation");
  FakeLocalStore::Entry e = owner_.Put(id, testing::TestBytes(6, 500));
  ASSERT_OK(directory_.PublishObject(id, ObjectLocation{"b", {e.data_size, 0, e.generation + 100, e.checksum}}));
  std::vector<absl::Status> result = engine_->Fetch({id}, absl::Seconds(2));
  ASSERT_OK(result[0]);
  EXPECT_EQ(stats_.generation_hint_mismatches.load(), 1u);
  EXPECT_EQ(local_.Bytes(id), testing::TestBytes(6, 500));
}

TEST_F(FetchEngineTest, StaleLocationOfADeletedObjectWaitsForTheNewOne) {
  const ObjectID id = ObjectID::FromLabel("later");
  // The directory says b has it, but b does not (deleted): the engine keeps looking.
  ASSERT_OK(directory_.PublishObject(id, ObjectLocation{"b", {10, 0, 1, 1}}));
  // The new object appears while the engine backs off after finding b without it.
  bool written = false;
  clock_.set_on_sleep([&] {
    if (!written) PutRemote(id, testing::TestBytes(7, 10));
    written = true;
  });
  std::vector<absl::Status> result = engine_->Fetch({id}, absl::Seconds(5));
  ASSERT_OK(result[0]);
  EXPECT_EQ(local_.Bytes(id), testing::TestBytes(7, 10));
  EXPECT_GT(stats_.directory_polls.load(), 0u);
}

TEST_F(FetchEngineTest, AnIdSealedNowhereTimesOut) {
  const ObjectID id = ObjectID::FromLabel("never");
  const absl::Time start = clock_.Now();
  std::vector<absl::Status> result = engine_->Fetch({id}, absl::Milliseconds(200));
  EXPECT_THAT(result[0], HasErrorCode(ErrorCode::kDeadlineExceeded));
  EXPECT_GT(clock_.sleeps(), 1) << "it kept looking with back-off";
  EXPECT_LE(clock_.Now() - start, absl::Milliseconds(200)) << "and never slept past the deadline";
}

TEST_F(FetchEngineTest, AnUnreachableSourceIsSkippedForTheNextOne) {
  const ObjectID id = ObjectID::FromLabel("two sources");
  FakeLocalStore::Entry e = owner_.Put(id, testing::TestBytes(8, 800));
  ASSERT_OK(directory_.PublishObject(id, ObjectLocation{"dead", {e.data_size, 0, e.generation, e.checksum}}));
  ASSERT_OK(directory_.PublishObject(id, ObjectLocation{"b", {e.data_size, 0, e.generation, e.checksum}}));
  std::vector<absl::Status> result = engine_->Fetch({id}, absl::Seconds(2));
  ASSERT_OK(result[0]);
  EXPECT_EQ(stats_.transfer_failures.load(), 1u);
}

TEST_F(FetchEngineTest, ShutdownMakesWaitingFetchesGiveUp) {
  // Shut down while the fetch backs off between lookups of an id sealed nowhere.
  clock_.set_on_sleep([&] { engine_->Shutdown(); });
  const absl::Time start = clock_.Now();
  std::vector<absl::Status> result = engine_->Fetch({ObjectID::FromLabel("never sealed")}, absl::Seconds(30));
  EXPECT_THAT(result[0], HasErrorCode(ErrorCode::kUnavailable));
  EXPECT_EQ(clock_.sleeps(), 1) << "it gave up at its next turn";
  EXPECT_LT(clock_.Now() - start, absl::Seconds(1));
}

TEST_F(FetchEngineTest, DirectoryDownFailsFastWithUnavailable) {
  directory_.SetDown(true);
  const absl::Time start = absl::Now();
  std::vector<absl::Status> result = engine_->Fetch({ObjectID::FromLabel("x")}, absl::Seconds(10));
  EXPECT_THAT(result[0], HasErrorCode(ErrorCode::kUnavailable));
  EXPECT_LT(absl::Now() - start, absl::Seconds(1));
}

TEST_F(FetchEngineTest, MalformedPeerRequestsGetErrorRepliesAndTheServiceKeepsServing) {
  EXPECT_FALSE(peer::DecodeReply(service_->HandleCall(9, "garbage").Flatten()).ok());
  EXPECT_FALSE(peer::DecodeReply(service_->HandleCall(9, std::string(100, '\xff')).Flatten()).ok());
  EXPECT_EQ(service_->stats()["bad_requests"], 2u);
  // A read of a region never leased is refused.
  EXPECT_FALSE(service_->AllowRead(9, transport::RemoteRegion{0, 64, 0}));
  const ObjectID id = ObjectID::FromLabel("after garbage");
  PutRemote(id, testing::TestBytes(9, 100));
  EXPECT_OK(engine_->Fetch({id}, absl::Seconds(2))[0]);
}

}  // namespace
}  // namespace rplasma::fetch
