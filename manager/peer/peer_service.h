// PeerService: the serving side of the peer protocol — the transport::RequestHandler a manager
// gives its transport's listener.
//
//   Get{id}        -> the object's bytes inline (refused above max_get_bytes: use Pin)
//   Pin{id}        -> a store reference under a lease (LeaseTable) + the RemoteRegion to read
//   Unpin{lease}   -> ends the lease (only the connection that took it may)
//   FetchBatch{ids, inline_max, inline_budget}
//                  -> one entry per id in one reply: its bytes inline (objects of at most
//                     inline_max bytes, while the reply's inline bytes stay within inline_budget
//                     and max_get_bytes), else pinned under its own lease, or its own error. One
//                     store request pins them all; the inline ones' bytes are sent straight from
//                     the arena after the reply's head (gather on send, transport::CallReply),
//                     and one store request releases them once the transport has sent them
//   UnpinBatch{ls} -> ends each lease of this connection (unknown ones are ignored: the requester
//                     does not wait for this reply, and a lost Unpin only costs a lease's TTL)
//   ProbeGet{n}    -> n bytes inline from the probe region       (auto threshold calibration)
//   ProbePin{n}    -> a lease on the first n bytes of the probe region
//
// The probe region is an object this manager creates (unsealed, so never published or visible to
// readers) on the first probe and aborts at Shutdown. Leases end on Unpin, on OnDisconnect of
// their connection, or when the reaper thread finds their TTL passed.
//
// Every request is decoded with the verifier and checked; a bad one gets an error reply (and is
// counted), never a crash. HandleCall runs on transport threads, concurrently.
//
// Thread-safety: thread-safe. Threads: one reaper thread (started by Create, joined by Shutdown).
#ifndef RPLASMA_MANAGER_PEER_PEER_SERVICE_H_
#define RPLASMA_MANAGER_PEER_PEER_SERVICE_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

#include "manager/peer/lease_table.h"
#include "manager/peer/local_store.h"
#include "manager/peer/peer_messages.h"
#include "manager/transport/transport.h"
#include "protocol/base/clock.h"
#include "protocol/base/counter_set.h"

namespace rplasma::peer {

struct PeerServiceOptions {
  LeaseTableOptions leases;
  // Largest object served by Get (its reply must fit one Call).
  uint64_t max_get_bytes = kMaxInlineObjectBytes;
  // How often the reaper looks for expired leases (capped by ttl / 4).
  absl::Duration reap_interval = absl::Milliseconds(500);
  // Time for lease starts and expiry. Borrowed; tests pass a fake one to expire leases at will.
  Clock* clock = &Clock::Real();

  absl::Status Validate() const;
};

// A snapshot of PeerService's counters (declared with its members below): stats()["gets"].
using PeerServiceStats = CounterSnapshot;

class PeerService : public transport::RequestHandler {
 public:
  // `region_for` maps an arena offset range to what a peer reads (Transport::RegionFor).
  using RegionFor = std::function<transport::RemoteRegion(uint64_t offset, uint64_t length)>;

  static absl::StatusOr<std::unique_ptr<PeerService>> Create(const PeerServiceOptions& options, LocalStore* store,
                                                             RegionFor region_for);
  ~PeerService() override;

  void OnConnect(uint64_t conn_id, const std::string& peer_address) override;
  transport::CallReply HandleCall(uint64_t conn_id, absl::string_view request) override;
  bool AllowRead(uint64_t conn_id, const transport::RemoteRegion& region) override;
  void OnDisconnect(uint64_t conn_id) override;

  // Stops the reaper, ends every lease, aborts the probe object. Idempotent.
  void Shutdown();
  PeerServiceStats stats() const;

 private:
  PeerService(const PeerServiceOptions& options, LocalStore* store, RegionFor region_for);
  absl::StatusOr<transport::CallReply> Handle(uint64_t conn_id, const PeerRequest& request);
  absl::StatusOr<std::string> HandleGet(const ObjectID& id);
  absl::StatusOr<std::string> HandlePin(uint64_t conn_id, const ObjectID& id);
  transport::CallReply HandleFetchBatch(uint64_t conn_id, const FetchBatchRequest& request);
  std::string HandleUnpinBatch(uint64_t conn_id, const std::vector<uint64_t>& lease_ids);
  // A lease of `conn_id` on `pinned` (a sealed object), as a Pin reply.
  absl::StatusOr<PinReply> Lease(uint64_t conn_id, std::unique_ptr<PinnedObject> pinned);
  absl::StatusOr<transport::CallReply> HandleProbe(uint64_t conn_id, uint64_t bytes, bool pin);
  absl::StatusOr<CreatedObject> ProbeRegion();
  void ReapLoop();

  const PeerServiceOptions options_;
  LocalStore* const store_;
  const RegionFor region_for_;
  LeaseTable leases_;

  absl::Mutex probe_mu_;
  std::optional<CreatedObject> probe_ ABSL_GUARDED_BY(probe_mu_);
  ObjectID probe_id_;

  absl::Mutex reap_mu_;
  bool stopping_ ABSL_GUARDED_BY(reap_mu_) = false;
  std::thread reaper_;

  // The manager's stats JSON shows these as "peer_service", in this order; those with a metric are
  // also in the manager's Prometheus text (manager_metrics.h).
  CounterSet counters_;
  Counter gets_{&counters_, "gets", "rplasma_manager_served_gets_total", "Objects peers got from this node."};
  Counter get_bytes_{&counters_, "get_bytes", "rplasma_manager_served_get_bytes_total",
                     "Bytes peers got from this node."};
  Counter pins_{&counters_, "pins", "rplasma_manager_served_pins_total", "Objects peers pinned here to read remotely."};
  Counter unpins_{&counters_, "unpins"};
  Counter probes_{&counters_, "probes"};
  Counter fetch_batches_{&counters_, "fetch_batches"};    // each also counts its objects in gets+get_bytes, pins
  Counter failed_entries_{&counters_, "failed_entries"};  // batch entries answered with an error
  Counter bad_requests_{&counters_, "bad_requests", "rplasma_manager_peer_bad_requests_total",
                        "Undecodable or invalid requests from peers."};
  Counter failed_requests_{&counters_, "failed_requests"};  // valid, answered with an error (not found...)
  Counter reads_allowed_{&counters_, "reads_allowed", "rplasma_manager_served_reads_allowed_total",
                         "Remote reads of this node's arena allowed."};
  Counter reads_refused_{&counters_, "reads_refused", "rplasma_manager_served_reads_refused_total",
                         "Remote reads refused (no live lease)."};
  Reading leases_live_{&counters_,
                       "leases_live",
                       MetricType::kGauge,
                       "rplasma_manager_leases",
                       "Leases peers hold on local objects now.",
                       [this] { return leases_.size(); }};
  Reading leases_expired_{&counters_,
                          "leases_expired",
                          MetricType::kCounter,
                          "rplasma_manager_leases_expired_total",
                          "Leases that expired before their peer released them.",
                          [this] { return leases_.expired_total(); }};
  Counter leases_dropped_{&counters_, "leases_dropped", "rplasma_manager_leases_dropped_total",
                          "Leases dropped because their peer disconnected."};
  Counter connections_{&counters_, "connections"};
};

}  // namespace rplasma::peer

#endif  // RPLASMA_MANAGER_PEER_PEER_SERVICE_H_
