// ObjectChecksum: the integrity checksum of an object, XXH3-64 over its data then its metadata
// (as if they were one contiguous buffer). The client computes it at Seal and the store records
// it; the manager recomputes it over fetched bytes before sealing them locally.
//
// ObjectChecksum is a pure function (thread-safe). ChecksumBuilder computes the same value over
// bytes given in pieces, in order (e.g. chunks of a fetch as they land); one per thread.
#ifndef RPLASMA_CLIENT_CHECKSUM_H_
#define RPLASMA_CLIENT_CHECKSUM_H_

#include <cstdint>
#include <memory>

#include "absl/types/span.h"

namespace rplasma {

uint64_t ObjectChecksum(absl::Span<const uint8_t> data, absl::Span<const uint8_t> metadata);

// ObjectChecksum(data, metadata) == Update(data) ... Update(metadata) in any split, then Finish().
class ChecksumBuilder {
 public:
  ChecksumBuilder();
  ~ChecksumBuilder();
  ChecksumBuilder(const ChecksumBuilder&) = delete;
  ChecksumBuilder& operator=(const ChecksumBuilder&) = delete;

  void Update(absl::Span<const uint8_t> bytes);
  uint64_t Finish() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace rplasma

#endif  // RPLASMA_CLIENT_CHECKSUM_H_
