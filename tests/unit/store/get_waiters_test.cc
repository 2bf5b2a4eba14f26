#include "store/get_waiters.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace rplasma {
namespace {

PendingGet Waiting(ClientId client, uint64_t rid, std::vector<ObjectID> ids, absl::Time deadline) {
  PendingGet g;
  g.client = client;
  g.request_id = rid;
  g.deadline = deadline;
  for (const ObjectID& id : ids) {
    ObjectInfo info;
    info.id = id;
    g.objects.push_back(info);
  }
  g.served.assign(ids.size(), false);
  return g;
}

GetWaiters::TakeRef Ref(int* calls) {
  return [calls](ClientId) -> absl::StatusOr<ObjectInfo> {
    ++*calls;
    ObjectInfo info;
    info.ref_count = 1;
    return info;
  };
}

TEST(GetWaitersTest, GetCompletesWhenItsLastIdIsSealed) {
  GetWaiters w;
  ObjectID a = ObjectID::FromLabel("a"), b = ObjectID::FromLabel("b");
  w.Add(Waiting(1, 7, {a, b}, absl::InfiniteFuture()));
  int calls = 0;
  EXPECT_TRUE(w.OnSealed(a, Ref(&calls)).empty());
  std::vector<PendingGet> done = w.OnSealed(b, Ref(&calls));
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].request_id, 7u);
  EXPECT_THAT(done[0].served, ::testing::ElementsAre(true, true));
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(w.size(), 0u);
  EXPECT_FALSE(w.NextDeadline().has_value());
}

TEST(GetWaitersTest, DuplicateIdsEachTakeAReference) {
  GetWaiters w;
  ObjectID a = ObjectID::FromLabel("a");
  w.Add(Waiting(1, 1, {a, a}, absl::InfiniteFuture()));
  int calls = 0;
  ASSERT_EQ(w.OnSealed(a, Ref(&calls)).size(), 1u);
  EXPECT_EQ(calls, 2);
}

TEST(GetWaitersTest, ExpiryReturnsGetsWithUnservedEntriesInDeadlineOrder) {
  GetWaiters w;
  absl::Time t0 = absl::Now();
  ObjectID a = ObjectID::FromLabel("a"), b = ObjectID::FromLabel("b");
  w.Add(Waiting(1, 1, {a}, t0 + absl::Seconds(2)));
  w.Add(Waiting(2, 2, {b}, t0 + absl::Seconds(1)));
  w.Add(Waiting(3, 3, {a}, absl::InfiniteFuture()));
  EXPECT_EQ(*w.NextDeadline(), t0 + absl::Seconds(1));
  std::vector<PendingGet> done = w.Expire(t0 + absl::Seconds(1));
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].request_id, 2u);
  EXPECT_FALSE(done[0].served[0]);
  done = w.Expire(t0 + absl::Seconds(5));
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].request_id, 1u);
  EXPECT_EQ(w.size(), 1u);  // the one without a deadline
  int calls = 0;
  EXPECT_EQ(w.OnSealed(a, Ref(&calls)).size(), 1u);
  EXPECT_EQ(calls, 1);  // expired waiters on `a` were unlinked
}

TEST(GetWaitersTest, RemovedClientsWaitsAreForgotten) {
  GetWaiters w;
  ObjectID a = ObjectID::FromLabel("a");
  w.Add(Waiting(1, 1, {a}, absl::Now() + absl::Seconds(1)));
  w.Add(Waiting(2, 2, {a}, absl::InfiniteFuture()));
  w.RemoveClient(1);
  EXPECT_EQ(w.size(), 1u);
  EXPECT_FALSE(w.NextDeadline().has_value());
  int calls = 0;
  std::vector<PendingGet> done = w.OnSealed(a, Ref(&calls));
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].client, 2u);
  EXPECT_EQ(calls, 1);
}

}  // namespace
}  // namespace rplasma
