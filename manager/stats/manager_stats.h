// ManagerStats: the manager's counters and per-fetch phase timings, rendered as JSON for
// StatsRequest on the client socket (and `rplasma stats --manager`).
//
// Counters (a CounterSet) are bumped from any thread; phase timings accumulate under a mutex together
// with a ring of the most recent fetches (id, peer, protocol, bytes, phases), so each fetch's
// protocol choice is visible. Manager::StatsJson adds, as `extra` members: node_id, transport,
// threshold_mode ("fixed" | "auto" | "file"), default_threshold (bytes; for auto, the value before
// a peer is calibrated), peer_thresholds (node id -> bytes in force, for every peer fetched from),
// peer_unpins (leases on peers ended off the fetch's path: ended, failed), transport_stats and
// peer_service. Each transfer's total time (the sum of its phases) also goes
// into a latency histogram per protocol, which manager_metrics.h renders for Prometheus.
// Thread-safety: thread-safe.
#ifndef RPLASMA_MANAGER_STATS_MANAGER_STATS_H_
#define RPLASMA_MANAGER_STATS_MANAGER_STATS_H_

#include <cstdint>
#include <deque>
#include <string>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

#include "manager/peer/peer_protocol.h"
#include "protocol/base/counter_set.h"
#include "protocol/base/json_writer.h"
#include "protocol/base/object_id.h"
#include "protocol/metrics/latency_histogram.h"

namespace rplasma::manager {

// Where one fetch spent its time.
struct FetchPhases {
  absl::Duration lookup;
  absl::Duration connect;
  absl::Duration transfer;
  absl::Duration verify;
  absl::Duration seal;
};

// One transfer from one peer: a single object, or a batch of `objects` (then `id` is its first).
struct FetchRecord {
  ObjectID id;
  uint64_t objects = 1;
  std::string peer;
  peer::PeerProtocol protocol = peer::PeerProtocol::kGet;
  std::string why;      // why this protocol, in words (the threshold, exploration, the owner's choice)
  bool forced = false;  // by the protocol its caller asked for, not the policy's choice
  uint64_t bytes = 0;
  FetchPhases phases;
};

class ManagerStats : public CounterSet {
 public:
  static constexpr size_t kRecentFetches = 32;

