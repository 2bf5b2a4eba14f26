// One peer Call, and the checks every transfer makes of what it brought (batch_transfer.h):
//   CallPeer       — one request, its reply decoded (a view into the caller's wire buffer)
//   VerifyChecksum — the received bytes are the owner's object, else kStaleObject
//   LeaseLapseError / IsLeaseLapse — reads of a pinned object that completed after its lease's TTL
//                    (counted from before the request, so never later than the owner's own expiry)
//                    are discarded: the owner may have reused the bytes.
//
// Thread-safety: free functions.
#ifndef RPLASMA_MANAGER_PEER_PEER_CALL_H_
#define RPLASMA_MANAGER_PEER_PEER_CALL_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

#include "manager/peer/peer_messages.h"
#include "manager/transport/transport.h"
#include "protocol/base/object_id.h"
#include "protocol/object_description.h"

namespace rplasma::peer {

// True for the kStaleObject of a pinned object's transfer discarded because its lease ran out (as
// opposed to a checksum mismatch).
bool IsLeaseLapse(const absl::Status& status);
// That kStaleObject: the reads of `id` under `lease_id` completed after its TTL; discarded.
absl::Status LeaseLapseError(const ObjectID& id, uint64_t lease_id, uint64_t lease_ttl_ms);
// One Call of `request` and its reply, decoded (the reply is a view into `wire`).
absl::StatusOr<PeerReplyView> CallPeer(transport::Channel& channel, const PeerRequest& request, absl::Time deadline,
                                       std::string& wire);
// OK if `checksum` (of the bytes received for `id`) is the owner's; else kStaleObject.
absl::Status VerifyChecksum(const ObjectID& id, uint64_t checksum, const ObjectDescription& owner);

}  // namespace rplasma::peer

#endif  // RPLASMA_MANAGER_PEER_PEER_CALL_H_
