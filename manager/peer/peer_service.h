// PeerService: the serving side of the peer protocol — the transport::RequestHandler a manager
// gives its transport's listener.
//
//   Get{id}        -> the object's bytes inline (refused above max_get_bytes: use Pin)
//   Pin{id}        -> a store reference under a lease (LeaseTable) + the RemoteRegion to read
//   Unpin{lease}   -> ends the lease (only the connection that took it may)
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

namespace rplasma::peer {

struct PeerServiceOptions {
  LeaseTableOptions leases;
  // Largest object served by Get (its reply must fit one Call).
  uint64_t max_get_bytes = transport::kMaxCallBytes - 4096;
  // TEST AID ONLY (--debug-serve-bytes-per-sec): when non-zero, Get replies and tcp reads are
  // delayed as if served at this rate, so fault tests can kill a server mid-transfer.
  uint64_t debug_serve_bytes_per_sec = 0;
  // How often the reaper looks for expired leases (capped by ttl / 4).
  absl::Duration reap_interval = absl::Milliseconds(500);

  absl::Status Validate() const;
};

struct PeerServiceStats {
  uint64_t gets = 0;
  uint64_t get_bytes = 0;
  uint64_t pins = 0;
  uint64_t unpins = 0;
  uint64_t probes = 0;
  uint64_t bad_requests = 0;   // undecodable or invalid requests
  uint64_t failed_requests = 0;  // valid requests answered with an error (not found, ...)
  uint64_t reads_allowed = 0;
  uint64_t reads_refused = 0;
  uint64_t leases_live = 0;
  uint64_t leases_expired = 0;
  uint64_t leases_dropped = 0;  // by disconnect
  uint64_t connections = 0;
};

class PeerService : public transport::RequestHandler {
 public:
  // `region_for` maps an arena offset range to what a peer reads (Transport::RegionFor).
  using RegionFor = std::function<transport::RemoteRegion(uint64_t offset, uint64_t length)>;

  static absl::StatusOr<std::unique_ptr<PeerService>> Create(const PeerServiceOptions& options, LocalStore* store,
                                                             RegionFor region_for);
  ~PeerService() override;

  void OnConnect(uint64_t conn_id, const std::string& peer_address) override;
  std::string HandleCall(uint64_t conn_id, absl::string_view request) override;
  bool AllowRead(uint64_t conn_id, const transport::RemoteRegion& region) override;
  void OnDisconnect(uint64_t conn_id) override;

  // Stops the reaper, ends every lease, aborts the probe object. Idempotent.
  void Shutdown();
  PeerServiceStats stats() const;

 private:
  PeerService(const PeerServiceOptions& options, LocalStore* store, RegionFor region_for);
  absl::StatusOr<std::string> Handle(uint64_t conn_id, const PeerRequest& request);
  absl::StatusOr<std::string> HandleGet(const ObjectID& id);
  absl::StatusOr<std::string> HandlePin(uint64_t conn_id, const ObjectID& id);
  absl::StatusOr<std::string> HandleProbe(uint64_t conn_id, uint64_t bytes, bool pin);
  absl::StatusOr<CreatedSlot> ProbeRegion();
  void Throttle(uint64_t bytes) const;
  void ReapLoop();

  const PeerServiceOptions options_;
  LocalStore* const store_;
  const RegionFor region_for_;
  LeaseTable leases_;

  absl::Mutex probe_mu_;
  std::optional<CreatedSlot> probe_ ABSL_GUARDED_BY(probe_mu_);
  ObjectID probe_id_;

  absl::Mutex reap_mu_;
  bool stopping_ ABSL_GUARDED_BY(reap_mu_) = false;
  std::thread reaper_;

  std::atomic<uint64_t> gets_{0}, get_bytes_{0}, pins_{0}, unpins_{0}, probes_{0}, bad_requests_{0},
      failed_requests_{0}, reads_allowed_{0}, reads_refused_{0}, leases_dropped_{0}, connections_{0};
};

}  // namespace rplasma::peer

#endif  // RPLASMA_MANAGER_PEER_PEER_SERVICE_H_
