// DirectoryLanes over recording fake lanes: concurrent reads run on distinct lanes at once, a read
// waits for a lane when all are busy, every write goes to lane 0, and ReconnectIdle touches the
// idle lanes only.
#include "manager/directory/directory_lanes.h"

#include <algorithm>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include <gtest/gtest.h>

#include "protocol/base/mutex_lock.h"
#include "tests/support/wait_for.h"

namespace rplasma {
namespace {

// Lanes share one record of which lane served what, and a gate that holds reads while closed.
struct Shared {
  absl::Mutex mu;
  std::vector<std::string> calls ABSL_GUARDED_BY(mu);  // "<lane>:<call>"
  int inside ABSL_GUARDED_BY(mu) = 0;                  // reads in progress
  int most_inside ABSL_GUARDED_BY(mu) = 0;
  bool open ABSL_GUARDED_BY(mu) = true;
  absl::CondVar opened;  // signalled when `open` becomes true
};

class RecordingLane : public Directory {
 public:
  RecordingLane(int lane, Shared* shared) : lane_(lane), shared_(shared) {}

  absl::Status RegisterNode(const NodeRecord&) override { return Note("register"); }
  absl::Status Heartbeat() override { return Note("heartbeat"); }
  absl::Status UnregisterNode() override { return Note("unregister"); }
  absl::Status PublishObject(const ObjectID&, const ObjectLocation&) override { return Note("publish"); }
  absl::Status PublishObjects(absl::Span<const std::pair<ObjectID, ObjectLocation>>) override {
    return Note("publish-many");
  }
  absl::Status RemoveObject(const ObjectID&) override { return Note("remove"); }
  absl::Status RemoveObjects(absl::Span<const ObjectID>) override { return Note("remove-many"); }
  absl::StatusOr<std::vector<ObjectID>> ListOwnObjects() override {
    (void)Note("list");
    return std::vector<ObjectID>{};
  }
  absl::StatusOr<std::vector<std::vector<ObjectLocation>>> Lookup(absl::Span<const ObjectID> ids) override {
    Read("lookup");
    // Each id found on this lane's "node", so the caller can see which lane answered.
    return std::vector<std::vector<ObjectLocation>>(ids.size(), {ObjectLocation{std::to_string(lane_), {}}});
  }
  absl::StatusOr<NodeRecord> GetNode(const std::string& node_id) override {
    Read("node");
    return NodeRecord{node_id, std::to_string(lane_), "", 0};
  }

 private:
  absl::Status Note(const std::string& call) {
    MutexLock lock(&shared_->mu);
    shared_->calls.push_back(std::to_string(lane_) + ":" + call);
    return absl::OkStatus();
  }
  void Read(const std::string& call) {
    MutexLock lock(&shared_->mu);
    shared_->calls.push_back(std::to_string(lane_) + ":" + call);
    ++shared_->inside;
    shared_->most_inside = std::max(shared_->most_inside, shared_->inside);
    // (A CondVar, not Await: abseil evaluates a Condition where ThreadSanitizer cannot see the lock.)
    while (!shared_->open) lock.Wait(&shared_->opened);
    --shared_->inside;
  }

