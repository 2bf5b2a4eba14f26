// Seams of the verbs transport's connecting side, which tests build and give to
// VerbsTransport::Create (VerbsConnectSeams):
//
//   TicketSource     where a connection gets the one-time ticket it presents in rdma_connect
//                    private data. The transport's own source authenticates on the peer's auth
//                    port (MakeAuthPortTicketSource); tests present none, a forged or a replayed one.
//   ConnectObserver  told of each endpoint the transport connects, with its RDMA READ window and
//                    a QpFaultInjector (fault injection: tests force that queue pair into the
//                    error state with requests in flight).
//
// Like verbs_transport.h, this header includes no verbs headers.
// Thread-safety: implementations must be thread-safe (channels rebuild endpoints on any thread).
#ifndef RPLASMA_MANAGER_TRANSPORT_VERBS_CONNECT_SEAMS_H_
#define RPLASMA_MANAGER_TRANSPORT_VERBS_CONNECT_SEAMS_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace rplasma::transport::verbs {

class TicketSource {
 public:
  virtual ~TicketSource() = default;
  // The ticket to present to the listener at `address` ("host:port"): raw bytes, of which the
  // first kTicketBytes are used (a shorter one is zero-padded). Asked once per endpoint, also when
  // a channel rebuilds its endpoint.
  virtual absl::StatusOr<std::string> Fetch(const std::string& address, absl::Time deadline) = 0;
};

// The transport's default: the HMAC handshake with `secret` on the auth port of `address` (the TCP
// port with the listener's number), bounded by min(deadline, now + connect_timeout).
std::shared_ptr<TicketSource> MakeAuthPortTicketSource(std::string secret, absl::Duration connect_timeout);

// Fault injection: moves one endpoint's queue pair to IBV_QPS_ERR (ibv_modify_qp) behind the
// endpoint's back, as a failing device or link would; the endpoint learns of it only from its
// flushed work requests, exactly as from a real fault. Holds the endpoint weakly. Returns
// kUnavailable once the endpoint has failed, closed or gone. Callable from any thread.
using QpFaultInjector = std::function<absl::Status()>;

class ConnectObserver {
 public:
  virtual ~ConnectObserver() = default;
  // An endpoint to `address` is up; `read_window` RDMA READs may be in flight on it at once.
  virtual void OnEndpointConnected(const std::string& address, uint32_t read_window) = 0;
  // Right after OnEndpointConnected: the same endpoint's fault injector. Default: dropped.
  virtual void OnQpFaultInjector(const std::string& address, QpFaultInjector force_qp_error) {}
};

struct VerbsConnectSeams {
  std::shared_ptr<TicketSource> tickets;      // null: MakeAuthPortTicketSource(options)
  std::shared_ptr<ConnectObserver> observer;  // null: none
};

}  // namespace rplasma::transport::verbs

#endif  // RPLASMA_MANAGER_TRANSPORT_VERBS_CONNECT_SEAMS_H_
