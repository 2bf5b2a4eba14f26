#include "manager/core/read_and_hash.h"

#include <algorithm>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "client/checksum.h"
#include "protocol/mutex_lock.h"
#include "protocol/status.h"

namespace rplasma::core {
namespace {

// What the reading thread tells the hashing one.
struct Progress {
  absl::Mutex mu;
  uint64_t landed ABSL_GUARDED_BY(mu) = 0;  // bytes [0, landed) are in place
  bool finished ABSL_GUARDED_BY(mu) = false;
  absl::Status status ABSL_GUARDED_BY(mu);
  absl::Time reads_done ABSL_GUARDED_BY(mu);  // when the last Read returned
  absl::CondVar changed;  // signalled after each update; only the hashing thread waits on it
};

}  // namespace

absl::StatusOr<ReadAndHashResult> ReadAndHash(transport::Channel& channel, const transport::RemoteRegion& region,
                                              uint8_t* dst, uint64_t chunk, absl::Time deadline,
                                              absl::FunctionRef<absl::Status()> before_chunk) {
  if (chunk == 0) return MakeError(ErrorCode::kInvalidArgument, "ReadAndHash: chunk must be positive");
  const uint64_t total = region.length;
  auto read_chunk = [&](uint64_t off) -> absl::Status {
    RETURN_IF_ERROR(before_chunk());
    const uint64_t n = std::min(chunk, total - off);
    return channel.Read(transport::RemoteRegion{region.addr + off, n, region.rkey}, dst + off, deadline);
  };
  ChecksumBuilder hash;
  ReadAndHashResult result;
  // Once every byte is hashed: the digest, and how long hashing ran past the last Read.
  auto finish = [&] {
    result.checksum = hash.Finish();
    result.hash_tail = std::max(absl::ZeroDuration(), absl::Now() - result.reads_done);
    return result;
  };

  if (total <= chunk) {  // one Read: nothing to overlap
    if (total > 0) RETURN_IF_ERROR(read_chunk(0));
    result.reads_done = absl::Now();
    hash.Update({dst, total});
    return finish();
  }

  Progress progress;
  std::thread reader([&] {
    absl::Status status = absl::OkStatus();
    for (uint64_t off = 0; off < total && status.ok(); off += chunk) {
      status = read_chunk(off);
      if (status.ok()) {
        MutexLock lock(&progress.mu);
        progress.landed = std::min(total, off + chunk);
        progress.changed.Signal();
      }
    }
    const absl::Time done = absl::Now();
    MutexLock lock(&progress.mu);
    progress.finished = true;
    progress.status = status;
    progress.reads_done = done;
    progress.changed.Signal();
  });

  uint64_t hashed = 0;
  absl::Status status = absl::OkStatus();
  while (true) {
    uint64_t landed;
    bool finished;
    {
      MutexLock lock(&progress.mu);
      // A CondVar, not Await: an Await condition may be evaluated by the reading thread, and
      // `hashed` belongs to this one.
      while (!progress.finished && progress.landed <= hashed) lock.Wait(&progress.changed);
      landed = progress.landed;
      finished = progress.finished;
      if (finished) {
        status = progress.status;
        result.reads_done = progress.reads_done;
      }
    }
    if (finished && !status.ok()) break;
    if (landed > hashed) {
      hash.Update({dst + hashed, landed - hashed});
      hashed = landed;
    }
    if (finished) break;
  }
  reader.join();
  RETURN_IF_ERROR(status);
  return finish();  // the loop hashed up to `landed`, which is `total` once every Read succeeded
}

}  // namespace rplasma::core
