// TestBytes: the one generator of test bytes — `size` deterministic pseudo-random bytes for
// `seed`, the same in every process and every run, so a test can write them in one place (or in a
// process it started) and recompute them to check every byte elsewhere. Different seeds give
// different bytes; the bytes of one seed extend each other (TestBytes(s, n) is a prefix of
// TestBytes(s, n + k)).
//
//   const std::string data = TestBytes(7, 1 << 20);
//   const std::vector<uint8_t> bytes = TestBytes<std::vector<uint8_t>>(7, 1 << 20);  // the same bytes
//
// They are slices of one pseudo-random pool (xorshift64, grown on demand) at an offset that depends
// on the seed: cheap for objects of hundreds of MiB. Thread-safe. TestBytesView reads them in place
// (no copy: under TSan each fresh buffer of hundreds of MiB cost its shadow's page faults too).
#ifndef RPLASMA_TESTS_SUPPORT_TEST_BYTES_H_
#define RPLASMA_TESTS_SUPPORT_TEST_BYTES_H_

#include <cstdint>
#include <string>

#include "absl/types/span.h"

namespace rplasma::testing {

// TestBytes(seed, size) in the pool itself, valid (and unchanged) for the life of the process.
absl::Span<const uint8_t> TestBytesView(uint64_t seed, uint64_t size);

// Writes TestBytes(seed, out.size()) into `out`.
void FillTestBytes(uint64_t seed, absl::Span<uint8_t> out);

// `Bytes`: std::string or std::vector<uint8_t> (any contiguous container of bytes).
template <typename Bytes = std::string>
Bytes TestBytes(uint64_t seed, uint64_t size) {
  Bytes out(size, typename Bytes::value_type{});
  FillTestBytes(seed, absl::MakeSpan(reinterpret_cast<uint8_t*>(out.data()), out.size()));
  return out;
}

}  // namespace rplasma::testing

#endif  // RPLASMA_TESTS_SUPPORT_TEST_BYTES_H_
