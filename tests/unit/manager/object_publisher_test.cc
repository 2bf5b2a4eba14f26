// ObjectPublisher over a scripted event stream and a recording directory: a burst of events
// becomes one directory call per run of one kind, in stream order.
#include "manager/object_publisher.h"

#include <deque>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include <gtest/gtest.h>

#include "manager/fetch/expected_copies.h"
#include "protocol/base/mutex_lock.h"
#include "tests/support/fake_clock.h"
#include "tests/support/wait_for.h"
#include "tests/unit/fetch/fetch_fakes.h"

namespace rplasma::manager {
namespace {

// Hands out the scripted events, all at once once released (as a burst read from the socket).
class ScriptedSubscription : public Subscription {
 public:
  void Push(std::vector<ObjectEvent> events) {
    MutexLock lock(&mu_);
    for (ObjectEvent& e : events) queue_.push_back(std::move(e));
    pushed_.SignalAll();
  }
  // A CondVar, not an absl::Condition: the uninstrumented abseil evaluates a Condition on the
  // releasing thread, which TSan cannot see ordered with the waiter.
  absl::StatusOr<ObjectEvent> Next(absl::Duration timeout) override {
    MutexLock lock(&mu_);
    const absl::Time deadline = absl::Now() + timeout;
    while (queue_.empty()) {
      if (lock.WaitWithDeadline(&pushed_, deadline) && queue_.empty()) {
        return MakeError(ErrorCode::kDeadlineExceeded, "no event");
      }
    }
    ObjectEvent e = queue_.front();
    queue_.pop_front();
    return e;
  }
  int fd() const override { return -1; }

 private:
  absl::Mutex mu_;
  absl::CondVar pushed_;
  std::deque<ObjectEvent> queue_ ABSL_GUARDED_BY(mu_);
};

// Records every update as "publish:ids" / "remove:ids"; with Take, each advances a fake clock.
class RecordingDirectory : public rplasma::testing::FakeDirectory {
 public:
  // Each update takes `time` of `clock` from now on.
  void Take(rplasma::testing::FakeClock* clock, absl::Duration time) {
    MutexLock lock(&mu_);
    clock_ = clock;
    call_time_ = time;
  }
  absl::Status PublishObjects(absl::Span<const std::pair<ObjectID, ObjectLocation>> objects) override {
    std::string call = "publish:";
    for (const auto& [id, location] : objects) call += id.Hex().substr(0, 2);
    Record(call);
    return absl::OkStatus();
  }
  absl::Status RemoveObjects(absl::Span<const ObjectID> ids) override {
    std::string call = "remove:";
    for (const ObjectID& id : ids) call += id.Hex().substr(0, 2);
    Record(call);
    return absl::OkStatus();
  }
  std::vector<std::string> calls() {
    MutexLock lock(&mu_);
    return calls_;
  }

