// ObjectPublisher: keeps the directory in step with the local store.
//
// One thread reads the store's event stream (a Subscription, existing sealed objects first):
// sealed -> PublishObjects({id, {this node, sizes, generation, checksum}}...); deleted/evicted ->
// RemoveObjects(ids). Events already received are taken together (up to kMaxEventsPerUpdate), and
// each run of one kind is one pipelined directory call, in stream order: a fetch of 1000 objects
// costs the directory a few round trips, not 1000, and a seal never overtakes a later delete.
//
// Fetched copies (ids the fetch engine announced in `expected_copies` before sealing them here)
// are published lazily: their seal events wait up to copy_publish_delay and then go out together;
// a copy deleted or evicted before that is never published (and so never removed). A fetch that
// needs a directory entry of this node's copy is rare (other nodes find the original), and every
// directory entry is a hint anyway; the fetch itself pays none of the publishing.
//
// Repair: an update that fails (Redis down) leaves its ids in a pending map (id -> the latest
// wanted state: published with a description, or removed; a later event for the id replaces it),
// retried with backoff (retry_backoff_initial doubling to retry_backoff_max). Every
// reconcile_interval, and at once after RequestRepublish (the directory reconnected, or found this
// node's record gone), the publisher reconciles (location_reconciler.h): it lists the store's
// sealed objects and the directory's entries of this node, publishes what is missing (all of it
// after RequestRepublish: a restarted Redis has lost everything), removes what is stale, and
// clears the pending map. A failed reconcile is retried with the same backoff. Directory errors
// are counted and logged (rate-limited), never fatal: Redis down must not stop the manager. Time
// comes from `clock`.
//
// The store going away (Unavailable from the subscription) ends the thread and is reported by
// store_lost(); the manager's main loop (RunManagerUntilSignal) then shuts the node down and starts
// it afresh once the store answers again.
//
// Thread-safety: RequestRepublish, store_lost, pending, reconciles and Stop are thread-safe.
#ifndef RPLASMA_MANAGER_OBJECT_PUBLISHER_H_
#define RPLASMA_MANAGER_OBJECT_PUBLISHER_H_

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"

#include "client/client.h"
#include "manager/directory/directory.h"
#include "manager/fetch/expected_copies.h"
#include "manager/peer/local_store.h"
#include "manager/stats/manager_stats.h"
#include "protocol/base/clock.h"

namespace rplasma::manager {

struct ObjectPublisherOptions {
  absl::Duration reconcile_interval = absl::Seconds(30);           // periodic store-vs-directory check
  absl::Duration retry_backoff_initial = absl::Milliseconds(100);  // after a failed update/reconcile
  absl::Duration retry_backoff_max = absl::Seconds(5);
  // Pending ids kept for retry; beyond it they are dropped and a full reconcile repairs them all.
  size_t max_pending = 1u << 20;
  // Fetched copies announced here (borrowed; nullptr = none) are published this long after their
  // seal (plus up to 100 ms: the event loop's tick), unless deleted first.
  fetch::ExpectedCopies* expected_copies = nullptr;
  absl::Duration copy_publish_delay = absl::Milliseconds(500);

  absl::Status Validate() const;
};

class ObjectPublisher {
 public:
  static constexpr size_t kMaxEventsPerUpdate = 1024;

  // Starts the thread. Borrowed pointers outlive the publisher; `clock` paces retries, reconciles
  // and logs. REQUIRES: options.Validate().
  ObjectPublisher(std::string node_id, std::unique_ptr<Subscription> subscription, Directory* directory,
                  peer::LocalStore* store, ManagerStats* stats, Clock* clock, ObjectPublisherOptions options = {});
  ~ObjectPublisher();  // Stop()

  // Reconcile at once, publishing every sealed object (not only those the directory lacks).
  void RequestRepublish() { republish_.store(true); }
  bool store_lost() const { return store_lost_.load(); }
  // Ids waiting for a retry, and reconciles that succeeded (for stats and tests).
  size_t pending() const { return pending_count_.load(); }
  uint64_t reconciles() const { return reconciles_.load(); }
  void Stop();

 private:
  // The latest wanted state of an id: published with this description, or removed (nullopt).
  using Wanted = std::optional<ObjectDescription>;

  void Run();
  // Retries pending updates and reconciles when they are due (publisher thread).
  void Maintain();
  // Lists both sides and applies the plan; true on success.
  bool Reconcile(bool full);
  void RetryPending();
  // Applies `events` (in stream order) to the directory, one call per run of one kind.
  void Apply(const std::vector<ObjectEvent>& raw_events);
  absl::Status Publish(const std::vector<std::pair<ObjectID, ObjectDescription>>& objects);
  absl::Status Remove(const std::vector<ObjectID>& ids);
  // One directory update (Publish or Remove) that began at `start` is over: the publish phase's
  // counters (publish_updates, publish_us).
  void CountUpdate(absl::Time start);
  void NoteError(absl::string_view what, const absl::Status& status);
  absl::Duration NextBackoff();
  void SetPending(const ObjectID& id, Wanted wanted);
  // Publishes the deferred copies whose delay is over (all of them if `all`).
  void PublishDeferred(bool all);

  const std::string node_id_;
  const ObjectPublisherOptions options_;
  std::unique_ptr<Subscription> subscription_;
  Directory* const directory_;
  peer::LocalStore* const store_;
  ManagerStats* const stats_;
  Clock* const clock_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> republish_{false};
  std::atomic<bool> store_lost_{false};
  std::atomic<size_t> pending_count_{0};
  std::atomic<uint64_t> reconciles_{0};
  // Publisher thread only.
  absl::flat_hash_map<ObjectID, Wanted> pending_;
  struct Deferred {
    ObjectDescription description;
    absl::Time due;
  };
  absl::flat_hash_map<ObjectID, Deferred> deferred_;  // fetched copies not published yet
  absl::Time next_deferred_due_ = absl::InfiniteFuture();
  absl::Duration backoff_ = absl::ZeroDuration();
  absl::Time retry_at_ = absl::InfinitePast();
  absl::Time reconcile_at_;
  bool full_reconcile_due_ = false;
  absl::Time last_error_log_ = absl::InfinitePast();
  std::thread thread_;
};

}  // namespace rplasma::manager

#endif  // RPLASMA_MANAGER_OBJECT_PUBLISHER_H_
