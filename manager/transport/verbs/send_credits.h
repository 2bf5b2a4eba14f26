// SendCredits: an endpoint's flow control, both directions, and its send buffers.
//
// Sending: a message fragment goes out only with a credit (one receive buffer the peer posted for
// us) and a free send buffer of our own; credit-only messages need a send buffer but no credit (the
// peer keeps receive buffers for them). The peer returns credits in the header of every message it
// sends; returning more than it granted at connect is a protocol error.
// Receiving: every fragment we consume is a credit owed to the peer, returned in the header of our
// next message, or in a credit-only message once enough are owed (MessageRing::credit_threshold).
//
// Not thread-safe: the endpoint calls it under its mutex. Device-free.
#ifndef RPLASMA_MANAGER_TRANSPORT_VERBS_SEND_CREDITS_H_
#define RPLASMA_MANAGER_TRANSPORT_VERBS_SEND_CREDITS_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/status.h"

namespace rplasma::transport::verbs {

class SendCredits {
 public:
  // Send buffers 0..slots-1 are free; no credit until Start.
  explicit SendCredits(uint32_t slots = 0);

  // The peer's grant at connect: the most credits it will ever have outstanding with us.
  void Start(uint32_t granted);

  // A credit and a send buffer are both available.
  bool CanSend() const { return credits_ > 0 && !free_slots_.empty(); }
  // REQUIRES: CanSend(). Spends a credit and takes a send buffer (its slot number).
  uint32_t TakeForMessage();
  // A send buffer for a credit-only message; nullopt when none is free.
  std::optional<uint32_t> TakeForCreditMessage();
  // A send buffer back: its SEND completed, or it was never posted.
  void ReturnSlot(uint32_t slot) { free_slots_.push_back(slot); }

  // Credits the peer returned. kProtocolError, changing nothing, if we would then hold more than
  // it granted.
  absl::Status Returned(uint32_t credits);

  // One received fragment consumed: a credit owed to the peer.
  void Owe() { ++owed_; }
  uint32_t owed() const { return owed_; }
  // The owed credits, for the header of the next message; none are owed after.
  uint32_t TakeOwed();

  uint32_t credits() const { return credits_; }

 private:
  uint32_t credits_ = 0;
  uint32_t granted_ = 0;
  uint32_t owed_ = 0;
  std::vector<uint32_t> free_slots_;  // taken from the back
};

}  // namespace rplasma::transport::verbs

#endif  // RPLASMA_MANAGER_TRANSPORT_VERBS_SEND_CREDITS_H_
