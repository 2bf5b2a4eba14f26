// ManagerStats: the manager's counters and per-fetch phase timings, rendered as JSON for
// StatsRequest on the client socket (and `rplasma stats --manager`).
//
// Counters are atomics bumped from any thread; phase timings accumulate under a mutex together
// with a ring of the most recent fetches (id, peer, protocol, bytes, phases), so each fetch's
// protocol choice is visible. Manager::StatsJson adds, as `extra` members: node_id, transport,
// threshold_mode ("fixed" | "auto" | "file"), default_threshold (bytes; for auto, the value before
// a peer is calibrated), peer_thresholds (node id -> bytes in force, for every peer fetched from),
// transport_stats and peer_service. Thread-safety: thread-safe.
#ifndef RPLASMA_MANAGER_MANAGER_STATS_H_
#define RPLASMA_MANAGER_MANAGER_STATS_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <string>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "manager/peer/peer_protocol.h"
#include "protocol/base/object_id.h"

namespace rplasma::manager {

// Where one fetch spent its time.
struct FetchPhases {
  absl::Duration lookup;
  absl::Duration connect;
  absl::Duration transfer;
  absl::Duration verify;
  absl::Duration seal;
};

struct FetchRecord {
  ObjectID id;
  std::string peer;
  peer::PeerProtocol protocol = peer::PeerProtocol::kGet;
  uint64_t bytes = 0;
  FetchPhases phases;
};

class ManagerStats {
 public:
  static constexpr size_t kRecentFetches = 32;

  // Counters (public: each is one atomic, bumped with fetch_add(1, relaxed) by its owner).
  std::atomic<uint64_t> fetch_requests{0};      // ids asked for
  std::atomic<uint64_t> fetch_local{0};         // already in the local store
  std::atomic<uint64_t> fetch_merged{0};        // waited on a concurrent fetch of the same id
  std::atomic<uint64_t> fetch_failures{0};      // ids reported failed
  std::atomic<uint64_t> transfer_failures{0};   // one source tried and failed (local object aborted)
  std::atomic<uint64_t> checksum_mismatches{0};
  std::atomic<uint64_t> lease_lapses{0};  // Pin reads that outlived their lease: discarded
  std::atomic<uint64_t> generation_hint_mismatches{0};  // owner's generation != directory's hint
  std::atomic<uint64_t> directory_polls{0};     // re-lookups of ids not yet sealed anywhere
  std::atomic<uint64_t> directory_errors{0};
  std::atomic<uint64_t> objects_published{0};
  std::atomic<uint64_t> objects_removed{0};
  std::atomic<uint64_t> publish_errors{0};
  std::atomic<uint64_t> republishes{0};         // full republish runs after Redis came back
  std::atomic<uint64_t> heartbeat_errors{0};
  std::atomic<uint64_t> transport_fallbacks{0}; // --transport auto chose tcp: no verbs device
  std::atomic<uint64_t> calibrations{0};        // auto threshold probes run

  // A completed fetch of one object.
  void RecordFetch(const FetchRecord& record);

  // The JSON document; `extra` members (already JSON values) are appended verbatim.
  std::string ToJson(const std::map<std::string, std::string>& extra) const;

 private:
  struct ProtocolTotals {
    uint64_t fetches = 0;
    uint64_t bytes = 0;
    FetchPhases phases;
  };

  mutable absl::Mutex mu_;
  ProtocolTotals totals_[2] ABSL_GUARDED_BY(mu_);  // [get, pin]
  std::deque<FetchRecord> recent_ ABSL_GUARDED_BY(mu_);
};

}  // namespace rplasma::manager

#endif  // RPLASMA_MANAGER_MANAGER_STATS_H_
