// ReadAndHash: reads a remote region into a local buffer chunk by chunk and checksums it while it
// lands, so verifying a fetched object overlaps its transfer instead of following it.
//
// With more than one chunk, the calling thread issues the Reads back to back (as a plain loop
// would) and a BackgroundHasher (client/background_hasher.h) hashes each chunk on its own thread
// once it has landed. The checksum is ObjectChecksum over the whole region (client/checksum.h).
// `before_chunk` runs before each Read; an error from it stops the reads (the Pin path's lease
// check). Any error stops both sides; the hash is then meaningless.
//
// Thread-safety: a free function; every thread it starts has finished when it returns.
#ifndef RPLASMA_MANAGER_PEER_READ_AND_HASH_H_
#define RPLASMA_MANAGER_PEER_READ_AND_HASH_H_

#include <cstdint>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

#include "manager/transport/transport.h"
#include "protocol/base/clock.h"

namespace rplasma::peer {

struct ReadAndHashResult {
  uint64_t checksum = 0;
  absl::Time reads_done;     // when the last Read returned
  absl::Duration hash_tail;  // hashing still left after the last Read (not overlapped)
};

absl::StatusOr<ReadAndHashResult> ReadAndHash(transport::Channel& channel, const transport::RemoteRegion& region,
                                              uint8_t* dst, uint64_t chunk, absl::Time deadline,
                                              absl::FunctionRef<absl::Status()> before_chunk, const Clock& clock);

}  // namespace rplasma::peer

#endif  // RPLASMA_MANAGER_PEER_READ_AND_HASH_H_
