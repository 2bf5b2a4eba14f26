#include "manager/peer/read_and_hash.h"

#include <algorithm>

#include "client/background_hasher.h"
#include "client/checksum.h"
#include "protocol/base/status.h"

namespace rplasma::peer {

absl::StatusOr<ReadAndHashResult> ReadAndHash(transport::Channel& channel, const transport::RemoteRegion& region,
                                              uint8_t* dst, uint64_t chunk, absl::Time deadline,
                                              absl::FunctionRef<absl::Status()> before_chunk, const Clock& clock) {
  if (chunk == 0) return MakeError(ErrorCode::kInvalidArgument, "ReadAndHash: chunk must be positive");
  const uint64_t total = region.length;
  auto read_chunk = [&](uint64_t off) -> absl::Status {
    RETURN_IF_ERROR(before_chunk());
    const uint64_t n = std::min(chunk, total - off);
    return channel.Read(transport::RemoteRegion{region.addr + off, n, region.rkey}, dst + off, deadline);
  };
  ReadAndHashResult result;

  if (total <= chunk) {  // one Read: nothing to overlap, no thread to start
    if (total > 0) RETURN_IF_ERROR(read_chunk(0));
    result.reads_done = clock.Now();
    result.checksum = ObjectChecksum({dst, total}, {});
    result.hash_tail = clock.Now() - result.reads_done;
    return result;
  }

  // On an error the hasher is abandoned; its destructor stops and joins its thread.
  BackgroundHasher hasher(dst, total);
  for (uint64_t off = 0; off < total; off += chunk) {
    RETURN_IF_ERROR(read_chunk(off));
    hasher.Advance(std::min(total, off + chunk));
  }
  result.reads_done = clock.Now();
  result.checksum = hasher.Finish();
  result.hash_tail = clock.Now() - result.reads_done;
  return result;
}

}  // namespace rplasma::peer