 private:
  void Record(std::string call) {
    MutexLock lock(&mu_);
    calls_.push_back(std::move(call));
    if (clock_ != nullptr) clock_->Advance(call_time_);
  }
  absl::Mutex mu_;
  std::vector<std::string> calls_ ABSL_GUARDED_BY(mu_);
  rplasma::testing::FakeClock* clock_ ABSL_GUARDED_BY(mu_) = nullptr;
  absl::Duration call_time_ ABSL_GUARDED_BY(mu_);
};

ObjectEvent Event(EventKind kind, uint8_t first_byte) {
  ObjectEvent e;
  e.kind = kind;
  std::string bytes(ObjectID::kSize, '\0');
  bytes[0] = static_cast<char>(first_byte);
  e.object.id = *ObjectID::FromBinary(bytes);
  e.object.state = ObjectState::kSealed;
  return e;
}

TEST(ObjectPublisherTest, ABurstOfEventsBecomesOneUpdatePerRunOfOneKindInStreamOrder) {
  auto subscription = std::make_unique<ScriptedSubscription>();
  ScriptedSubscription* events = subscription.get();
  // The whole burst is there before the publisher reads it.
  events->Push({Event(EventKind::kSealed, 0xa1), Event(EventKind::kSealed, 0xb2), Event(EventKind::kDeleted, 0xa1),
                Event(EventKind::kEvicted, 0xb2), Event(EventKind::kSealed, 0xa1), Event(EventKind::kSealed, 0xc3)});
  RecordingDirectory directory;
  rplasma::testing::FakeLocalStore store(1 << 20);
  ManagerStats stats;
  ObjectPublisher publisher("node", std::move(subscription), &directory, &store, &stats, &Clock::Real());
  ASSERT_TRUE(rplasma::testing::WaitFor([&] { return directory.calls().size() >= 3; }, absl::Seconds(5)));
  publisher.Stop();
  EXPECT_EQ(directory.calls(), (std::vector<std::string>{"publish:a1b2", "remove:a1b2", "publish:a1c3"}))
      << "a seal never overtakes a later delete of the same id";
  EXPECT_EQ(stats.objects_published.load(), 4u);
  EXPECT_EQ(stats.objects_removed.load(), 2u);
}

TEST(ObjectPublisherTest, EachDirectoryUpdateCountsInThePublishPhase) {
  auto subscription = std::make_unique<ScriptedSubscription>();
  ScriptedSubscription* events = subscription.get();
  RecordingDirectory directory;
  rplasma::testing::FakeClock clock;
  directory.Take(&clock, absl::Milliseconds(3));
  rplasma::testing::FakeLocalStore store(1 << 20);
  ManagerStats stats;
  ObjectPublisher publisher("node", std::move(subscription), &directory, &store, &stats, &clock);
  events->Push({Event(EventKind::kSealed, 0xa1), Event(EventKind::kSealed, 0xb2), Event(EventKind::kDeleted, 0xa1)});
  ASSERT_TRUE(rplasma::testing::WaitFor([&] { return directory.calls().size() >= 2; }, absl::Seconds(5)));
  publisher.Stop();
  EXPECT_EQ(stats.publish_updates.load(), 2u) << "a publication of two and a removal";
  EXPECT_EQ(stats.publish_us.load(), 6000u);
}

// This node's entries, as a directory that can list them and can be made unreachable.
class StatefulDirectory : public rplasma::testing::FakeDirectory {
 public:
  absl::Status PublishObjects(absl::Span<const std::pair<ObjectID, ObjectLocation>> objects) override {
    MutexLock lock(&mu_);
    ++writes_;
    if (unavailable_) return MakeError(ErrorCode::kUnavailable, "fake directory unreachable");
    for (const auto& [id, location] : objects) entries_[id] = location.object;
    return absl::OkStatus();
  }
  absl::Status RemoveObjects(absl::Span<const ObjectID> ids) override {
    MutexLock lock(&mu_);
    ++writes_;
    if (unavailable_) return MakeError(ErrorCode::kUnavailable, "fake directory unreachable");
    for (const ObjectID& id : ids) entries_.erase(id);
    return absl::OkStatus();
  }
  absl::StatusOr<std::vector<ObjectID>> ListOwnObjects() override {
    MutexLock lock(&mu_);
    if (unavailable_) return MakeError(ErrorCode::kUnavailable, "fake directory unreachable");
    std::vector<ObjectID> ids;
    for (const auto& [id, description] : entries_) ids.push_back(id);
    return ids;
  }
  void SetUnavailable(bool unavailable) {
    MutexLock lock(&mu_);
    unavailable_ = unavailable;
  }
  // An entry written behind the publisher's back (a stale one, or one another process left).
  void Plant(const ObjectID& id, ObjectDescription description) {
    MutexLock lock(&mu_);
    entries_[id] = description;
  }
  std::optional<ObjectDescription> Entry(const ObjectID& id) {
    MutexLock lock(&mu_);
    auto it = entries_.find(id);
    if (it == entries_.end()) return std::nullopt;
    return it->second;
  }
  int writes() {
    MutexLock lock(&mu_);
    return writes_;
  }

