// TicketBook: one-time connection tickets of the verbs listener.
//
// A peer that passed the HMAC challenge-response on the listener's TCP auth port receives a fresh
// random ticket. It must present it in its rdma_connect private data; the listener redeems it on
// RDMA_CM_EVENT_CONNECT_REQUEST before any QP exists and rejects the request otherwise. A ticket
// is valid once, until it expires. At most `capacity` tickets are outstanding: issuing more drops
// the oldest (a peer flooding the auth port can only invalidate tickets, never grow memory).
//
// Thread-safe.
#ifndef RPLASMA_MANAGER_TRANSPORT_VERBS_TICKET_BOOK_H_
#define RPLASMA_MANAGER_TRANSPORT_VERBS_TICKET_BOOK_H_

#include <deque>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

#include "manager/transport/verbs/wire_format.h"

namespace rplasma::transport::verbs {

class TicketBook {
 public:
  TicketBook(absl::Duration lifetime, size_t capacity) : lifetime_(lifetime), capacity_(capacity) {}

  // A new random ticket, valid until now + lifetime.
  Ticket Issue(absl::Time now);
  // True (and the ticket is consumed) iff it was issued, is unused and has not expired.
  bool Redeem(const Ticket& ticket, absl::Time now);
  size_t outstanding() const;

 private:
  static std::string Key(const Ticket& t) { return std::string(reinterpret_cast<const char*>(t.data()), t.size()); }
  void PruneLocked(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const absl::Duration lifetime_;
  const size_t capacity_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, absl::Time> expiry_ ABSL_GUARDED_BY(mu_);
  std::deque<std::string> order_ ABSL_GUARDED_BY(mu_);  // issue order, may hold redeemed keys
};

}  // namespace rplasma::transport::verbs

#endif  // RPLASMA_MANAGER_TRANSPORT_VERBS_TICKET_BOOK_H_
