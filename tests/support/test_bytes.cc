#include "tests/support/test_bytes.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstring>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

#include "protocol/base/logging.h"
#include "protocol/base/mutex_lock.h"

namespace rplasma::testing {
namespace {

constexpr uint64_t kOffsets = 1u << 20;  // a seed's bytes start at (seed * 8191) % kOffsets
// Address space only: pages are touched as the pool grows. The largest test object is 256 MiB.
constexpr uint64_t kPoolReserve = 8ull << 30;

// One mapping that never moves, so views of it stay valid; filled with xorshift64 words on demand.
class Pool {
 public:
  absl::Span<const uint8_t> View(uint64_t seed, uint64_t size) {
    const uint64_t offset = (seed * 8191) % kOffsets;
    MutexLock lock(&mu_);
    GrowLocked(offset + size);
    return absl::MakeConstSpan(base_ + offset, size);
  }

 private:
  void GrowLocked(uint64_t want) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (want <= filled_) return;
    want = std::max(want, kOffsets);
    want = (want + 7) / 8 * 8;  // whole words: every process sees the same bytes at every length
    if (base_ == nullptr) {
      void* p =
          ::mmap(nullptr, kPoolReserve, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
      CHECK(p != MAP_FAILED) << "TestBytes: cannot reserve the pool";
      base_ = static_cast<uint8_t*>(p);
    }
    CHECK(want <= kPoolReserve) << "TestBytes: " << want << " bytes is past the pool's " << kPoolReserve;
    for (; filled_ < want; filled_ += 8) {
      state_ ^= state_ << 13;
      state_ ^= state_ >> 7;
      state_ ^= state_ << 17;
      std::memcpy(base_ + filled_, &state_, 8);
    }
  }

  absl::Mutex mu_;
  uint8_t* base_ ABSL_GUARDED_BY(mu_) = nullptr;
  uint64_t filled_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t state_ ABSL_GUARDED_BY(mu_) = 0x9e3779b97f4a7c15ull;
};

Pool& ThePool() {
  static Pool* pool = new Pool();
  return *pool;
}

}  // namespace

absl::Span<const uint8_t> TestBytesView(uint64_t seed, uint64_t size) { return ThePool().View(seed, size); }

void FillTestBytes(uint64_t seed, absl::Span<uint8_t> out) {
  const absl::Span<const uint8_t> bytes = TestBytesView(seed, out.size());
  if (!out.empty()) std::memcpy(out.data(), bytes.data(), out.size());
}

}  // namespace rplasma::testing
