// ObjectPublisher: keeps the directory in step with the local store.
//
// One thread reads the store's event stream (a Subscription, existing sealed objects first):
// sealed -> PublishObjects({id, {this node, sizes, generation, checksum}}...); deleted/evicted ->
// RemoveObjects(ids). Events already received are taken together (up to kMaxEventsPerUpdate), and
// each run of one kind is one pipelined directory call, in stream order: a fetch of 1000 objects
// costs the directory a few round trips, not 1000, and a seal never overtakes a later delete. RequestRepublish() (called by the directory's reconnect callback, on whatever
// thread reconnected) only sets a flag; the publisher thread then lists the store and publishes
// every sealed object in one pipelined batch, retrying on its next turns until it succeeds.
// Directory errors are counted and logged (rate-limited), never fatal: Redis down must not stop
// the manager. The store going away (Unavailable from the subscription) ends the thread and is
// reported by store_lost().
//
// Thread-safety: RequestRepublish, store_lost and Stop are thread-safe.
#ifndef RPLASMA_MANAGER_OBJECT_PUBLISHER_H_
#define RPLASMA_MANAGER_OBJECT_PUBLISHER_H_

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "client/client.h"
#include "manager/manager_stats.h"
#include "manager/directory/directory.h"
#include "manager/peer/local_store.h"
#include "protocol/base/clock.h"

namespace rplasma::manager {

class ObjectPublisher {
 public:
  static constexpr size_t kMaxEventsPerUpdate = 1024;

  // Starts the thread. Borrowed pointers outlive the publisher; `clock` paces retries and logs.
  ObjectPublisher(std::string node_id, std::unique_ptr<Subscription> subscription, Directory* directory,
                  peer::LocalStore* store, ManagerStats* stats, Clock* clock);
  ~ObjectPublisher();  // Stop()

  void RequestRepublish() { republish_.store(true); }
  bool store_lost() const { return store_lost_.load(); }
  void Stop();

 private:
  void Run();
  void Republish();
  // Applies `events` (in stream order) to the directory, one call per run of one kind.
  void Apply(const std::vector<ObjectEvent>& events);
  void NoteError(const ObjectID& first, const absl::Status& status);

  const std::string node_id_;
  std::unique_ptr<Subscription> subscription_;
  Directory* const directory_;
  peer::LocalStore* const store_;
  ManagerStats* const stats_;
  Clock* const clock_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> republish_{false};
  std::atomic<bool> store_lost_{false};
  absl::Time last_error_log_ = absl::InfinitePast();  // publisher thread only
  std::thread thread_;
};

}  // namespace rplasma::manager

#endif  // RPLASMA_MANAGER_OBJECT_PUBLISHER_H_
