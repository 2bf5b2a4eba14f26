// How the fetch engine finds a source: the location cache (location_cache.h), the caller's hint,
// the directory; and that a wrong cache entry or hint costs one attempt, never the fetch or its
// bytes. Node "a" fetches; "b" (the fixture's owner) and "c" (OtherNode) hold objects.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include <gtest/gtest.h>

#include "manager/fetch/location_cache.h"
#include "tests/unit/fetch/fetch_engine_fixture.h"

namespace rplasma::fetch {
namespace {

class FetchRoutingTest : public FetchEngineTest {
 protected:
  std::vector<ObjectID> PutRemoteBatch(const std::string& label, int n, size_t bytes) {
    std::vector<ObjectID> ids;
    for (int i = 0; i < n; ++i) {
      ids.push_back(ObjectID::FromLabel(absl::StrCat(label, i)));
      PutRemote(ids.back(), testing::TestBytes(i, bytes));
    }
    return ids;
  }
  void ExpectAllOk(const std::vector<absl::Status>& statuses) {
    for (const absl::Status& s : statuses) EXPECT_OK(s);
  }
};

TEST_F(FetchRoutingTest, AWarmFetchGoesStraightToTheOwnerWithoutTheDirectory) {
  const std::vector<ObjectID> ids = PutRemoteBatch("warm ", 5, 1000);
  ExpectAllOk(engine_->Fetch(ids, absl::Seconds(5)));
  EXPECT_EQ(directory_.lookups(), 1);
  EXPECT_EQ(stats_.location_cache_misses.load(), 5u);
  for (const ObjectID& id : ids) local_.Erase(id);  // this node's copies dropped
  ExpectAllOk(engine_->Fetch(ids, absl::Seconds(5)));
  EXPECT_EQ(directory_.lookups(), 1) << "warm: no directory call";
  EXPECT_EQ(stats_.location_cache_hits.load(), 5u);
  EXPECT_EQ(stats_.directory_lookups.load(), 5u) << "five ids asked of the directory in all";
  EXPECT_EQ(channel_->calls.load(), 2) << "one FetchBatch each time";
  for (int i = 0; i < 5; ++i) EXPECT_EQ(local_.Bytes(ids[i]), testing::TestBytes(i, 1000));
  EXPECT_EQ(stats_.location_cache_stale.load(), 0u);
}

TEST_F(FetchRoutingTest, ACachedOrHintedIdSealedHereIsNotTransferredAgain) {
  const std::vector<ObjectID> ids = PutRemoteBatch("here already ", 3, 100);
  ExpectAllOk(engine_->Fetch(ids, absl::Seconds(5)));
  const int calls = channel_->calls.load();
  ExpectAllOk(engine_->Fetch(ids, absl::Seconds(5)));  // cached, and sealed here
  ExpectAllOk(engine_->Fetch({ids[0]}, absl::Seconds(5), "b"));
  EXPECT_EQ(channel_->calls.load(), calls) << "the shared index said: here";
  EXPECT_EQ(local_.contains_round_trips(), 0);
  EXPECT_EQ(directory_.lookups(), 1);
  EXPECT_EQ(stats_.fetch_local.load(), 4u);
}

TEST_F(FetchRoutingTest, AnObjectMovedToAnotherNodeCostsOneRetryThroughTheDirectory) {
  OtherNode c(connector_, "c");
  const ObjectID id = ObjectID::FromLabel("moved");
  PutRemote(id, testing::TestBytes(1, 700));
  ASSERT_OK(engine_->Fetch({id}, absl::Seconds(5))[0]);
  local_.Erase(id);
  owner_.Erase(id);  // deleted on b, put on c
  directory_.Unpublish(id);
  FakeLocalStore::Entry e = c.store.Put(id, testing::TestBytes(2, 700));
  ASSERT_OK(directory_.PublishObject(id, ObjectLocation{"c", e.description()}));
  ASSERT_OK(engine_->Fetch({id}, absl::Seconds(5))[0]);
  EXPECT_EQ(local_.Bytes(id), testing::TestBytes(2, 700));
  EXPECT_EQ(stats_.location_cache_stale.load(), 1u);
  EXPECT_EQ(directory_.lookups(), 2) << "the stale entry cost one lookup";
  EXPECT_EQ(clock_.sleeps(), 0) << "and no back-off";
  // The cache now knows c.
  local_.Erase(id);
  ASSERT_OK(engine_->Fetch({id}, absl::Seconds(5))[0]);
  EXPECT_EQ(directory_.lookups(), 2);
  EXPECT_EQ(c.channel->calls.load(), 2);
}

TEST_F(FetchRoutingTest, AnObjectRecreatedOnItsOwnerArrivesInItsNewVersionAndIsCountedStale) {
  const ObjectID id = ObjectID::FromLabel("recreated");
  PutRemote(id, testing::TestBytes(1, 600));
  ASSERT_OK(engine_->Fetch({id}, absl::Seconds(5))[0]);
  local_.Erase(id);
  owner_.Erase(id);
  PutRemote(id, testing::TestBytes(9, 600));  // a new generation
  ASSERT_OK(engine_->Fetch({id}, absl::Seconds(5))[0]);
  EXPECT_EQ(local_.Bytes(id), testing::TestBytes(9, 600));
  EXPECT_EQ(stats_.location_cache_stale.load(), 1u);
  EXPECT_EQ(directory_.lookups(), 1) << "the owner's reply is the truth: no lookup needed";
}

TEST_F(FetchRoutingTest, AnOwnerThatCannotBeReachedIsForgottenWithAllItsEntries) {
  OtherNode c(connector_, "c");
  const std::vector<ObjectID> ids = PutRemoteBatch("b then c ", 2, 500);
  ExpectAllOk(engine_->Fetch(ids, absl::Seconds(5)));
  for (const ObjectID& id : ids) {
    local_.Erase(id);
    directory_.Unpublish(id);
    FakeLocalStore::Entry e = c.store.Put(id, testing::TestBytes(7, 500));
    ASSERT_OK(directory_.PublishObject(id, ObjectLocation{"c", e.description()}));
  }
  connector_.Add("b", nullptr);  // b is gone
  ASSERT_OK(engine_->Fetch({ids[0]}, absl::Seconds(5))[0]);
  EXPECT_EQ(local_.Bytes(ids[0]), testing::TestBytes(7, 500));
  EXPECT_EQ(stats_.location_cache_stale.load(), 1u);
  const uint64_t hits = stats_.location_cache_hits.load();
  ASSERT_OK(engine_->Fetch({ids[1]}, absl::Seconds(5))[0]);
  EXPECT_EQ(stats_.location_cache_hits.load(), hits) << "b's other entry went with it";
  EXPECT_EQ(stats_.location_cache_stale.load(), 1u);
  EXPECT_EQ(local_.Bytes(ids[1]), testing::TestBytes(7, 500));
}

TEST_F(FetchRoutingTest, EntriesOfANodeSilentForLongerThanTheNodeTtlAreMisses) {
  const ObjectID id = ObjectID::FromLabel("silent owner");
  PutRemote(id, testing::TestBytes(1, 300));
  ASSERT_OK(engine_->Fetch({id}, absl::Seconds(5))[0]);
  local_.Erase(id);
  clock_.Advance(LocationCacheOptions{}.node_ttl + absl::Seconds(1));
  ASSERT_OK(engine_->Fetch({id}, absl::Seconds(5))[0]);
  EXPECT_EQ(directory_.lookups(), 2);
  EXPECT_EQ(stats_.location_cache_hits.load(), 0u);
  // The lookup listed b again: its entries are trusted again.
  local_.Erase(id);
  ASSERT_OK(engine_->Fetch({id}, absl::Seconds(5))[0]);
  EXPECT_EQ(directory_.lookups(), 2);
  EXPECT_EQ(stats_.location_cache_hits.load(), 1u);
}

TEST_F(FetchRoutingTest, CachedIdsArriveWhileTheDirectoryIsDown) {
  const std::vector<ObjectID> ids = PutRemoteBatch("no redis ", 3, 200);
  ExpectAllOk(engine_->Fetch(ids, absl::Seconds(5)));
  for (const ObjectID& id : ids) local_.Erase(id);
  directory_.SetDown(true);
  const ObjectID unknown = ObjectID::FromLabel("never fetched");
  std::vector<ObjectID> asked = ids;
  asked.push_back(unknown);
  const std::vector<absl::Status> result = engine_->Fetch(asked, absl::Seconds(5));
  for (int i = 0; i < 3; ++i) EXPECT_OK(result[i]);
  EXPECT_THAT(result[3], HasErrorCode(ErrorCode::kUnavailable)) << "only the directory could place it";
}

TEST_F(FetchRoutingTest, AHintedFetchGoesToTheHintedNodeWithoutTheDirectory) {
  const ObjectID id = ObjectID::FromLabel("hinted, not yet published");
  owner_.Put(id, testing::TestBytes(3, 900));  // on b, not in the directory
  ASSERT_OK(engine_->Fetch({id}, absl::Seconds(5), "b")[0]);
  EXPECT_EQ(local_.Bytes(id), testing::TestBytes(3, 900));
  EXPECT_EQ(directory_.lookups(), 0);
  EXPECT_EQ(stats_.hinted_fetches.load(), 1u);
  EXPECT_EQ(stats_.hint_misses.load(), 0u);
  EXPECT_EQ(stats_.generation_hint_mismatches.load(), 0u) << "a hint names no generation to differ from";
}

// A hint names no sizes; the owner knows them: small ones inline, large ones pinned, one round trip.
TEST_F(FetchRoutingTest, AHintedBatchOfUnknownSizesComesInOneRoundTripSmallInlineLargePinned) {
  std::vector<ObjectID> ids;
  for (int i = 0; i < 5; ++i) {
    ids.push_back(ObjectID::FromLabel(absl::StrCat("hinted sizes ", i)));
    owner_.Put(ids.back(), testing::TestBytes(i, i < 3 ? 900 : 200000));  // threshold 4096
  }
  ExpectAllOk(engine_->Fetch(ids, absl::Seconds(5), "b"));
  for (int i = 0; i < 5; ++i) EXPECT_EQ(local_.Bytes(ids[i]), testing::TestBytes(i, i < 3 ? 900 : 200000));
  EXPECT_EQ(service_->stats()["fetch_batches"], 1u);
  EXPECT_EQ(service_->stats()["gets"], 3u);
  EXPECT_EQ(service_->stats()["pins"], 2u) << "the large ones by their true size";
  EXPECT_EQ(channel_->calls.load(), 2) << "FetchBatch and UnpinBatch";
  EXPECT_EQ(directory_.lookups(), 0);
  EXPECT_EQ(stats_.hint_misses.load(), 0u);
  EXPECT_EQ(owner_.total_refs(), 0);
}

TEST_F(FetchRoutingTest, AWrongOrUnknownHintFallsBackToTheDirectory) {
  OtherNode c(connector_, "c");
  const ObjectID id = ObjectID::FromLabel("wrong hint");
  PutRemote(id, testing::TestBytes(4, 400));
  ASSERT_OK(engine_->Fetch({id}, absl::Seconds(5), "c")[0]);  // c does not have it
  EXPECT_EQ(local_.Bytes(id), testing::TestBytes(4, 400));
  const ObjectID other = ObjectID::FromLabel("unknown hint");
  PutRemote(other, testing::TestBytes(5, 400));
  ASSERT_OK(engine_->Fetch({other}, absl::Seconds(5), "nobody")[0]);  // no such node
  EXPECT_EQ(local_.Bytes(other), testing::TestBytes(5, 400));
  EXPECT_EQ(stats_.hint_misses.load(), 2u);
  EXPECT_EQ(directory_.lookups(), 2);
  EXPECT_EQ(clock_.sleeps(), 0);
  // A hint naming this node itself is ignored.
  const ObjectID third = ObjectID::FromLabel("self hint");
  PutRemote(third, testing::TestBytes(6, 400));
  ASSERT_OK(engine_->Fetch({third}, absl::Seconds(5), "a")[0]);
  EXPECT_EQ(stats_.hinted_fetches.load(), 2u);
}

TEST_F(FetchRoutingTest, AHintedBatchHeldByTwoOwnersArrivesWhole) {
  OtherNode c(connector_, "c");
  std::vector<ObjectID> ids;
  for (int i = 0; i < 20; ++i) {
    ids.push_back(ObjectID::FromLabel(absl::StrCat("two owners ", i)));
    if (i % 2 == 0) {
      PutRemote(ids.back(), testing::TestBytes(i, 100 + i));
    } else {
      FakeLocalStore::Entry e = c.store.Put(ids.back(), testing::TestBytes(i, 100 + i));
      ASSERT_OK(directory_.PublishObject(ids.back(), ObjectLocation{"c", e.description()}));
    }
  }
  ExpectAllOk(engine_->Fetch(ids, absl::Seconds(5), "b"));
  for (int i = 0; i < 20; ++i) EXPECT_EQ(local_.Bytes(ids[i]), testing::TestBytes(i, 100 + i));
  EXPECT_EQ(stats_.hinted_fetches.load(), 20u);
  EXPECT_EQ(stats_.hint_misses.load(), 10u);
  EXPECT_EQ(directory_.lookups(), 1) << "one lookup for the ten b did not have";
  EXPECT_EQ(stats_.directory_lookups.load(), 10u);
  EXPECT_EQ(owner_.total_refs(), 0);
  EXPECT_EQ(c.store.total_refs(), 0);
  EXPECT_EQ(local_.unsealed(), 0) << "nothing partial left here";
}

TEST(LocationCacheTest, KeepsAtMostCapacityEntriesDroppingTheOldestPut) {
  FakeClock clock;
  LocationCache cache({.capacity = 3, .node_ttl = absl::Seconds(5)}, &clock);
  std::vector<ObjectID> ids;
  for (int i = 0; i < 5; ++i) ids.push_back(ObjectID::FromLabel(absl::StrCat("cap ", i)));
  for (int i = 0; i < 4; ++i) cache.Put(ids[i], ObjectLocation{"b", {uint64_t(i), 0, uint64_t(i), 0}});
  cache.Put(ids[1], ObjectLocation{"b", {10, 0, 11, 0}});  // a re-Put moves it to the back
  cache.Put(ids[4], ObjectLocation{"c", {4, 0, 4, 0}});
  EXPECT_EQ(cache.size(), 3u);
  const std::vector<std::optional<ObjectLocation>> found = cache.Find(ids);
  EXPECT_FALSE(found[0].has_value());
  EXPECT_TRUE(found[1].has_value());
  EXPECT_EQ(found[1]->object.generation, 11u);
  EXPECT_FALSE(found[2].has_value());
  EXPECT_TRUE(found[3].has_value());
  EXPECT_EQ(found[4]->node_id, "c");
}

TEST(LocationCacheTest, AHotSetPutAgainAndAgainOutlivesAStreamOfNewIds) {
  FakeClock clock;
  LocationCache cache({.capacity = 4, .node_ttl = absl::Seconds(5)}, &clock);
  const std::vector<ObjectID> hot = {ObjectID::FromLabel("hot 1"), ObjectID::FromLabel("hot 2")};
  std::vector<ObjectID> fresh;
  for (int i = 0; i < 50; ++i) {
    for (const ObjectID& id : hot) cache.Put(id, ObjectLocation{"b", {1, 0, uint64_t(i + 1), 0}});
    fresh.push_back(ObjectID::FromLabel(absl::StrCat("fresh ", i)));
    cache.Put(fresh.back(), ObjectLocation{"c", {2, 0, 1, 0}});
    cache.Forget(fresh[i / 2]);  // and some churn
    ASSERT_LE(cache.size(), 4u);
  }
  const std::vector<std::optional<ObjectLocation>> found = cache.Find(hot);
  ASSERT_TRUE(found[0].has_value() && found[1].has_value());
  EXPECT_EQ(found[0]->object.generation, 50u) << "the latest Put";
  EXPECT_TRUE(cache.Find({fresh.back()})[0].has_value()) << "the newest id is kept";
  EXPECT_FALSE(cache.Find({fresh[40]})[0].has_value()) << "older new ids left";
}

TEST(LocationCacheTest, ForgetForgetNodeAndTheNodeTtl) {
  FakeClock clock;
  LocationCache cache({.capacity = 100, .node_ttl = absl::Seconds(5)}, &clock);
  const ObjectID x = ObjectID::FromLabel("x"), y = ObjectID::FromLabel("y"), z = ObjectID::FromLabel("z");
  cache.Put(x, ObjectLocation{"b", {1, 0, 1, 0}});
  cache.Put(y, ObjectLocation{"b", {1, 0, 2, 0}});
  cache.Put(z, ObjectLocation{"c", {1, 0, 3, 0}});
  cache.Forget(x);
  EXPECT_FALSE(cache.Find({x})[0].has_value());
  cache.ForgetNode("b");
  EXPECT_FALSE(cache.Find({y})[0].has_value());
  EXPECT_TRUE(cache.Find({z})[0].has_value());
  cache.Put(y, ObjectLocation{"b", {1, 0, 4, 0}});  // b answered again
  EXPECT_EQ(cache.Find({y})[0]->object.generation, 4u);
  clock.Advance(absl::Seconds(6));
  EXPECT_FALSE(cache.Find({y})[0].has_value()) << "b silent longer than node_ttl";
  cache.NodeSeen("b");
  EXPECT_TRUE(cache.Find({y})[0].has_value());
  EXPECT_FALSE(cache.Find({z})[0].has_value());
}

TEST(LocationCacheTest, CapacityZeroKeepsNothing) {
  FakeClock clock;
  LocationCache cache({.capacity = 0, .node_ttl = absl::Seconds(5)}, &clock);
  const ObjectID x = ObjectID::FromLabel("x");
  cache.Put(x, ObjectLocation{"b", {1, 0, 1, 0}});
  EXPECT_FALSE(cache.Find({x})[0].has_value());
  EXPECT_EQ(cache.size(), 0u);
}

}  // namespace
}  // namespace rplasma::fetch
