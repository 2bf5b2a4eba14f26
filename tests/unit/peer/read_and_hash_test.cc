#include "manager/peer/read_and_hash.h"

#include <atomic>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "client/checksum.h"
#include "tests/support/fake_clock.h"
#include "tests/support/status_matchers.h"
#include "tests/support/test_bytes.h"

namespace rplasma::peer {
namespace {

using ::rplasma::testing::HasErrorCode;

// Reads copy from `source` at region.addr; the Read numbered `fail_at` (from 0) fails.
class CopyChannel : public transport::Channel {
 public:
  explicit CopyChannel(std::vector<uint8_t> source) : source_(std::move(source)) {}
  absl::StatusOr<std::string> Call(absl::string_view, absl::Time) override {
    return MakeError(ErrorCode::kInternal, "no calls here");
  }
  absl::Status Read(const transport::RemoteRegion& region, uint8_t* dst, absl::Time) override {
    if (reads++ == fail_at) return MakeError(ErrorCode::kUnavailable, "copy channel: read failed");
    std::memcpy(dst, source_.data() + region.addr, region.length);
    return absl::OkStatus();
  }
  bool healthy() const override { return true; }
  const std::string& peer_address() const override { return address_; }

  std::atomic<int> reads{0};
  int fail_at = -1;

 private:
  std::vector<uint8_t> source_;
  std::string address_ = "copy";
};

TEST(ReadAndHashTest, EveryChunkSizeGivesTheBytesAndTheirObjectChecksum) {
  testing::FakeClock clock;
  const std::vector<uint8_t> source = testing::TestBytes<std::vector<uint8_t>>(0, 1 << 20);
  const uint64_t offset = 4096, length = (1 << 20) - 4096 - 5;
  const uint64_t expected = ObjectChecksum({source.data() + offset, length}, {});
  for (uint64_t chunk : {uint64_t{1} << 12, uint64_t{65536}, uint64_t{333333}, length, uint64_t{1} << 24}) {
    CopyChannel channel(source);
    std::vector<uint8_t> dst(length);
    int checks = 0;
    absl::StatusOr<ReadAndHashResult> r = ReadAndHash(
        channel, transport::RemoteRegion{offset, length, 0}, dst.data(), chunk, absl::InfiniteFuture(),
        [&] {
          ++checks;
          return absl::OkStatus();
        },
        clock);
    ASSERT_OK(r.status()) << chunk;
    EXPECT_EQ(r->checksum, expected) << chunk;
    EXPECT_EQ(std::memcmp(dst.data(), source.data() + offset, length), 0) << chunk;
    EXPECT_EQ(checks, channel.reads.load()) << "the check runs before every Read";
    EXPECT_EQ(channel.reads.load(), static_cast<int>((length + chunk - 1) / chunk)) << chunk;
    EXPECT_EQ(r->reads_done, clock.Now()) << "times come from the injected clock";
  }
}

TEST(ReadAndHashTest, AFailedReadOrCheckStopsTheReadsAndIsReturned) {
  testing::FakeClock clock;
  const std::vector<uint8_t> source = testing::TestBytes<std::vector<uint8_t>>(0, 1 << 20);
  std::vector<uint8_t> dst(1 << 20);
  CopyChannel failing(source);
  failing.fail_at = 2;
  absl::StatusOr<ReadAndHashResult> r = ReadAndHash(
      failing, transport::RemoteRegion{0, 1 << 20, 0}, dst.data(), 65536, absl::InfiniteFuture(),
      [] { return absl::OkStatus(); }, clock);
  EXPECT_THAT(r.status(), HasErrorCode(ErrorCode::kUnavailable));
  EXPECT_EQ(failing.reads.load(), 3) << "no Read after the failed one";

  CopyChannel refused(source);
  int checks = 0;
  r = ReadAndHash(
      refused, transport::RemoteRegion{0, 1 << 20, 0}, dst.data(), 65536, absl::InfiniteFuture(),
      [&] { return ++checks > 4 ? MakeError(ErrorCode::kStaleObject, "lease over") : absl::OkStatus(); }, clock);
  EXPECT_THAT(r.status(), HasErrorCode(ErrorCode::kStaleObject));
  EXPECT_EQ(refused.reads.load(), 4);
}

TEST(ReadAndHashTest, AnEmptyRegionReadsNothingAndHasTheEmptyChecksum) {
  testing::FakeClock clock;
  CopyChannel channel({});
  absl::StatusOr<ReadAndHashResult> r = ReadAndHash(
      channel, transport::RemoteRegion{0, 0, 0}, nullptr, 4096, absl::InfiniteFuture(), [] { return absl::OkStatus(); },
      clock);
  ASSERT_OK(r.status());
  EXPECT_EQ(r->checksum, ObjectChecksum({}, {}));
  EXPECT_EQ(channel.reads.load(), 0);
}

}  // namespace
}  // namespace rplasma::peer
