// PeerProtocol: the two ways the peer protocol moves one object from its owner (the same on every
// transport; the threshold policy in manager/fetch/ picks one per object):
//
//   kGet  two-sided: Get(ids) -> the owner's reply carries the bytes inline; one copy on arrival
//   kPin  one-sided: Pin(ids) -> a lease and the region; the reader Reads straight into the new
//         object, then Unpin
#ifndef RPLASMA_MANAGER_PEER_PEER_PROTOCOL_H_
#define RPLASMA_MANAGER_PEER_PEER_PROTOCOL_H_

#include "absl/strings/string_view.h"

namespace rplasma::peer {

enum class PeerProtocol { kGet, kPin };

// "get" / "pin", as in stats, CSV columns and docs.
inline absl::string_view PeerProtocolName(PeerProtocol protocol) {
  return protocol == PeerProtocol::kGet ? "get" : "pin";
}

}  // namespace rplasma::peer

#endif  // RPLASMA_MANAGER_PEER_PEER_PROTOCOL_H_
