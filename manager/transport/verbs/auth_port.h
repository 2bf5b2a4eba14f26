// AuthPort: the verbs listener's TCP side channel, where peers authenticate before any QP exists.
//
//   client                                   AuthPort (same host:port number as the rdma_cm listener)
//     | -- TCP connect ------------------------> |
//     | <== manager/auth mutual HMAC handshake ==> |   (wrong secret: refused, nothing issued)
//     | <-- u32 "RPVT" | ticket[32] ------------- |   one-time ticket from the TicketBook
//     | -- close -------------------------------> |
//   then rdma_connect(private data carries the ticket); the listener redeems it on CONNECT_REQUEST.
//
// RoCE and InfiniBand keep rdma_cm ports (RDMA_PS_TCP) apart from the kernel's TCP ports, so both
// listeners can share the number. (iWARP would not allow it; no target device is iWARP.)
//
// One thread accepts; a HandshakePool (manager/auth/) runs every handshake on one more thread, with
// the limits' deadline and per-source and overall caps, so a silent or slow client never delays
// another and a flood cannot lock real peers out. The ticket goes out from the pool thread (36
// bytes into an empty socket buffer: it does not block).
// Thread-safe: Create/destroy from one thread; RequestTicket is reentrant.
#ifndef RPLASMA_MANAGER_TRANSPORT_VERBS_AUTH_PORT_H_
#define RPLASMA_MANAGER_TRANSPORT_VERBS_AUTH_PORT_H_

#include <sys/socket.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

#include "manager/auth/handshake_pool.h"
#include "manager/transport/verbs/ticket_book.h"
#include "manager/transport/verbs/wire_format.h"
#include "protocol/base/counter_set.h"
#include "protocol/base/unique_fd.h"

namespace rplasma::transport::verbs {

// Counters the auth port reports to its transport.
struct AuthPortCounters : CounterSet {
  Counter failures{this, "failures"};
  Counter tickets_issued{this, "tickets_issued"};
  Counter ticket_refusals{this, "ticket_refusals"};  // CONNECT_REQUESTs rejected by the listener
};

class AuthPort {
 public:
  // Binds a TCP listener on `addr` (port must be set). EADDRINUSE comes back as kUnavailable.
  static absl::StatusOr<std::unique_ptr<AuthPort>> Create(const sockaddr_storage& addr, std::string secret,
                                                          TicketBook* tickets, AuthPortCounters* counters,
                                                          const auth::HandshakeLimits& limits);
  ~AuthPort();
  AuthPort(const AuthPort&) = delete;
  AuthPort& operator=(const AuthPort&) = delete;

 private:
  AuthPort(UniqueFd listen_fd, UniqueFd wake_fd, TicketBook* tickets, AuthPortCounters* counters);
  void Run();
  // The pool's verdicts (on its thread).
  void SendTicket(UniqueFd fd, const std::string& peer);
  void CountFailure(const std::string& peer, const absl::Status& why);

  UniqueFd listen_fd_;
  UniqueFd wake_fd_;  // eventfd: written once to stop the thread
  TicketBook* const tickets_;
  AuthPortCounters* const counters_;
  std::unique_ptr<auth::HandshakePool> pool_;  // set by Create before the accept thread starts
  std::thread thread_;
};

// Runs the client side against the AuthPort at `addr`: kPermissionDenied if either side's proof
// fails, kUnavailable if nothing listens, kDeadlineExceeded past `deadline`.
absl::StatusOr<Ticket> RequestTicket(const sockaddr_storage& addr, absl::string_view secret, absl::Time deadline);

}  // namespace rplasma::transport::verbs

#endif  // RPLASMA_MANAGER_TRANSPORT_VERBS_AUTH_PORT_H_
