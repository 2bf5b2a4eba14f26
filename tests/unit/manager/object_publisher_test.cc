// ObjectPublisher over a scripted event stream and a recording directory: a burst of events
// becomes one directory call per run of one kind, in stream order.
#include "manager/object_publisher.h"

#include <gtest/gtest.h>

#include <deque>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "protocol/base/mutex_lock.h"
#include "tests/support/subprocess.h"
#include "tests/unit/fetch/fetch_fakes.h"

namespace rplasma::manager {
namespace {

// Hands out the scripted events, all at once once released (as a burst read from the socket).
class ScriptedSubscription : public Subscription {
 public:
  void Push(std::vector<ObjectEvent> events) {
    MutexLock lock(&mu_);
    for (ObjectEvent& e : events) queue_.push_back(std::move(e));
  }
  absl::StatusOr<ObjectEvent> Next(absl::Duration timeout) override {
    MutexLock lock(&mu_);
    if (!lock.AwaitWithTimeout(absl::Condition(this, &ScriptedSubscription::HasEvents), timeout)) {
      return MakeError(ErrorCode::kDeadlineExceeded, "no event");
    }
    ObjectEvent e = queue_.front();
    queue_.pop_front();
    return e;
  }
  int fd() const override { return -1; }

 private:
  bool HasEvents() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !queue_.empty(); }
  absl::Mutex mu_;
  std::deque<ObjectEvent> queue_ ABSL_GUARDED_BY(mu_);
};

// Records every update as "publish:ids" / "remove:ids".
class RecordingDirectory : public rplasma::testing::FakeDirectory {
 public:
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
  }
  absl::Mutex mu_;
  std::vector<std::string> calls_ ABSL_GUARDED_BY(mu_);
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

}  // namespace
}  // namespace rplasma::manager
