// BackgroundHasher: checksums a buffer on its own thread while another thread is still filling it
// front to back (a copy in Client::Put), so the hash overlaps the filling instead of following it
// as a second pass. The result equals ObjectChecksum over the buffer (client/checksum.h); with
// data and metadata contiguous (as in the arena) that is the object's checksum.
//
// The filler reports progress with Advance(n): bytes [0, n) are final. Advance in steps of about
// a MiB: each call may wake the hashing thread. Finish() waits for the hash of [0, size) and
// requires Advance(size) first. Destroying an unfinished hasher stops and joins its thread.
//
// Thread-safety: Advance and Finish are called by one (filling) thread; the hashing thread only
// reads bytes that Advance has published, under the mutex that orders them.
#ifndef RPLASMA_CLIENT_BACKGROUND_HASHER_H_
#define RPLASMA_CLIENT_BACKGROUND_HASHER_H_

#include <cstdint>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace rplasma {

class BackgroundHasher {
 public:
  BackgroundHasher(const uint8_t* base, uint64_t size);
  ~BackgroundHasher();
  BackgroundHasher(const BackgroundHasher&) = delete;
  BackgroundHasher& operator=(const BackgroundHasher&) = delete;

  // Bytes [0, landed) are in place. REQUIRES: non-decreasing, landed <= size.
  void Advance(uint64_t landed);
  // The checksum of [0, size). REQUIRES: Advance(size) was called; call once.
  uint64_t Finish();

 private:
  void Run();

  const uint8_t* const base_;
  const uint64_t size_;

  absl::Mutex mu_;
  absl::CondVar advanced_;  // the hashing thread waits here for more bytes
  uint64_t landed_ ABSL_GUARDED_BY(mu_) = 0;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;  // abandoned: hash no more
  bool done_ ABSL_GUARDED_BY(mu_) = false;  // [0, size) hashed, checksum_ set
  uint64_t checksum_ ABSL_GUARDED_BY(mu_) = 0;
  absl::CondVar finished_;  // the filler waits here in Finish

  std::thread thread_;  // last: starts after every field above is initialized
};

}  // namespace rplasma

#endif  // RPLASMA_CLIENT_BACKGROUND_HASHER_H_
