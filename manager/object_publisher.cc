#include "manager/object_publisher.h"

#include <utility>
#include <vector>

#include "protocol/base/logging.h"
#include "protocol/base/status.h"

namespace rplasma::manager {

ObjectPublisher::ObjectPublisher(std::string node_id, std::unique_ptr<Subscription> subscription,
                                 Directory* directory, peer::LocalStore* store, ManagerStats* stats, Clock* clock)
    : node_id_(std::move(node_id)),
      subscription_(std::move(subscription)),
      directory_(directory),
      store_(store),
      stats_(stats),
      clock_(clock) {
  thread_ = std::thread([this] { Run(); });
}

ObjectPublisher::~ObjectPublisher() { Stop(); }

void ObjectPublisher::Stop() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
}

void ObjectPublisher::Run() {
  while (!stop_.load()) {
    if (republish_.exchange(false)) Republish();
    absl::StatusOr<ObjectEvent> event = subscription_->Next(absl::Milliseconds(100));
    if (!event.ok()) {
      if (ErrorCodeOf(event.status()) == ErrorCode::kDeadlineExceeded) continue;
      LOG(ERROR) << "store event stream ended: " << event.status();
      store_lost_.store(true);
      return;
    }
    std::vector<ObjectEvent> events = {*std::move(event)};
    // Take what has already arrived too (no waiting): a burst of seals becomes one update.
    while (events.size() < kMaxEventsPerUpdate) {
      absl::StatusOr<ObjectEvent> more = subscription_->Next(absl::ZeroDuration());
      if (!more.ok()) break;  // nothing buffered, or the stream broke (seen again by the next Next)
      events.push_back(*std::move(more));
    }
    Apply(events);
  }
}

void ObjectPublisher::Apply(const std::vector<ObjectEvent>& events) {
  size_t start = 0;
  while (start < events.size()) {
    const bool sealed = events[start].kind == EventKind::kSealed;
    size_t end = start;
    while (end < events.size() && (events[end].kind == EventKind::kSealed) == sealed) ++end;
    absl::Status status;
    if (sealed) {
      std::vector<std::pair<ObjectID, ObjectLocation>> objects;
      objects.reserve(end - start);
      for (size_t i = start; i < end; ++i) {
        const ObjectInfo& o = events[i].object;
        objects.emplace_back(o.id, ObjectLocation{node_id_, o.description()});
      }
      status = directory_->PublishObjects(objects);
      if (status.ok()) stats_->objects_published.fetch_add(end - start, std::memory_order_relaxed);
    } else {
      std::vector<ObjectID> ids;
      ids.reserve(end - start);
      for (size_t i = start; i < end; ++i) ids.push_back(events[i].object.id);
      status = directory_->RemoveObjects(ids);
      if (status.ok()) stats_->objects_removed.fetch_add(end - start, std::memory_order_relaxed);
    }
    if (!status.ok()) NoteError(events[start].object.id, status);
    start = end;
  }
}

void ObjectPublisher::NoteError(const ObjectID& first, const absl::Status& status) {
  stats_->publish_errors.fetch_add(1, std::memory_order_relaxed);
  if (clock_->Now() - last_error_log_ > absl::Seconds(5)) {
    LOG(WARNING) << "directory update (first id " << first.Hex() << ") failed (republished when it returns): " << status;
    last_error_log_ = clock_->Now();
  }
}

void ObjectPublisher::Republish() {
  absl::StatusOr<std::vector<ObjectInfo>> objects = store_->ListSealed();
  if (!objects.ok()) {
    LOG(WARNING) << "republish: listing the store failed: " << objects.status();
    republish_.store(true);
    return;
  }
  std::vector<std::pair<ObjectID, ObjectLocation>> batch;
  batch.reserve(objects->size());
  for (const ObjectInfo& o : *objects) {
    batch.emplace_back(o.id, ObjectLocation{node_id_, o.description()});
  }
  absl::Status status = directory_->PublishObjects(batch);
  if (!status.ok()) {
    LOG(WARNING) << "republish of " << batch.size() << " objects failed (will retry): " << status;
    republish_.store(true);
    clock_->SleepFor(absl::Milliseconds(100));
    return;
  }
  stats_->republishes.fetch_add(1, std::memory_order_relaxed);
  LOG(INFO) << "republished " << batch.size() << " objects to the directory";
}

}  // namespace rplasma::manager
