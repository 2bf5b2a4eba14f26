#include "manager/object_publisher.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"

#include "manager/location_reconciler.h"
#include "protocol/base/logging.h"
#include "protocol/base/status.h"

namespace rplasma::manager {

absl::Status ObjectPublisherOptions::Validate() const {
  auto invalid = [](absl::string_view m) { return MakeError(ErrorCode::kInvalidArgument, m); };
  if (reconcile_interval < absl::Milliseconds(100)) return invalid("reconcile interval must be at least 100ms");
  if (retry_backoff_initial <= absl::ZeroDuration() || retry_backoff_max < retry_backoff_initial) {
    return invalid("publisher retry backoff: need 0 < initial <= max");
  }
  if (max_pending == 0) return invalid("publisher max_pending must be positive");
  if (copy_publish_delay < absl::ZeroDuration()) return invalid("copy publish delay must not be negative");
  return absl::OkStatus();
}

ObjectPublisher::ObjectPublisher(std::string node_id, std::unique_ptr<Subscription> subscription, Directory* directory,
                                 peer::LocalStore* store, ManagerStats* stats, Clock* clock,
                                 ObjectPublisherOptions options)
    : node_id_(std::move(node_id)),
      options_(options),
      subscription_(std::move(subscription)),
      directory_(directory),
      store_(store),
      stats_(stats),
      clock_(clock),
      // The subscription lists the existing objects first, so the first check can wait its turn.
      reconcile_at_(clock->Now() + options.reconcile_interval) {
  thread_ = std::thread([this] { Run(); });
}

ObjectPublisher::~ObjectPublisher() { Stop(); }

void ObjectPublisher::Stop() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
}

