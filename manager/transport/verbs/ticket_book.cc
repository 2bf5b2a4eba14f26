#include "manager/transport/verbs/ticket_book.h"

#include <cstring>

#include "manager/auth/peer_auth.h"
#include "protocol/base/mutex_lock.h"

namespace rplasma::transport::verbs {

Ticket TicketBook::Issue(absl::Time now) {
  Ticket t;
  auth::Nonce a = auth::RandomNonce();
  auth::Nonce b = auth::RandomNonce();
  static_assert(2 * auth::kNonceBytes == kTicketBytes);
  std::memcpy(t.data(), a.data(), a.size());
  std::memcpy(t.data() + a.size(), b.data(), b.size());
  MutexLock lock(&mu_);
  PruneLocked(now);
  while (expiry_.size() >= capacity_ && !order_.empty()) {
    expiry_.erase(order_.front());
    order_.pop_front();
  }
  std::string key = Key(t);
  expiry_[key] = now + lifetime_;
  order_.push_back(std::move(key));
  return t;
}

bool TicketBook::Redeem(const Ticket& ticket, absl::Time now) {
  MutexLock lock(&mu_);
  PruneLocked(now);
  auto it = expiry_.find(Key(ticket));
  if (it == expiry_.end()) return false;
  bool valid = it->second > now;
  expiry_.erase(it);
  return valid;
}

size_t TicketBook::outstanding() const {
  MutexLock lock(&mu_);
  return expiry_.size();
}

void TicketBook::PruneLocked(absl::Time now) {
  // Tickets expire in issue order (constant lifetime), so expired ones sit at the front.
  while (!order_.empty()) {
    auto it = expiry_.find(order_.front());
    if (it != expiry_.end() && it->second > now) break;
    if (it != expiry_.end()) expiry_.erase(it);
    order_.pop_front();
  }
}

}  // namespace rplasma::transport::verbs
