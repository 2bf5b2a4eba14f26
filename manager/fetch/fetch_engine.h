// FetchEngine: brings remote objects into the local store (the manager's Fetch).
//
// Fetch(ids, timeout, hint), for each distinct id:
//   1. merging: if another Fetch is already bringing the id, wait for its outcome (in-flight map);
//      else this call leads the id.
//   2. routing: an id this node fetched before goes straight to the node that served it (the
//      location cache, location_cache.h); else, with a hint, to the hinted node; else, with
//      guess_owner, to the node the recent lookups found most objects on while guessing it pays
//      (owner_guess.h); else (and for every id such a shortcut failed for) to the directory: the
//      led ids are looked up in one
//      pipelined batch. A warm fetch makes no directory call. The local store is asked (one
//      Contains batch) only about ids that may be here already: those the directory lists on
//      this node, and those it lists nowhere (sealed here, not yet published). Sealed here -> OK.
//      An id listed on other nodes only costs no store round trip before its transfer.
//   3. every id with a source is transferred at once (TransferAll): each id goes to its first
//      source; the ids of one source travel together and sources are served side by side (up to
//      sources_in_flight threads), in batches of one round trip each (TransferBatch: the owner
//      inlines objects up to the peer's threshold and pins the rest), split by kMaxBatchIds,
//      get_batch_bytes expected inline and pin_batch_bytes expected pinned. A source's single id
//      goes by the protocol ThresholdPolicy chooses for its size (exploration included), inline
//      up to the largest Call, and its transfer time feeds the policy. Ids
//      that failed move on to their next source, the same way, until one succeeds; a failed
//      transfer has already aborted its local object. If creating the local object fails with
//      ObjectExists, the store is asked (one batch): sealed here -> OK. One id's failure never
//      fails another. Every verified transfer puts its owner's reply in the location cache.
//   4. an id whose cached, hinted or guessed source failed forgets that entry and goes back to step 2 at
//      once, through the directory (a stale entry costs one attempt, never the fetch); ids not
//      sealed anywhere yet (no location, or the owner no longer has it / it changed under us) are
//      looked up again, and asked of the store again, with exponential backoff until the deadline.
//   5. ids that fail otherwise (transport errors, store out of memory, ...) are reported at once.
// Steps 2-5 run per chunk of pipeline_ids led ids, several chunks at once (pipeline_depth).
// A directory failure (Redis down) fails the ids it was asked about immediately with
// kUnavailable, except those the store then reports sealed here; cached and hinted ids do not
// need it.
//
// Thread-safety: thread-safe; Fetch runs on the caller's thread (client-socket connection
// threads), helped by the engine's own WorkerPool (worker_threads; no fetch starts a thread).
// Hand-offs: the in-flight map (mu_) passes a leader's outcome to merged waiters.
#ifndef RPLASMA_MANAGER_FETCH_FETCH_ENGINE_H_
#define RPLASMA_MANAGER_FETCH_FETCH_ENGINE_H_

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "absl/types/span.h"

#include "manager/directory/directory.h"
#include "manager/fetch/expected_copies.h"
#include "manager/fetch/location_cache.h"
#include "manager/fetch/owner_guess.h"
#include "manager/fetch/peer_connector.h"
#include "manager/fetch/threshold_policy.h"
#include "manager/peer/batch_transfer.h"
#include "manager/peer/lease_ender.h"
#include "manager/peer/local_store.h"
#include "manager/stats/manager_stats.h"
#include "protocol/base/clock.h"
#include "protocol/base/status.h"
#include "protocol/base/worker_pool.h"

namespace rplasma::fetch {

struct FetchEngineOptions {
  std::string self_node_id;                             // locations of this node are skipped
  absl::Duration poll_initial = absl::Milliseconds(5);  // first re-lookup delay
  absl::Duration poll_max = absl::Milliseconds(250);    // backoff cap
  uint64_t read_chunk_bytes = 4u << 20;                 // Pin path: bytes per Read call
  // Batches (several ids from one source): a reply carries at most get_batch_bytes of objects
  // inline (the owner pins the rest); a batch leases and creates at most pin_batch_bytes (hinted
  // sizes) at once. Reads, chunk size and the store path: `batch` (its read_chunk_bytes and
  // inline_budget_bytes are set from these).
  uint64_t get_batch_bytes = 8u << 20;
  uint64_t pin_batch_bytes = 256u << 20;
  int sources_in_flight = 8;  // sources served at once (a thread each, the caller's included)
  // The engine's threads (a WorkerPool; fetches start none): they serve chunks, sources and reads
  // beside the threads of the fetches themselves.
  size_t worker_threads = 8;
  // A Fetch leading more than pipeline_ids ids handles them in chunks of that many, up to
  // pipeline_depth chunks at once (a thread each, the caller's included): one chunk's lookup
  // overlaps another's transfer and a third's store requests.
  size_t pipeline_ids = 256;
  int pipeline_depth = 3;
  // batch.seal_detached: for callers that wait for the seals themselves, the store requests making
  // fetched objects visible are not waited for (see Fetch).
  peer::BatchTransferOptions batch;
  LocationCacheOptions location_cache;
  // Ids with neither a cached location nor a hint first go to the node the recent directory
  // lookups found most of their ids on, while such guesses are mostly right (OwnerGuess; its
  // candidate must have proved alive within location_cache.node_ttl).
  bool guess_owner = true;
  // Told every id before its transfer creates it here (borrowed; nullptr = nobody): the publisher
  // then publishes the copy lazily.
  ExpectedCopies* expected_copies = nullptr;
  // Ends the leases of pinned objects once they are read, on its own thread (borrowed; nullptr: each
  // transfer sends its UnpinBatch before it returns, and the fetch waits for the answer).
  peer::LeaseEnder* lease_ender = nullptr;

