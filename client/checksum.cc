#include "client/checksum.h"

// The streaming state lives on the stack: no allocation per checksum.
#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

namespace rplasma {

uint64_t ObjectChecksum(absl::Span<const uint8_t> data, absl::Span<const uint8_t> metadata) {
  // XXH3 streaming over (data, metadata) equals the one-shot hash of their concatenation, so the
  // common no-metadata case can take the faster one-shot path with the same result.
  if (metadata.empty()) return XXH3_64bits(data.data(), data.size());
  XXH3_state_t state;
  XXH3_INITSTATE(&state);
  XXH3_64bits_reset(&state);
  XXH3_64bits_update(&state, data.data(), data.size());
  XXH3_64bits_update(&state, metadata.data(), metadata.size());
  return XXH3_64bits_digest(&state);
}

struct ChecksumBuilder::State {
  XXH3_state_t xxh;  // 64-byte aligned; `new State` honours that (C++17 aligned new)
};

ChecksumBuilder::ChecksumBuilder() : state_(new State) {
  XXH3_INITSTATE(&state_->xxh);
  XXH3_64bits_reset(&state_->xxh);
}

ChecksumBuilder::~ChecksumBuilder() = default;

void ChecksumBuilder::Update(absl::Span<const uint8_t> bytes) {
  XXH3_64bits_update(&state_->xxh, bytes.data(), bytes.size());
}

uint64_t ChecksumBuilder::Finish() const { return XXH3_64bits_digest(&state_->xxh); }

}  // namespace rplasma