 private:
  absl::Mutex mu_;
  bool unavailable_ ABSL_GUARDED_BY(mu_) = false;
  int writes_ ABSL_GUARDED_BY(mu_) = 0;
  absl::flat_hash_map<ObjectID, ObjectDescription> entries_ ABSL_GUARDED_BY(mu_);
};

ObjectID Id(uint8_t first_byte) { return Event(EventKind::kSealed, first_byte).object.id; }

// Seals `id` in `store` and returns its description.
ObjectDescription SealIn(rplasma::testing::FakeLocalStore& store, const ObjectID& id) {
  EXPECT_TRUE(store.Create(id, 16, 0).ok());
  EXPECT_TRUE(store.SealAndRelease(id, 42).ok());
  absl::StatusOr<std::vector<ObjectInfo>> sealed = store.ListSealed();
  if (sealed.ok()) {
    for (const ObjectInfo& o : *sealed) {
      if (o.id == id) return o.description();
    }
  }
  ADD_FAILURE() << "sealed object not listed";
  return {};
}

// A publisher of fetched copies (ExpectedCopies) over a scripted event stream, a fake store and a
// fake clock; `directory` is what it updates.
template <typename DirectoryT>
struct CopyPublishing {
  explicit CopyPublishing(absl::Duration copy_publish_delay = ObjectPublisherOptions{}.copy_publish_delay) {
    auto subscription = std::make_unique<ScriptedSubscription>();
    events = subscription.get();
    ObjectPublisherOptions options;
    options.expected_copies = &copies;
    options.copy_publish_delay = copy_publish_delay;
    publisher =
        std::make_unique<ObjectPublisher>("node", std::move(subscription), &directory, &store, &stats, &clock, options);
  }

