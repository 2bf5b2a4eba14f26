#include "manager/transport/verbs/reassembler.h"

#include <cstring>
#include <utility>

#include "protocol/base/status.h"

namespace rplasma::transport::verbs {

absl::StatusOr<std::optional<std::string>> Reassembler::Add(const MessageHeader& h, absl::Span<const uint8_t> payload) {
  if (h.offset > h.total_length || payload.size() > h.total_length - h.offset) {
    return ProtocolError("verbs fragment lies outside its message");  // DecodeMessageHeader's check, kept local
  }
  auto [it, inserted] = partial_.try_emplace(h.request_id);
  Partial& message = it->second;
  if (inserted) {
    if (partial_.size() > max_partial_) {
      partial_.erase(it);
      return ProtocolError("verbs peer interleaves too many messages");
    }
    message.data.resize(h.total_length);
  } else if (message.data.size() != h.total_length) {
    return ProtocolError("verbs fragments disagree on the message length");
  }
  if (!payload.empty()) std::memcpy(message.data.data() + h.offset, payload.data(), payload.size());
  message.received += payload.size();
  if (message.received > h.total_length) return ProtocolError("verbs message received more bytes than its length");
  if (message.received < h.total_length) return std::nullopt;
  std::string whole = std::move(message.data);
  partial_.erase(it);
  return whole;
}

}  // namespace rplasma::transport::verbs
