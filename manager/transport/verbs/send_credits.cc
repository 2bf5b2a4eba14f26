#include "manager/transport/verbs/send_credits.h"

#include <utility>

#include "protocol/base/status.h"

namespace rplasma::transport::verbs {

SendCredits::SendCredits(uint32_t slots) {
  free_slots_.reserve(slots);
  for (uint32_t i = 0; i < slots; ++i) free_slots_.push_back(slots - 1 - i);  // slot 0 is taken first
}

void SendCredits::Start(uint32_t granted) {
  credits_ = granted;
  granted_ = granted;
}

uint32_t SendCredits::TakeForMessage() {
  const uint32_t slot = free_slots_.back();
  free_slots_.pop_back();
  --credits_;
  return slot;
}

std::optional<uint32_t> SendCredits::TakeForCreditMessage() {
  if (free_slots_.empty()) return std::nullopt;
  const uint32_t slot = free_slots_.back();
  free_slots_.pop_back();
  return slot;
}

absl::Status SendCredits::Returned(uint32_t credits) {
  if (static_cast<uint64_t>(credits_) + credits > granted_) {
    return ProtocolError("verbs peer returned more credits than it granted");
  }
  credits_ += credits;
  return absl::OkStatus();
}

uint32_t SendCredits::TakeOwed() { return std::exchange(owed_, 0); }

}  // namespace rplasma::transport::verbs
