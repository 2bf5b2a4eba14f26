// ForcedProtocol: the peer protocol a fetch makes the manager use for its transfers, instead of
// the one the manager's --pin-threshold chooses (Client::Fetch, manager.fbs's FetchRequest): for
// callers that compare the protocols on one node (rplasma-bench-mpi), or pin one down.
#ifndef RPLASMA_PROTOCOL_FORCED_PROTOCOL_H_
#define RPLASMA_PROTOCOL_FORCED_PROTOCOL_H_

#include <cstdint>
#include <optional>

#include "absl/strings/string_view.h"

namespace rplasma {

enum class ForcedProtocol : uint8_t {
  kNone = 0,  // the manager's choice
  kGet = 1,   // bytes inline in the reply (the owner still pins what does not fit it)
  kPin = 2,   // Pin + Read + Unpin
};

// "none", "get", "pin".
inline absl::string_view ForcedProtocolName(ForcedProtocol protocol) {
  switch (protocol) {
    case ForcedProtocol::kNone: return "none";
    case ForcedProtocol::kGet: return "get";
    case ForcedProtocol::kPin: return "pin";
  }
  return "unknown";
}

// The protocol of a name ForcedProtocolName gives; nullopt for any other text.
inline std::optional<ForcedProtocol> ForcedProtocolFromName(absl::string_view name) {
  for (ForcedProtocol p : {ForcedProtocol::kNone, ForcedProtocol::kGet, ForcedProtocol::kPin}) {
    if (name == ForcedProtocolName(p)) return p;
  }
  return std::nullopt;
}

}  // namespace rplasma

#endif  // RPLASMA_PROTOCOL_FORCED_PROTOCOL_H_