  // Counters, in the order the JSON lists them (public: each is bumped with fetch_add by its owner),
  // each with its Prometheus metric (manager_metrics.h renders them). fetch_local, fetch_merged and
  // fetch_failures have none of their own: they are outcomes of rplasma_manager_fetches_total.
  Counter fetch_requests{this, "fetch_requests", "rplasma_manager_fetch_requests_total",
                         "Object ids asked for by local clients."};
  Counter fetch_local{this, "fetch_local"};        // already in the local store
  Counter fetch_merged{this, "fetch_merged"};      // waited on a concurrent fetch of the same id
  Counter fetch_failures{this, "fetch_failures"};  // ids reported failed
  Counter transfer_failures{this, "transfer_failures", "rplasma_manager_transfer_failures_total",
                            "Transfers from one source that failed (the local object was aborted)."};
  Counter batch_transfers{this, "batch_transfers", "rplasma_manager_batch_transfers_total",
                          "Transfers that moved several ids from one peer at once."};
  Counter explored_transfers{this, "explored_transfers", "rplasma_manager_explored_transfers_total",
                             "Transfers sent by the other protocol than the threshold's, to measure it (auto)."};
  Counter checksum_mismatches{this, "checksum_mismatches", "rplasma_manager_checksum_mismatches_total",
                              "Transferred objects whose checksum did not match."};
  Counter lease_lapses{this, "lease_lapses", "rplasma_manager_lease_lapses_total",
                       "Remote reads that outlived their lease and were discarded."};
  Counter generation_hint_mismatches{this, "generation_hint_mismatches",
                                     "rplasma_manager_generation_hint_mismatches_total",
                                     "Owners whose object generation differed from the directory's hint."};
  Counter directory_polls{this, "directory_polls", "rplasma_manager_directory_polls_total",
                          "Directory re-lookups of ids not yet sealed anywhere."};
  Counter directory_errors{this, "directory_errors", "rplasma_manager_directory_errors_total",
                           "Directory operations that failed."};
  Counter directory_lookups{this, "directory_lookups", "rplasma_manager_directory_lookups_total",
                            "Ids a fetch asked the directory about (re-lookups included)."};
  Counter location_cache_hits{this, "location_cache_hits", "rplasma_manager_location_cache_hits_total",
                              "Ids fetched straight from the node that served them before, without the directory."};
  Counter location_cache_misses{this, "location_cache_misses", "rplasma_manager_location_cache_misses_total",
                                "Ids the location cache did not know (or whose node was silent too long)."};
  Counter location_cache_stale{
      this, "location_cache_stale", "rplasma_manager_location_cache_stale_total",
      "Cached locations that failed (retried through the directory) or held a new generation."};
  Counter hinted_fetches{this, "hinted_fetches", "rplasma_manager_hinted_fetches_total",
                         "Ids sent to the node the caller hinted at."};
  Counter hint_misses{this, "hint_misses", "rplasma_manager_hint_misses_total",
                      "Hinted ids the hinted node could not serve (retried through the directory)."};
  Counter guessed_fetches{this, "guessed_fetches", "rplasma_manager_guessed_fetches_total",
                          "Ids with neither a cached location nor a hint sent first to the guessed owner."};
  Counter guess_misses{this, "guess_misses", "rplasma_manager_guess_misses_total",
                       "Guessed ids the guessed owner could not serve (retried through the directory)."};
  Counter objects_published{this, "objects_published", "rplasma_manager_objects_published_total",
                            "Local objects announced to the directory."};
  Counter objects_removed{this, "objects_removed", "rplasma_manager_objects_removed_total",
                          "Local objects withdrawn from the directory."};
  Counter publish_errors{this, "publish_errors", "rplasma_manager_publish_errors_total",
                         "Directory announcements that failed."};
  Counter publish_updates{this, "publish_updates", "rplasma_manager_publish_updates_total",
                          "Directory updates the publisher made (each a batch of publications or removals)."};
  // Time the publisher's directory updates took, in µs (rendered as rplasma_manager_publish_seconds_total).
  Counter publish_us{this, "publish_us"};
  Counter republishes{this, "republishes", "rplasma_manager_republishes_total",
                      "Full republish runs after the directory came back."};
  Counter copies_deferred{this, "copies_deferred"};                // fetched copies whose publication waited
  Counter copies_never_published{this, "copies_never_published"};  // deleted before their turn came
  Counter heartbeat_errors{this, "heartbeat_errors", "rplasma_manager_heartbeat_errors_total",
                           "Directory heartbeats that failed."};
  Counter transport_fallbacks{this, "transport_fallbacks", "rplasma_manager_transport_fallbacks_total",
                              "Starts where --transport auto found no verbs device and chose tcp."};
  Counter calibrations{this, "calibrations", "rplasma_manager_calibrations_total", "Automatic threshold probes run."};

  // A completed fetch of one object.
  void RecordFetch(const FetchRecord& record);

  // The JSON document: the counters, the fetch timings, then the members of `extra`.
  std::string ToJson(const JsonObject& extra) const;

  // One protocol's transfers so far; `latency` counts each transfer once (a batch too).
  struct ProtocolSnapshot {
    uint64_t transfers = 0;
    uint64_t objects = 0;
    uint64_t forced_objects = 0;  // of `objects`, moved by this protocol because the caller asked
    uint64_t bytes = 0;
    HistogramSnapshot latency;  // seconds, lookup to seal
    FetchPhases phases;         // summed over the transfers
  };
  ProtocolSnapshot ByProtocol(peer::PeerProtocol protocol) const;

 private:
  struct ProtocolTotals {
    uint64_t fetches = 0;  // transfers (a batch counts once)
    uint64_t objects = 0;
    uint64_t forced_objects = 0;
    uint64_t bytes = 0;
    FetchPhases phases;
  };

  static int Index(peer::PeerProtocol protocol) { return protocol == peer::PeerProtocol::kGet ? 0 : 1; }

  mutable absl::Mutex mu_;
  ProtocolTotals totals_[2] ABSL_GUARDED_BY(mu_);  // [get, pin]
  LatencyHistogram latency_[2] = {LatencyHistogram(LatencyHistogram::FetchBounds()),
                                  LatencyHistogram(LatencyHistogram::FetchBounds())};  // [get, pin]; atomics
  std::deque<FetchRecord> recent_ ABSL_GUARDED_BY(mu_);
};

}  // namespace rplasma::manager

#endif  // RPLASMA_MANAGER_STATS_MANAGER_STATS_H_