  DirectoryT directory;
  rplasma::testing::FakeLocalStore store{1 << 20};
  ManagerStats stats;
  rplasma::testing::FakeClock clock;
  fetch::ExpectedCopies copies{&clock};
  ScriptedSubscription* events = nullptr;
  std::unique_ptr<ObjectPublisher> publisher;  // last: stopped before the rest goes
};

TEST(ObjectPublisherTest, FetchedCopiesArePublishedLateAndTogetherOrNeverWhenDeletedFirst) {
  CopyPublishing<RecordingDirectory> p(absl::Milliseconds(500));
  // a1, b2 and c3 are copies a fetch announced; d4 is an application's object.
  p.copies.Add({Id(0xa1), Id(0xb2), Id(0xc3)});
  p.events->Push({Event(EventKind::kSealed, 0xa1), Event(EventKind::kSealed, 0xb2), Event(EventKind::kSealed, 0xd4),
                  Event(EventKind::kSealed, 0xc3), Event(EventKind::kDeleted, 0xb2)});
  ASSERT_TRUE(rplasma::testing::WaitFor([&] { return p.stats.copies_never_published.load() == 1; }, absl::Seconds(5)));
  EXPECT_EQ(p.directory.calls(), (std::vector<std::string>{"publish:d4"})) << "the application's object at once";
  EXPECT_EQ(p.stats.copies_deferred.load(), 3u);
  EXPECT_EQ(p.copies.size(), 0u);
  p.clock.Advance(absl::Milliseconds(600));
  ASSERT_TRUE(rplasma::testing::WaitFor([&] { return p.directory.calls().size() >= 2; }, absl::Seconds(5)));
  p.publisher->Stop();
  const std::vector<std::string> calls = p.directory.calls();
  ASSERT_EQ(calls.size(), 2u) << "b2, deleted before its turn, is neither published nor removed";
  EXPECT_TRUE(calls[1] == "publish:a1c3" || calls[1] == "publish:c3a1") << calls[1];
  EXPECT_EQ(p.stats.objects_published.load(), 3u);
  EXPECT_EQ(p.stats.objects_removed.load(), 0u);
}

TEST(ObjectPublisherTest, ExpectedCopiesAreTakenOnceInOrderAndOnlyWithinTheirTime) {
  rplasma::testing::FakeClock clock;
  fetch::ExpectedCopies copies(&clock, /*keep=*/absl::Seconds(60));
  copies.Add({Id(0xa1), Id(0xb2)});
  clock.Advance(absl::Seconds(61));
  copies.Add({Id(0xc3)});
  // a1 is too old (forgotten, not taken); b2 is taken by its first mention only; d4 never came.
  EXPECT_EQ(copies.TakeMany({Id(0xc3), Id(0xd4), Id(0xa1), Id(0xc3)}), (std::vector<bool>{true, false, false, false}));
  EXPECT_EQ(copies.size(), 1u) << "b2 waits";
  EXPECT_EQ(copies.TakeMany({}), std::vector<bool>{});
  EXPECT_EQ(copies.size(), 1u);
}

TEST(ObjectPublisherTest, AnIdAddedTwiceIsTakenTwice) {
  rplasma::testing::FakeClock clock;
  fetch::ExpectedCopies copies(&clock);
  copies.Add({Id(0xa1)});
  copies.Add({Id(0xa1), Id(0xb2)});
  EXPECT_EQ(copies.TakeMany({Id(0xa1), Id(0xa1), Id(0xa1), Id(0xb2)}), (std::vector<bool>{true, true, false, true}));
  EXPECT_EQ(copies.size(), 0u);
}

TEST(ObjectPublisherTest, ACopyFetchedAgainBeforeTheFirstSealWasSeenIsNeverPublished) {
  CopyPublishing<RecordingDirectory> p;
  // a1 fetched, deleted, fetched again and deleted again, all before the publisher reads a thing.
  p.copies.Add({Id(0xa1)});
  p.copies.Add({Id(0xa1)});
  p.events->Push({Event(EventKind::kSealed, 0xa1), Event(EventKind::kDeleted, 0xa1), Event(EventKind::kSealed, 0xa1),
                  Event(EventKind::kDeleted, 0xa1)});
  ASSERT_TRUE(rplasma::testing::WaitFor([&] { return p.stats.copies_never_published.load() == 2; }, absl::Seconds(5)));
  p.clock.Advance(absl::Seconds(1));
  p.publisher->Stop();
  EXPECT_EQ(p.directory.calls(), std::vector<std::string>{}) << "neither copy published, so neither removed";
  EXPECT_EQ(p.stats.copies_deferred.load(), 2u);
}

TEST(ObjectPublisherTest, ACopyWhoseIdHasAnUpdatePendingIsPublishedAtOnceInOrder) {
  CopyPublishing<StatefulDirectory> p;
  // a1's removal fails (Redis down) and stays pending; then a1 comes back as a fetched copy.
  p.directory.SetUnavailable(true);
  p.events->Push({Event(EventKind::kDeleted, 0xa1)});
  ASSERT_TRUE(rplasma::testing::WaitFor([&] { return p.publisher->pending() == 1; }, absl::Seconds(5)));
  p.directory.SetUnavailable(false);
  p.copies.Add({Id(0xa1)});
  p.events->Push({Event(EventKind::kSealed, 0xa1)});
  ASSERT_TRUE(rplasma::testing::WaitFor([&] { return p.directory.Entry(Id(0xa1)).has_value(); }, absl::Seconds(5)));
  EXPECT_EQ(p.publisher->pending(), 0u) << "the publication superseded the pending removal";
  EXPECT_EQ(p.stats.copies_deferred.load(), 0u);
  p.publisher->Stop();
}

TEST(ObjectPublisherTest, FailedUpdatesAreRetriedWithBackoffOnceTheDirectoryAnswersAgain) {
  auto subscription = std::make_unique<ScriptedSubscription>();
  ScriptedSubscription* events = subscription.get();
  StatefulDirectory directory;
  directory.Plant(Id(0xc3), {});
  directory.SetUnavailable(true);
  rplasma::testing::FakeLocalStore store(1 << 20);
  rplasma::testing::FakeClock clock;
  ManagerStats stats;
  ObjectPublisherOptions options;
  options.reconcile_interval = absl::Hours(1);  // only the retry may repair here
  ObjectPublisher publisher("node", std::move(subscription), &directory, &store, &stats, &clock, options);
  events->Push({Event(EventKind::kSealed, 0xa1), Event(EventKind::kSealed, 0xb2), Event(EventKind::kDeleted, 0xc3)});
  ASSERT_TRUE(rplasma::testing::WaitFor([&] { return publisher.pending() == 3; }, absl::Seconds(5)));
  const int writes_while_down = directory.writes();
  EXPECT_FALSE(directory.Entry(Id(0xa1)).has_value());

  directory.SetUnavailable(false);
  // The clock has not moved: the retry waits for its backoff, so nothing is written yet.
  EXPECT_EQ(directory.writes(), writes_while_down);
  clock.Advance(absl::Seconds(6));  // past the longest backoff
  ASSERT_TRUE(rplasma::testing::WaitFor([&] { return publisher.pending() == 0; }, absl::Seconds(5)));
  publisher.Stop();
  EXPECT_TRUE(directory.Entry(Id(0xa1)).has_value());
  EXPECT_TRUE(directory.Entry(Id(0xb2)).has_value());
  EXPECT_FALSE(directory.Entry(Id(0xc3)).has_value()) << "a failed remove is retried too";
  EXPECT_EQ(publisher.reconciles(), 0u);
}

TEST(ObjectPublisherTest, PeriodicReconcilePublishesWhatTheDirectoryLacksAndRemovesStaleEntries) {
  rplasma::testing::FakeLocalStore store(1 << 20);
  const ObjectDescription held = SealIn(store, Id(0xa1));  // its publish was lost: no event comes
  StatefulDirectory directory;
  directory.Plant(Id(0xd4), {});  // the store no longer holds it
  rplasma::testing::FakeClock clock;
  ManagerStats stats;
  ObjectPublisherOptions options;
  options.reconcile_interval = absl::Seconds(30);
  ObjectPublisher publisher("node", std::make_unique<ScriptedSubscription>(), &directory, &store, &stats, &clock,
                            options);
  EXPECT_EQ(publisher.reconciles(), 0u) << "the first reconcile waits for the interval";
  clock.Advance(absl::Seconds(31));
  ASSERT_TRUE(rplasma::testing::WaitFor([&] { return publisher.reconciles() >= 1; }, absl::Seconds(5)));
  publisher.Stop();
  ASSERT_TRUE(directory.Entry(Id(0xa1)).has_value());
  EXPECT_EQ(directory.Entry(Id(0xa1))->generation, held.generation);
  EXPECT_FALSE(directory.Entry(Id(0xd4)).has_value());
}

TEST(ObjectPublisherTest, RepublishRequestRewritesEveryEntryAtOnceEvenOnesTheDirectoryLists) {
  rplasma::testing::FakeLocalStore store(1 << 20);
  const ObjectDescription held = SealIn(store, Id(0xa1));
  StatefulDirectory directory;
  ObjectDescription old = held;
  old.generation = held.generation + 100;  // listed, but not what the store holds now
  directory.Plant(Id(0xa1), old);
  rplasma::testing::FakeClock clock;
  ManagerStats stats;
  ObjectPublisher publisher("node", std::make_unique<ScriptedSubscription>(), &directory, &store, &stats, &clock);
  publisher.RequestRepublish();
  ASSERT_TRUE(rplasma::testing::WaitFor([&] { return publisher.reconciles() >= 1; }, absl::Seconds(5)));
  publisher.Stop();
  EXPECT_EQ(directory.Entry(Id(0xa1))->generation, held.generation);
}

}  // namespace
}  // namespace rplasma::manager
