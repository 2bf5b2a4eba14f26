// The store's subscriptions over the raw protocol, against a real rplasma-store: the existing
// objects then live events, a batch's events in one frame, and a backfill paced by the reader.
// Part of store_protocol_test (its fixture and leak audit).
#include <set>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "protocol/store_messages.h"
#include "tests/integration/store_protocol_fixture.h"
#include "tests/support/status_matchers.h"
#include "tests/support/store_process.h"

namespace rplasma {
namespace {

using ::rplasma::testing::BodyOf;
using ::rplasma::testing::RawStoreClient;
using ::rplasma::testing::StoreProcessOptions;
using ::rplasma::testing::StoreProtocolTest;
using ::testing::ElementsAre;

TEST_F(StoreProtocolTest, SubscriberSeesExistingObjectsThenLiveEvents) {
  ObjectID old1 = ObjectID::FromLabel("old-1"), old2 = ObjectID::FromLabel("old-2");
  ObjectID draft = ObjectID::FromLabel("draft"), fresh = ObjectID::FromLabel("fresh");
  CreateSealed(*client_, old1);
  CreateSealed(*client_, old2);
  ASSERT_OK_AND_ASSIGN(Reply r, client_->Call(CreateRequest{draft, 10, 0, true}));
  ASSERT_OK_AND_ASSIGN(auto sub, RawStoreClient::Connect(store_->socket_path(), "subscriber"));
  ASSERT_OK_AND_ASSIGN(r, sub->Call(SubscribeRequest{true}));
  ASSERT_OK(r.status());
  std::vector<ObjectID> existing;
  ASSERT_OK_AND_ASSIGN(std::vector<ObjectEvent> backfill, sub->ReceiveEvents(2));
  for (const ObjectEvent& e : backfill) {
    EXPECT_EQ(e.kind, EventKind::kSealed);
    existing.push_back(e.object.id);
  }
  EXPECT_THAT(existing, ::testing::UnorderedElementsAre(old1, old2));
  EXPECT_EQ(Stats(*client_).subscribers, 1u);

  CreateSealed(*client_, fresh);
  EXPECT_THAT(Codes(*client_, ReleaseRequest{{old1, old2}}), ::testing::Each(ErrorCode::kOk));
  EXPECT_THAT(Codes(*client_, DeleteRequest{{old1}}), ElementsAre(ErrorCode::kOk));
  ASSERT_OK_AND_ASSIGN(r, client_->Call(EvictRequest{1}));
  std::vector<std::pair<EventKind, ObjectID>> live;
  ASSERT_OK_AND_ASSIGN(std::vector<ObjectEvent> events, sub->ReceiveEvents(3));
  for (const ObjectEvent& e : events) live.emplace_back(e.kind, e.object.id);
  EXPECT_THAT(live, ElementsAre(std::make_pair(EventKind::kSealed, fresh), std::make_pair(EventKind::kDeleted, old1),
                                std::make_pair(EventKind::kEvicted, old2)));
  sub.reset();
  ExpectNoLeaks();
}

TEST_F(StoreProtocolTest, ABatchOfSealsReachesASubscriberAsOneFrameInOrder) {
  ASSERT_OK_AND_ASSIGN(auto sub, RawStoreClient::Connect(store_->socket_path(), "subscriber"));
  ASSERT_OK_AND_ASSIGN(Reply r, sub->Call(SubscribeRequest{false}));
  ASSERT_OK(r.status());
  constexpr int kObjects = 300;
  const std::vector<uint8_t> bytes(100, 7);
  std::vector<PutRequest> puts;
  std::vector<ObjectID> ids;
  for (int i = 0; i < kObjects; ++i) {
    ids.push_back(ObjectID::FromLabel(absl::StrCat("batched-", i)));
    puts.push_back(PutRequest{ids.back(), bytes, {}, 0, true});
  }
  EXPECT_THAT(Codes(*client_, PutBatchRequest{puts}), ::testing::Each(ErrorCode::kOk));
  ASSERT_OK_AND_ASSIGN(Reply e, sub->Receive());
  EXPECT_EQ(e.request_id, 0u);
  const ObjectEvents& events = BodyOf<ObjectEvents>(e);
  ASSERT_EQ(events.events.size(), static_cast<size_t>(kObjects)) << "one frame for the batch";
  for (int i = 0; i < kObjects; ++i) {
    EXPECT_EQ(events.events[i].kind, EventKind::kSealed);
    EXPECT_EQ(events.events[i].object.id, ids[i]) << "in the batch's order";
    EXPECT_EQ(events.events[i].object.data_size, bytes.size());
  }
  // A lone event still travels as an ObjectEvent; a delete of many as one frame again.
  EXPECT_THAT(Codes(*client_, DeleteRequest{{ids[0]}}), ElementsAre(ErrorCode::kOk));
  ASSERT_OK_AND_ASSIGN(e, sub->Receive());
  EXPECT_EQ(BodyOf<ObjectEvent>(e).kind, EventKind::kDeleted);
  const std::vector<ObjectID> rest(ids.begin() + 1, ids.end());
  EXPECT_THAT(Codes(*client_, DeleteRequest{rest}), ::testing::Each(ErrorCode::kOk));
  ASSERT_OK_AND_ASSIGN(e, sub->Receive());
  EXPECT_EQ(BodyOf<ObjectEvents>(e).events.size(), rest.size());
  sub.reset();
  ExpectNoLeaks();
}

TEST_F(StoreProtocolTest, LargeExistingSetIsStreamedToASubscriberWithoutOverflowingItsQueue) {
  // 3000 existing objects make ~450 KB of events, above this store's 256 KiB output cap: the
  // store must pace them by what the subscriber reads instead of queueing them all at once.
  StoreProcessOptions options;
  options.extra_args = {"--max_output_bytes", "256K"};
  StartStore(options);
  constexpr int kObjects = 3000;
  constexpr int kBatch = 200;
  std::vector<ObjectID> ids;
  for (int i = 0; i < kObjects; ++i) ids.push_back(ObjectID::FromLabel(absl::StrCat("existing-", i)));
  for (int start = 0; start < kObjects; start += kBatch) {
    for (int i = start; i < start + kBatch; ++i) {
      ASSERT_OK(client_->Send(CreateRequest{ids[i], 64, 0, true}));
      ASSERT_OK(client_->Send(SealRequest{ids[i], 0}));
      ASSERT_OK(client_->Send(ReleaseRequest{{ids[i]}}));
    }
    for (int k = 0; k < 3 * kBatch; ++k) {
      ASSERT_OK_AND_ASSIGN(Reply r, client_->Receive());
      ASSERT_OK(r.status());
    }
  }
  ASSERT_OK_AND_ASSIGN(auto sub, RawStoreClient::Connect(store_->socket_path(), "subscriber"));
  ASSERT_OK_AND_ASSIGN(Reply r, sub->Call(SubscribeRequest{true}));
  ASSERT_OK(r.status());
  // The store is single-threaded: once it has answered a request on another connection, it has
  // finished the turn that took the subscription and queued (or would have overfilled) the
  // backfill; with nobody reading, it writes no more until we do.
  EXPECT_EQ(Stats(*client_).subscribers, 1u);
  ObjectID late = ObjectID::FromLabel("late");
  CreateSealed(*client_, late);
  std::set<ObjectID> seen;
  ASSERT_OK_AND_ASSIGN(std::vector<ObjectEvent> events, sub->ReceiveEvents(kObjects + 1));
  for (const ObjectEvent& event : events) {
    EXPECT_EQ(event.kind, EventKind::kSealed);
    EXPECT_TRUE(seen.insert(event.object.id).second) << "duplicate event for " << event.object.id.Hex();
  }
  EXPECT_EQ(seen.size(), kObjects + 1u);
  EXPECT_TRUE(seen.contains(late));
  EXPECT_EQ(Stats(*client_).subscribers, 1u);
  EXPECT_THAT(store_->ReadLog(), ::testing::Not(::testing::HasSubstr("fell behind")));
  sub.reset();
  ExpectNoLeaks();
}

}  // namespace
}  // namespace rplasma
