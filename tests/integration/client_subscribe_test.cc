// Subscriptions: existing sealed objects first, then seal / delete / evict events as they happen.
#include <set>

#include <gtest/gtest.h>

#include "tests/integration/client_test_fixture.h"

namespace rplasma::testing {
namespace {

class ClientSubscribeTest : public ClientStoreTest {};

TEST_F(ClientSubscribeTest, ExistingObjectsComeFirstThenSealDeleteAndEvictEvents) {
  ASSERT_NO_FATAL_FAILURE(StartStore());
  const std::vector<ObjectID> existing = Labels("existing", 3);
  for (size_t i = 0; i < existing.size(); ++i)
    ASSERT_OK(client_->Put(existing[i], AsSpan(TestBytes<std::vector<uint8_t>>(i, 100 + i))));
  // An unsealed object is not reported.
  const ObjectID unsealed = ObjectID::FromLabel("unsealed");
  ASSERT_OK(client_->Create(unsealed, 10).status());

  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Subscription> subscription, client_->Subscribe());
  EXPECT_GE(subscription->fd(), 0);
  std::set<ObjectID> backfilled;
  for (size_t i = 0; i < existing.size(); ++i) {
    ASSERT_OK_AND_ASSIGN(ObjectEvent event, subscription->Next(absl::Seconds(5)));
    EXPECT_EQ(event.kind, EventKind::kSealed);
    EXPECT_EQ(event.object.state, ObjectState::kSealed);
    backfilled.insert(event.object.id);
  }
  EXPECT_EQ(backfilled, std::set<ObjectID>(existing.begin(), existing.end()));
  EXPECT_THAT(subscription->Next(absl::Milliseconds(50)), HasErrorCode(ErrorCode::kDeadlineExceeded));
  ASSERT_OK_AND_ASSIGN(StatsReply stats, client_->Stats());
  EXPECT_EQ(stats.subscribers, 1u);

  // Seal: the new object, with its size and checksum.
  ASSERT_OK(client_->Seal(unsealed));
  ASSERT_OK(client_->Release(unsealed));
  ASSERT_OK_AND_ASSIGN(ObjectEvent sealed, subscription->Next(absl::Seconds(5)));
  EXPECT_EQ(sealed.kind, EventKind::kSealed);
  EXPECT_EQ(sealed.object.id, unsealed);
  EXPECT_EQ(sealed.object.data_size, 10u);

  // Delete.
  ASSERT_OK(client_->Delete({existing[0]}));
  ASSERT_OK_AND_ASSIGN(ObjectEvent deleted, subscription->Next(absl::Seconds(5)));
  EXPECT_EQ(deleted.kind, EventKind::kDeleted);
  EXPECT_EQ(deleted.object.id, existing[0]);

  // Evict everything left: one eviction event per object.
  ASSERT_OK_AND_ASSIGN(EvictReply evicted, client_->Evict(uint64_t{1} << 30));
  EXPECT_EQ(evicted.objects_evicted, 3u);
  std::set<ObjectID> evicted_ids;
  for (int i = 0; i < 3; ++i) {
    ASSERT_OK_AND_ASSIGN(ObjectEvent event, subscription->Next(absl::Seconds(5)));
    EXPECT_EQ(event.kind, EventKind::kEvicted);
    evicted_ids.insert(event.object.id);
  }
  EXPECT_EQ(evicted_ids, std::set<ObjectID>({existing[1], existing[2], unsealed}));

  subscription.reset();
  ExpectBackAtBaseline();
}

TEST_F(ClientSubscribeTest, WithoutExistingOnlyNewEventsArrive) {
  ASSERT_NO_FATAL_FAILURE(StartStore());
  ASSERT_OK(client_->Put(ObjectID::FromLabel("old"), AsSpan(TestBytes<std::vector<uint8_t>>(1, 10))));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Subscription> subscription, client_->Subscribe(/*include_existing=*/false));
  const ObjectID fresh = ObjectID::FromLabel("new");
  ASSERT_OK(client_->Put(fresh, AsSpan(TestBytes<std::vector<uint8_t>>(2, 10))));
  ASSERT_OK_AND_ASSIGN(ObjectEvent event, subscription->Next(absl::Seconds(5)));
  EXPECT_EQ(event.object.id, fresh);
  ASSERT_OK(client_->Delete({ObjectID::FromLabel("old"), fresh}));
  subscription.reset();
  ExpectBackAtBaseline();
}

TEST_F(ClientSubscribeTest, StoreDeathEndsTheStreamWithUnavailable) {
  ASSERT_NO_FATAL_FAILURE(StartStore());
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Subscription> subscription, client_->Subscribe());
  store_->Kill();
  EXPECT_THAT(subscription->Next(absl::Seconds(5)), HasErrorCode(ErrorCode::kUnavailable));
  EXPECT_THAT(subscription->Next(absl::Seconds(5)), HasErrorCode(ErrorCode::kUnavailable));
}

}  // namespace
}  // namespace rplasma::testing
