// TransferObject: moves one object from a peer's manager into the local store, by one protocol,
// and makes it visible only if it is exactly the owner's object.
//
//   Get: Call(Get) -> the owner's description + bytes -> Create locally -> one memcpy
//   Pin: Call(Pin) -> lease + RemoteRegion -> Create locally -> Read (in chunks) straight into the
//        new object, checksumming each chunk while the next one is read (read_and_hash.h) ->
//        Unpin (always, even after a failure; the lease TTL covers a lost Unpin)
//   then: checksum (client/checksum.h) over the local bytes == the owner's checksum -> SealAndRelease.
//
// Any failure after Create aborts the local object: a partial object is never visible. The
// owner's reply is the truth for sizes, generation and checksum; the directory hint is not used
// here. A Pin transfer whose reads complete after the lease's TTL (counted from before the Pin
// was sent, so never later than the owner's own expiry) is discarded: the owner may have reused
// the bytes. Errors: the peer's error (ObjectNotFound, ...), transport errors (Unavailable,
// DeadlineExceeded), kStaleObject for a checksum mismatch or a lapsed lease, the local store's errors.
//
// Thread-safety: a free function; safe to run concurrently for different ids.
#ifndef RPLASMA_MANAGER_PEER_OBJECT_TRANSFER_H_
#define RPLASMA_MANAGER_PEER_OBJECT_TRANSFER_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

#include "manager/peer/local_store.h"
#include "manager/peer/peer_messages.h"
#include "manager/peer/peer_protocol.h"
#include "manager/transport/transport.h"
#include "protocol/base/clock.h"
#include "protocol/base/object_id.h"
#include "protocol/object_description.h"

namespace rplasma::peer {

struct TransferResult {
  uint64_t bytes = 0;       // data + metadata
  ObjectDescription owner;  // the owner's description of what was copied
  absl::Duration transfer;  // request to last byte in place
  absl::Duration verify;    // checksum
  absl::Duration seal;
};

// True for the kStaleObject of a Pin transfer discarded because its lease ran out (as opposed to
// a checksum mismatch).
bool IsLeaseLapse(const absl::Status& status);
// That kStaleObject: the reads of `id` under `lease_id` completed after its TTL; discarded.
absl::Status LeaseLapseError(const ObjectID& id, uint64_t lease_id, uint64_t lease_ttl_ms);
// One Call of `request` and its reply, decoded (the reply is a view into `wire`).
absl::StatusOr<PeerReplyView> CallPeer(transport::Channel& channel, const PeerRequest& request, absl::Time deadline,
                                       std::string& wire);
// OK if `checksum` (of the bytes received for `id`) is the owner's; else kStaleObject.
absl::Status VerifyChecksum(const ObjectID& id, uint64_t checksum, const ObjectDescription& owner);

absl::StatusOr<TransferResult> TransferObject(transport::Channel& channel, peer::LocalStore& store, const ObjectID& id,
                                              PeerProtocol protocol, absl::Time deadline, uint64_t read_chunk_bytes,
                                              Clock& clock);

}  // namespace rplasma::peer

#endif  // RPLASMA_MANAGER_PEER_OBJECT_TRANSFER_H_
