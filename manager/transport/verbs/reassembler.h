// Reassembler: whole messages from their fragments.
//
// A message larger than the peer's receive buffer arrives as several fragments, in order, each
// naming its message (request id), the message's total length and its own offset; fragments of
// different messages may interleave. DecodeMessageHeader has already checked each fragment on its
// own (its bytes lie within [offset, total_length], total_length within the limit); this checks
// them against each other.
//
// Not thread-safe: the endpoint calls it under its mutex. Device-free.
#ifndef RPLASMA_MANAGER_TRANSPORT_VERBS_REASSEMBLER_H_
#define RPLASMA_MANAGER_TRANSPORT_VERBS_REASSEMBLER_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"

#include "manager/transport/verbs/wire_format.h"

namespace rplasma::transport::verbs {

class Reassembler {
 public:
  // At most `max_partial` messages may be incomplete at once.
  explicit Reassembler(size_t max_partial) : max_partial_(max_partial) {}

  // Copies `payload` to offset h.offset of message h.request_id. Returns the message once all its
  // bytes arrived (and forgets it), nullopt while some are missing. kProtocolError for one partial
  // message too many, a total length that disagrees with the message's earlier fragments, or more
  // bytes than the total length.
  absl::StatusOr<std::optional<std::string>> Add(const MessageHeader& h, absl::Span<const uint8_t> payload);

  size_t partial() const { return partial_.size(); }

 private:
  struct Partial {
    std::string data;
    uint64_t received = 0;
  };
  const size_t max_partial_;
  absl::flat_hash_map<uint64_t, Partial> partial_;
};

}  // namespace rplasma::transport::verbs

#endif  // RPLASMA_MANAGER_TRANSPORT_VERBS_REASSEMBLER_H_