void ObjectPublisher::Run() {
  while (!stop_.load()) {
    Maintain();
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

void ObjectPublisher::Maintain() {
  const absl::Time now = clock_->Now();
  if (republish_.exchange(false)) {
    full_reconcile_due_ = true;
    reconcile_at_ = now;
  }
  if (now >= reconcile_at_) {
    if (Reconcile(full_reconcile_due_)) {
      full_reconcile_due_ = false;
      backoff_ = absl::ZeroDuration();
      reconcile_at_ = clock_->Now() + options_.reconcile_interval;
    } else {
      reconcile_at_ = clock_->Now() + NextBackoff();
    }
    return;
  }
  if (now >= next_deferred_due_) PublishDeferred(/*all=*/false);
  if (!pending_.empty() && now >= retry_at_) RetryPending();
}

void ObjectPublisher::PublishDeferred(bool all) {
  const absl::Time now = clock_->Now();
  std::vector<std::pair<ObjectID, ObjectDescription>> due;
  next_deferred_due_ = absl::InfiniteFuture();
  for (auto it = deferred_.begin(); it != deferred_.end();) {
    if (all || it->second.due <= now) {
      due.emplace_back(it->first, it->second.description);
      deferred_.erase(it++);
    } else {
      next_deferred_due_ = std::min(next_deferred_due_, it->second.due);
      ++it;
    }
  }
  absl::Status status = Publish(due);
  for (const auto& [id, description] : due) {
    if (status.ok()) {
      pending_.erase(id);
    } else {
      SetPending(id, description);
    }
  }
  pending_count_.store(pending_.size());
  if (!status.ok()) {
    NoteError(absl::StrCat("publication of ", due.size(), " fetched copies"), status);
    if (retry_at_ < clock_->Now()) retry_at_ = clock_->Now() + NextBackoff();
  }
}

absl::Duration ObjectPublisher::NextBackoff() {
  backoff_ = backoff_ == absl::ZeroDuration() ? options_.retry_backoff_initial
                                              : std::min(2 * backoff_, options_.retry_backoff_max);
  return backoff_;
}

void ObjectPublisher::SetPending(const ObjectID& id, Wanted wanted) {
  if (pending_.size() >= options_.max_pending && !pending_.contains(id)) {
    // Too much to remember one by one: a full reconcile repairs every id at once.
    LOG(WARNING) << "directory: " << pending_.size() << " updates pending; dropping them for a full reconcile";
    pending_.clear();
    full_reconcile_due_ = true;
    reconcile_at_ = std::min(reconcile_at_, retry_at_);
  }
  pending_[id] = std::move(wanted);
  pending_count_.store(pending_.size());
}

void ObjectPublisher::Apply(const std::vector<ObjectEvent>& raw_events) {
  // Fetched copies wait (deferred_); a copy deleted before its turn is dropped from the plan, with
  // its delete event: nothing of it was published. A copy with an update pending for its id goes
  // out at once, so the updates of one id keep their order.
  std::vector<ObjectEvent> kept;
  const std::vector<ObjectEvent>* events_to_apply = &raw_events;
  if (options_.expected_copies != nullptr) {
    kept.reserve(raw_events.size());
    const absl::Time due = clock_->Now() + options_.copy_publish_delay;
    std::vector<ObjectID> sealed_ids;
    for (const ObjectEvent& event : raw_events) {
      if (event.kind == EventKind::kSealed) sealed_ids.push_back(event.object.id);
    }
    const std::vector<bool> expected = options_.expected_copies->TakeMany(sealed_ids);
    size_t next_sealed = 0;
    for (const ObjectEvent& event : raw_events) {
      const ObjectID& id = event.object.id;
      if (event.kind == EventKind::kSealed) {
        if (expected[next_sealed++] && !pending_.contains(id)) {
          deferred_[id] = Deferred{event.object.description(), due};
          next_deferred_due_ = std::min(next_deferred_due_, due);
          stats_->copies_deferred.fetch_add(1, std::memory_order_relaxed);
          continue;
        }
      } else if (deferred_.erase(id) > 0) {
        stats_->copies_never_published.fetch_add(1, std::memory_order_relaxed);
        continue;
      }
      kept.push_back(event);
    }
    events_to_apply = &kept;
  }
  const std::vector<ObjectEvent>& events = *events_to_apply;
  size_t start = 0;
  while (start < events.size()) {
    const bool sealed = events[start].kind == EventKind::kSealed;
    size_t end = start;
    while (end < events.size() && (events[end].kind == EventKind::kSealed) == sealed) ++end;
    absl::Status status;
    if (sealed) {
      std::vector<std::pair<ObjectID, ObjectDescription>> objects;
      objects.reserve(end - start);
      for (size_t i = start; i < end; ++i) objects.emplace_back(events[i].object.id, events[i].object.description());
      status = Publish(objects);
    } else {
      std::vector<ObjectID> ids;
      ids.reserve(end - start);
      for (size_t i = start; i < end; ++i) ids.push_back(events[i].object.id);
      status = Remove(ids);
    }
    for (size_t i = start; i < end; ++i) {
      const ObjectInfo& o = events[i].object;
      if (status.ok()) {
        pending_.erase(o.id);  // this update supersedes an older failed one
      } else {
        SetPending(o.id, sealed ? Wanted(o.description()) : std::nullopt);
      }
    }
    pending_count_.store(pending_.size());
    if (!status.ok()) {
      NoteError(absl::StrCat("update of ", end - start, " objects (first ", events[start].object.id.Hex(), ")"),
                status);
      if (retry_at_ < clock_->Now()) retry_at_ = clock_->Now() + NextBackoff();
    }
    start = end;
  }
}

absl::Status ObjectPublisher::Publish(const std::vector<std::pair<ObjectID, ObjectDescription>>& objects) {
  if (objects.empty()) return absl::OkStatus();
  std::vector<std::pair<ObjectID, ObjectLocation>> batch;
  batch.reserve(objects.size());
  for (const auto& [id, description] : objects) batch.emplace_back(id, ObjectLocation{node_id_, description});
  const absl::Time start = clock_->Now();
  const absl::Status status = directory_->PublishObjects(batch);
  CountUpdate(start);
  RETURN_IF_ERROR(status);
  stats_->objects_published.fetch_add(objects.size(), std::memory_order_relaxed);
  return absl::OkStatus();
}

absl::Status ObjectPublisher::Remove(const std::vector<ObjectID>& ids) {
  if (ids.empty()) return absl::OkStatus();
  const absl::Time start = clock_->Now();
  const absl::Status status = directory_->RemoveObjects(ids);
  CountUpdate(start);
  RETURN_IF_ERROR(status);
  stats_->objects_removed.fetch_add(ids.size(), std::memory_order_relaxed);
  return absl::OkStatus();
}

void ObjectPublisher::CountUpdate(absl::Time start) {
  stats_->publish_updates.fetch_add(1, std::memory_order_relaxed);
  stats_->publish_us.fetch_add(static_cast<uint64_t>(absl::ToInt64Microseconds(clock_->Now() - start)),
                               std::memory_order_relaxed);
}

void ObjectPublisher::RetryPending() {
  std::vector<std::pair<ObjectID, ObjectDescription>> publishes;
  std::vector<ObjectID> removes;
  for (const auto& [id, wanted] : pending_) {
    if (wanted.has_value()) {
      publishes.emplace_back(id, *wanted);
    } else {
      removes.push_back(id);
    }
  }
  absl::Status published = Publish(publishes);
  if (published.ok()) {
    for (const auto& [id, description] : publishes) pending_.erase(id);
  }
  absl::Status removed = Remove(removes);
  if (removed.ok()) {
    for (const ObjectID& id : removes) pending_.erase(id);
  }
  pending_count_.store(pending_.size());
  if (published.ok() && removed.ok()) {
    backoff_ = absl::ZeroDuration();
    LOG(INFO) << "directory: retried " << publishes.size() << " publishes and " << removes.size() << " removes";
    return;
  }
  NoteError(absl::StrCat("retry of ", pending_.size(), " pending updates"), published.ok() ? removed : published);
  retry_at_ = clock_->Now() + NextBackoff();
}

bool ObjectPublisher::Reconcile(bool full) {
  absl::StatusOr<std::vector<ObjectInfo>> sealed = store_->ListSealed();
  if (!sealed.ok()) {
    NoteError("reconcile: listing the store", sealed.status());
    return false;
  }
  std::optional<std::vector<ObjectID>> listed;
  absl::StatusOr<std::vector<ObjectID>> own = directory_->ListOwnObjects();
  if (own.ok()) {
    listed = *std::move(own);
  } else if (!absl::IsUnimplemented(own.status())) {
    NoteError("reconcile: listing this node's directory entries", own.status());
    return false;
  }
  absl::flat_hash_set<ObjectID> dirty;
  for (const auto& [id, wanted] : pending_) dirty.insert(id);
  const LocationPlan plan = PlanReconcile(*sealed, listed, dirty, full);
  std::vector<std::pair<ObjectID, ObjectDescription>> publishes;
  publishes.reserve(plan.publish.size());
  for (const ObjectInfo& o : plan.publish) publishes.emplace_back(o.id, o.description());
  absl::Status status = Publish(publishes);
  if (status.ok()) status = Remove(plan.remove);
  if (!status.ok()) {
    NoteError(absl::StrCat("reconcile (", publishes.size(), " to publish, ", plan.remove.size(), " to remove)"),
              status);
    return false;
  }
  pending_.clear();  // the store's listing is newer than every pending update
  pending_count_.store(0);
  deferred_.clear();  // sealed copies were in the listing: published now if the directory lacked them
  next_deferred_due_ = absl::InfiniteFuture();
  reconciles_.fetch_add(1);
  stats_->republishes.fetch_add(1, std::memory_order_relaxed);
  if (full || !publishes.empty() || !plan.remove.empty()) {
    LOG(INFO) << "directory reconciled" << (full ? " (full)" : "") << ": published " << publishes.size() << ", removed "
              << plan.remove.size() << " stale of " << sealed->size() << " sealed objects";
  }
  return true;
}

void ObjectPublisher::NoteError(absl::string_view what, const absl::Status& status) {
  stats_->publish_errors.fetch_add(1, std::memory_order_relaxed);
  if (clock_->Now() - last_error_log_ > absl::Seconds(5)) {
    LOG(WARNING) << "directory " << what << " failed (retried with backoff): " << status;
    last_error_log_ = clock_->Now();
  }
}

}  // namespace rplasma::manager
