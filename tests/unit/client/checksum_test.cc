#include "client/checksum.h"

#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <xxhash.h>

#include "tests/support/test_bytes.h"

namespace rplasma {
namespace {

absl::Span<const uint8_t> Bytes(const std::string& s) {
  return absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(s.data()), s.size());
}

TEST(ObjectChecksumTest, IsXxh3OfDataFollowedByMetadata) {
  const std::string data = "the quick brown fox";
  const std::string metadata = "jumps over";
  const std::string joined = data + metadata;
  EXPECT_EQ(ObjectChecksum(Bytes(data), Bytes(metadata)), XXH3_64bits(joined.data(), joined.size()));
}

TEST(ObjectChecksumTest, WithoutMetadataIsXxh3OfData) {
  const std::string data(100000, 'x');
  EXPECT_EQ(ObjectChecksum(Bytes(data), {}), XXH3_64bits(data.data(), data.size()));
}

TEST(ObjectChecksumTest, EmptyObjectHasTheEmptyHash) { EXPECT_EQ(ObjectChecksum({}, {}), XXH3_64bits(nullptr, 0)); }

TEST(ObjectChecksumTest, MovingTheSplitBetweenDataAndMetadataKeepsTheChecksum) {
  // The checksum covers the object's bytes as laid out in the arena (data then metadata).
  const std::string all = "0123456789abcdefghijklmnopqrstuvwxyz";
  const uint64_t whole = ObjectChecksum(Bytes(all), {});
  for (size_t split = 0; split <= all.size(); ++split) {
    EXPECT_EQ(ObjectChecksum(Bytes(all.substr(0, split)), Bytes(all.substr(split))), whole) << split;
  }
}

TEST(ObjectChecksumTest, OneFlippedBitChangesTheChecksum) {
  std::string data(4096, '\0');
  const uint64_t before = ObjectChecksum(Bytes(data), {});
  data[1234] ^= 0x10;
  EXPECT_NE(ObjectChecksum(Bytes(data), {}), before);
}

TEST(ChecksumBuilderTest, AnySplitInOrderGivesObjectChecksum) {
  const std::string data = testing::TestBytes(0, 300000);
  const std::string metadata = "meta";
  const uint64_t expected = ObjectChecksum(Bytes(data), Bytes(metadata));
  const std::string joined = data + metadata;
  for (size_t piece : {size_t{1} << 10, size_t{65536}, size_t{100003}, joined.size()}) {
    ChecksumBuilder builder;
    for (size_t off = 0; off < joined.size(); off += piece) {
      builder.Update(Bytes(joined.substr(off, std::min(piece, joined.size() - off))));
    }
    EXPECT_EQ(builder.Finish(), expected) << "pieces of " << piece;
  }
  ChecksumBuilder empty;
  EXPECT_EQ(empty.Finish(), ObjectChecksum({}, {}));
}

}  // namespace
}  // namespace rplasma
