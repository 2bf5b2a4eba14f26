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
    const ObjectInfo& o = event->object;
    absl::Status status;
    if (event->kind == EventKind::kSealed) {
      status = directory_->PublishObject(o.id, ObjectLocation{node_id_, o.description()});
      if (status.ok()) stats_->objects_published.fetch_add(1, std::memory_order_relaxed);
    } else {
      status = directory_->RemoveObject(o.id);
      if (status.ok()) stats_->objects_removed.fetch_add(1, std::memory_order_relaxed);
    }
    if (!status.ok()) {
      stats_->publish_errors.fetch_add(1, std::memory_order_relaxed);
      if (clock_->Now() - last_error_log_ > absl::Seconds(5)) {
        LOG(WARNING) << "directory update for " << o.id.Hex() << " failed (republished when it returns): " << status;
        last_error_log_ = clock_->Now();
      }
    }
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
