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

}  // namespace rplasma
