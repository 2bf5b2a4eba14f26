#include "client/background_hasher.h"

#include <cstring>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "client/checksum.h"
#include "tests/support/test_bytes.h"

namespace rplasma {
namespace {

TEST(BackgroundHasherTest, HashOfABufferFilledStepByStepIsItsObjectChecksum) {
  const std::vector<uint8_t> source = testing::TestBytes<std::vector<uint8_t>>(0, (3 << 20) + 17);
  for (size_t step : {size_t{1} << 20, size_t{4096}, size_t{333333}, source.size()}) {
    std::vector<uint8_t> dst(source.size());
    BackgroundHasher hasher(dst.data(), dst.size());
    for (size_t done = 0; done < dst.size(); done += step) {
      const size_t n = std::min(step, dst.size() - done);
      std::memcpy(dst.data() + done, source.data() + done, n);
      hasher.Advance(done + n);
      if (done % (4 * step) == 0) std::this_thread::yield();  // let the hasher catch up sometimes
    }
    EXPECT_EQ(hasher.Finish(), ObjectChecksum(source, {})) << step;
  }
}

TEST(BackgroundHasherTest, DataThenMetadataContiguousGivesTheObjectChecksum) {
  const std::vector<uint8_t> bytes = testing::TestBytes<std::vector<uint8_t>>(0, 100000);
  BackgroundHasher hasher(bytes.data(), bytes.size());
  hasher.Advance(bytes.size());
  const absl::Span<const uint8_t> all(bytes);
  EXPECT_EQ(hasher.Finish(), ObjectChecksum(all.first(99000), all.subspan(99000)));
}

TEST(BackgroundHasherTest, AnEmptyBufferHasTheEmptyChecksum) {
  BackgroundHasher hasher(nullptr, 0);
  hasher.Advance(0);
  EXPECT_EQ(hasher.Finish(), ObjectChecksum({}, {}));
}

TEST(BackgroundHasherTest, AnAbandonedHasherStopsItsThreadWhenDestroyed) {
  const std::vector<uint8_t> bytes = testing::TestBytes<std::vector<uint8_t>>(0, 1 << 20);
  for (int i = 0; i < 50; ++i) {
    BackgroundHasher hasher(bytes.data(), bytes.size());
    if (i % 2 == 0) hasher.Advance(bytes.size() / 2);  // half filled, never finished
  }  // each destructor must return (joins its thread) — a hang fails the test by timeout
  SUCCEED();
}

}  // namespace
}  // namespace rplasma
