// VerbsTransport: the Transport over RDMA verbs — rdma_cm connection set-up, RC QPs, SEND/RECV
// with credit flow control for Call, chunked RDMA READ for Read. Works on Alibaba eRDMA (one SGE,
// no SRQ, no ODP, no UD, rdma_cm only), ConnectX RoCE/IB and Soft-RoCE (rxe). See docs/VERBS.md.
//
// Layering: VerbsTransport (DeviceSet: PD + arena MR per device; Listener; channels)
//   -> VerbsChannel (one per peer, rebuilds its endpoint after errors)
//   -> Endpoint (cm_id, CQ, MessageRing, QP; one completion thread; waiting threads poll the CQ
//      themselves for up to options.cq_spin, see endpoint.h).
// Peers authenticate (manager/auth HMAC handshake on a TCP port with the listener's number) and
// present a one-time ticket in rdma_connect private data before the server creates any QP.
//
// This header includes no verbs headers: the manager core includes it to choose a transport.
// Fork safety: nothing here forks. Processes that use this transport must not fork()/system()
// after RegisterArena (registered pages would be shared copy-on-write with the child); use
// posix_spawn (vfork semantics, no page copies) or spawn helpers before registering.
// Thread-safety: all methods are thread-safe.
#ifndef RPLASMA_MANAGER_TRANSPORT_VERBS_VERBS_TRANSPORT_H_
#define RPLASMA_MANAGER_TRANSPORT_VERBS_VERBS_TRANSPORT_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

#include "manager/transport/transport.h"
#include "manager/transport/verbs/connect_seams.h"

namespace rplasma::transport {

// True iff the host has at least one RDMA device (ibv_get_device_list is non-empty), so
// `--transport auto` can fall back to tcp.
bool IsVerbsDeviceAvailable();

namespace verbs {
class DeviceSet;
class Listener;
class AsyncEventMonitor;
class VerbsChannel;
struct VerbsCounters;
struct AuthPortCounters;
}  // namespace verbs

class VerbsTransport : public Transport {
 public:
  // kUnavailable when there is no RDMA device (or not the one named in options.rdma_device).
  // `seams`: what tests of connection set-up replace (connect_seams.h); production passes none.
  static absl::StatusOr<std::unique_ptr<VerbsTransport>> Create(const TransportOptions& options,
                                                                verbs::VerbsConnectSeams seams = {});
  ~VerbsTransport() override;
  VerbsTransport(const VerbsTransport&) = delete;
  VerbsTransport& operator=(const VerbsTransport&) = delete;

  absl::string_view name() const override { return "verbs"; }
  // Once, before Listen/Connect (kFailedPrecondition afterwards).
  absl::Status RegisterArena(uint8_t* base, uint64_t size) override;
  RemoteRegion RegionFor(uint64_t offset, uint64_t length) const override;
  absl::StatusOr<std::string> Listen(const std::string& address, RequestHandler* handler) override;
  absl::StatusOr<std::shared_ptr<Channel>> Connect(const std::string& address, absl::Time deadline) override;
  // Connect's channel: an RC QP carries no state from earlier transfers that slows later ones.
  absl::StatusOr<std::shared_ptr<Channel>> ConnectPrivate(const std::string& address, absl::Time deadline) override {
    return Connect(address, deadline);
  }
  TransportStats stats() const override;
  void Shutdown() override;

  // Diagnostics.
  uint64_t qps_created() const;         // QPs this transport ever created (both sides)
  uint64_t ticket_refusals() const;     // CONNECT_REQUESTs rejected for their ticket
  uint64_t cq_events() const;           // completion-channel wake-ups of completion threads
  uint64_t waiter_completions() const;  // completions polled by the thread waiting for them

 private:
  VerbsTransport(const TransportOptions& options, verbs::VerbsConnectSeams seams,
                 std::shared_ptr<verbs::DeviceSet> devices);

  const TransportOptions options_;
  const verbs::VerbsConnectSeams seams_;  // tickets never null
  const std::shared_ptr<verbs::DeviceSet> devices_;
  const std::shared_ptr<verbs::VerbsCounters> counters_;
  const std::unique_ptr<verbs::AuthPortCounters> auth_counters_;
  std::unique_ptr<verbs::AsyncEventMonitor> monitor_;

  mutable absl::Mutex mu_;
  bool shut_down_ ABSL_GUARDED_BY(mu_) = false;
  bool arena_frozen_ ABSL_GUARDED_BY(mu_) = false;  // Listen/Connect happened
  std::unique_ptr<verbs::Listener> listener_ ABSL_GUARDED_BY(mu_);
  std::vector<std::weak_ptr<verbs::VerbsChannel>> channels_ ABSL_GUARDED_BY(mu_);
};

}  // namespace rplasma::transport

#endif  // RPLASMA_MANAGER_TRANSPORT_VERBS_VERBS_TRANSPORT_H_