  absl::Status Validate() const;
};

// How one Fetch call wants its ids brought.
struct FetchCall {
  // The node that probably holds the ids ("" = none; this node's own id is ignored), tried for
  // those the location cache does not know before the directory is asked.
  std::string hint;
  // A client that reads the shared index and waits there for the objects to show sealed: with
  // batch.seal_detached, the store requests that make the fetched objects visible are sent
  // without waiting for the store's answers. Without it, Fetch returns once they are sealed: a
  // caller merged into a transfer that did not wait gets them confirmed with one Contains (for
  // those the index does not show yet).
  bool caller_waits_for_seal = false;
  // Set: every transfer this call leads goes by this protocol, whatever the policy would choose
  // (Get still has the owner pin what does not fit a reply), and teaches the policy nothing: for
  // callers comparing the protocols with the policy on the same node, or pinning one down. Ids
  // merged into another call's transfer come the way that one goes.
  std::optional<PeerProtocol> protocol;
};

class FetchEngine {
 public:
  // All pointers are borrowed and must outlive the engine. `clock` times deadlines, back-off
  // sleeps and the phase timings.
  FetchEngine(FetchEngineOptions options, Directory* directory, peer::LocalStore* store, PeerConnector* connector,
              ThresholdPolicy* policy, manager::ManagerStats* stats, Clock* clock);

  // One status per id, in order (duplicates share the outcome); `call` as FetchCall says.
  std::vector<absl::Status> Fetch(absl::Span<const ObjectID> ids, absl::Duration timeout, const FetchCall& call);
  std::vector<absl::Status> Fetch(absl::Span<const ObjectID> ids, absl::Duration timeout, const std::string& hint = "",
                                  bool caller_waits_for_seal = false) {
    return Fetch(ids, timeout, FetchCall{hint, caller_waits_for_seal, std::nullopt});
  }
  // Makes fetches still waiting for an object give up with kUnavailable (manager shutdown).
  void Shutdown() { stopping_.store(true); }

 private:
  // The ids one Fetch call leads, and the outcome of each as its chunk finishes, for the calls
  // merged into it (one per leading call: no lock or allocation per id).
  // (A merged call waits on `finished`, not with an absl::Condition: abseil evaluates conditions
  // inside the mutex, where ThreadSanitizer cannot see it held.)
  struct Flight {
    absl::Mutex mu;
    absl::CondVar finished;  // signalled when a chunk's outcomes are in `done`
    absl::flat_hash_map<ObjectID, absl::Status> done ABSL_GUARDED_BY(mu);
    // Calls merged into this flight so far (guarded by the engine's mu_): while none, a chunk's
    // outcomes go to the leader only, not into `done`.
    size_t joiners = 0;
  };

  // kDeadlineExceeded for `id`, with `last` (the last attempt's error, if any) in the message.
  static absl::Status DeadlineError(const ObjectID& id, const absl::Status& last);
  // kInternal "not attempted": one instance, copied (not built) into every Transfer.
  static const absl::Status& NotAttempted();

  // Where an id's sources came from this round.
  enum class Route { kDirectory, kCache, kHint, kGuess };
  // One id on its way here in one round of TransferAll: where it may come from (tried in order)
  // and what became of it.
  struct Transfer {
    ObjectID id;
    absl::InlinedVector<ObjectLocation, 1> sources;  // usually one: no allocation per id
    size_t source = 0;                               // the one tried now
    absl::Status status = NotAttempted();
    ObjectDescription owner;             // the owner's description, once it served the object
    bool seal_detached = false;          // its store requests are not waited for (batch.seal_detached)
    std::optional<PeerProtocol> forced;  // the protocol its call asked for (FetchCall::protocol)

    const ObjectLocation& current() const { return sources[source]; }
  };