  const int lane_;
  Shared* const shared_;
};

std::unique_ptr<DirectoryLanes> MakeLanes(int count, Shared* shared) {
  std::vector<std::unique_ptr<Directory>> lanes;
  for (int i = 0; i < count; ++i) lanes.push_back(std::make_unique<RecordingLane>(i, shared));
  return std::make_unique<DirectoryLanes>(std::move(lanes));
}

int Inside(Shared& shared) {
  MutexLock lock(&shared.mu);
  return shared.inside;
}

void SetOpen(Shared& shared, bool open) {
  MutexLock lock(&shared.mu);
  shared.open = open;
  if (open) shared.opened.SignalAll();
}

TEST(DirectoryLanesTest, ALoneReaderKeepsToLaneZero) {
  Shared shared;
  auto lanes = MakeLanes(3, &shared);
  const ObjectID id = ObjectID::FromLabel("a");
  for (int i = 0; i < 4; ++i) {
    auto found = lanes->Lookup(absl::MakeConstSpan(&id, 1));
    ASSERT_TRUE(found.ok());
    EXPECT_EQ((*found)[0][0].node_id, "0");
  }
  auto node = lanes->GetNode("n");
  ASSERT_TRUE(node.ok());
  EXPECT_EQ(node->tcp_address, "0");
}

TEST(DirectoryLanesTest, ConcurrentReadsRunOnDistinctLanesAtOnce) {
  Shared shared;
  auto lanes = MakeLanes(3, &shared);
  SetOpen(shared, false);
  const ObjectID id = ObjectID::FromLabel("a");
  std::vector<std::string> answered(4);
  std::vector<std::thread> readers;
  for (int r = 0; r < 4; ++r) {
    readers.emplace_back([&, r] {
      if (r == 3) {
        auto node = lanes->GetNode("n");
        if (node.ok()) answered[r] = node->tcp_address;
      } else {
        auto found = lanes->Lookup(absl::MakeConstSpan(&id, 1));
        if (found.ok()) answered[r] = (*found)[0][0].node_id;
      }
    });
  }
  // Three readers get in, one per lane; the fourth waits for a lane. (That it stays out is a
  // negative, so it is watched for a while: 50 ms in which it would have got in.)
  ASSERT_TRUE(testing::WaitFor([&] { return Inside(shared) >= 3; }, absl::Seconds(10)));
  EXPECT_FALSE(testing::WaitFor([&] { return Inside(shared) > 3; }, absl::Milliseconds(50)));
  EXPECT_EQ(Inside(shared), 3);
  SetOpen(shared, true);
  for (std::thread& t : readers) t.join();
  {
    MutexLock lock(&shared.mu);
    EXPECT_EQ(shared.most_inside, 3);
    EXPECT_EQ(shared.calls.size(), 4u);
  }
  std::vector<int> per_lane(3);
  for (const std::string& lane : answered) {
    ASSERT_FALSE(lane.empty());
    ++per_lane[std::stoi(lane)];
  }
  // The first three were on three lanes; the fourth took whichever was freed first.
  for (int lane = 0; lane < 3; ++lane) EXPECT_GE(per_lane[lane], 1) << "lane " << lane;
}

TEST(DirectoryLanesTest, WritesGoToLaneZeroWhileItsReadIsBusy) {
  Shared shared;
  auto lanes = MakeLanes(2, &shared);
  const ObjectID id = ObjectID::FromLabel("a");
  SetOpen(shared, false);
  std::thread reader([&] { (void)lanes->Lookup(absl::MakeConstSpan(&id, 1)); });
  ASSERT_TRUE(testing::WaitFor([&] { return Inside(shared) >= 1; }, absl::Seconds(10)));
  EXPECT_TRUE(lanes->RegisterNode(NodeRecord{"n", "", "", 1}).ok());
  EXPECT_TRUE(lanes->Heartbeat().ok());
  EXPECT_TRUE(lanes->PublishObject(id, ObjectLocation{"n", {}}).ok());
  const std::pair<ObjectID, ObjectLocation> one(id, ObjectLocation{"n", {}});
  EXPECT_TRUE(lanes->PublishObjects(absl::MakeConstSpan(&one, 1)).ok());
  EXPECT_TRUE(lanes->RemoveObject(id).ok());
  EXPECT_TRUE(lanes->RemoveObjects(absl::MakeConstSpan(&id, 1)).ok());
  EXPECT_TRUE(lanes->ListOwnObjects().ok());
  EXPECT_TRUE(lanes->UnregisterNode().ok());
  SetOpen(shared, true);
  reader.join();
  MutexLock lock(&shared.mu);
  EXPECT_EQ(shared.calls,
            (std::vector<std::string>{"0:lookup", "0:register", "0:heartbeat", "0:publish", "0:publish-many",
                                      "0:remove", "0:remove-many", "0:list", "0:unregister"}));
}

}  // namespace
}  // namespace rplasma

namespace rplasma {
namespace {

TEST(DirectoryLanesTest, ReconnectIdleTouchesEveryIdleLaneOnceAndLeavesABusyOneAlone) {
  Shared shared;
  auto lanes = MakeLanes(3, &shared);
  const ObjectID id = ObjectID::FromLabel("a");
  SetOpen(shared, false);
  std::thread reader([&] { (void)lanes->Lookup(absl::MakeConstSpan(&id, 1)); });  // holds lane 0
  ASSERT_TRUE(testing::WaitFor([&] { return Inside(shared) >= 1; }, absl::Seconds(10)));
  {
    MutexLock lock(&shared.mu);
    shared.open = true;  // the lanes touched next pass; the reader stays inside until signalled
  }
  lanes->ReconnectIdle("self");
  SetOpen(shared, true);
  reader.join();
  {
    MutexLock lock(&shared.mu);
    std::vector<std::string> calls = shared.calls;
    std::sort(calls.begin() + 1, calls.end());
    EXPECT_EQ(calls, (std::vector<std::string>{"0:lookup", "1:node", "2:node"}));
  }
  // Every lane is free again, lane 0 first: a lone reader keeps to it.
  auto found = lanes->Lookup(absl::MakeConstSpan(&id, 1));
  ASSERT_TRUE(found.ok());
  EXPECT_EQ((*found)[0][0].node_id, "0");
}

}  // namespace
}  // namespace rplasma