  // One led id through the rounds of FetchLed: this round's route, sources and outcome, and what
  // carries over between rounds.
  struct LedId {
    Transfer transfer;                    // the id; this round's sources and transfer outcome
    Route route = Route::kDirectory;      // where this round's sources came from
    std::optional<absl::Status> settled;  // this round's outcome when no transfer was needed
    bool transferred = false;             // TransferAll tried it this round
    bool routed = false;                  // the cache and the hint have had their chance
    absl::Status last_error;              // of the last attempt worth waiting after
    std::optional<absl::Status> result;   // the final outcome

    void NewRound();
  };

  // Fetches `ids` (led by `call`) until `deadline`; one status per id. Each round: the
  // shortcuts, the directory, the transfers, then each id's outcome (steps 2-5 above).
  std::vector<absl::Status> FetchLed(const std::vector<ObjectID>& ids, absl::Time deadline, const FetchCall& call);
  // Step 2, first part: an id not routed before goes to its cached location, else to `hint` (""
  // = none), else to the guessed owner; one the shared index shows sealed here is settled OK.
  // True if it sent an id to the guessed owner.
  bool RouteByShortcut(const std::vector<LedId*>& pending, const std::string& hint);
  // Step 2, second part: the ids still without a route are looked up in one pipelined batch and
  // asked of the store where the answer makes it possible. `learn_owner`: the lookup is not biased
  // by a guess (it asks about every id nothing else routed), so it teaches OwnerGuess. Returns
  // the lookup's time.
  absl::Duration RouteByDirectory(const std::vector<LedId*>& pending, bool learn_owner);
  // Step 3: every id with a source and no outcome yet is transferred (TransferAll).
  void TransferRound(const std::vector<LedId*>& pending, absl::Time deadline, absl::Duration lookup_time,
                     const FetchCall& call);
  // Steps 4-5: each id's outcome, or it stays in `pending` for another round. True if a shortcut
  // failed (its ids go to the directory at once).
  bool Settle(std::vector<LedId*>& pending, absl::Time deadline);
  // Transfers each id from its sources (tried in turn), grouped by source.
  void TransferAll(std::vector<Transfer>& transfers, absl::Time deadline, absl::Duration lookup_time);
  // The transfers at `which` from `node` (each one's current source).
  void TransferFrom(const std::string& node, std::vector<Transfer>& transfers, const std::vector<size_t>& which,
                    absl::Time deadline, absl::Duration lookup_time);
  // The OK outcomes the store does not confirm sealed become errors (see Fetch).
  void ConfirmSealed(absl::Span<const ObjectID> ids, std::vector<absl::Status>& statuses);
  // Feeds the threshold policy with the time the objects at `at` took (moved on one decision;
  // `pinned_objects` of them by Pin; the sum of their BatchTransferResult::total), when they
  // measured one protocol at one size (see the definition).
  void LearnFrom(const std::string& node, const std::vector<Transfer>& transfers, const std::vector<size_t>& at,
                 uint64_t pinned_objects, absl::Duration transfer_time);
  // One batch (the transfers at `at`, one or more) from `node`, objects up to `inline_max` bytes
  // inline: one round trip. `why` says why this way (the fetch's record in the stats). Its result
  // (empty if no channel could be had).
  peer::BatchTransferResult TransferBatchFrom(const std::string& node, std::vector<Transfer>& transfers,
                                              uint64_t inline_max, const std::vector<size_t>& at, absl::Time deadline,
                                              absl::Duration lookup_time, std::string why);
  // Counts a finished transfer from `node` and keeps the cache true to a failure: an id the owner
  // failed is forgotten (the caller caches the owner's replies of a batch together).
  void NoteOutcome(const std::string& node, Transfer& transfer);
  // `node` could not be reached (channel == nullptr) or a transfer failed on `channel`: a broken
  // channel is dropped, and with it every cached location on the node.
  void Unreachable(const std::string& node, transport::Channel* channel);
  // ContainsAll of `ids` as one answer per id (the store's error for each when it fails).
  std::vector<absl::StatusOr<bool>> AskLocal(absl::Span<const ObjectID> ids);
  // The led `ids` have their `statuses`: no longer in flight, and told to the calls merged into them.
  void Finish(Flight& flight, absl::Span<const ObjectID> ids, const std::vector<absl::Status>& statuses);

  const FetchEngineOptions options_;
  Directory* const directory_;
  peer::LocalStore* const store_;
  PeerConnector* const connector_;
  ThresholdPolicy* const policy_;
  manager::ManagerStats* const stats_;
  Clock* const clock_;
  LocationCache locations_;
  OwnerGuess guess_;
  WorkerPool pool_;

  std::atomic<bool> stopping_{false};
  absl::Mutex mu_;
  absl::flat_hash_map<ObjectID, std::shared_ptr<Flight>> in_flight_ ABSL_GUARDED_BY(mu_);
};

}  // namespace rplasma::fetch

#endif  // RPLASMA_MANAGER_FETCH_FETCH_ENGINE_H_
