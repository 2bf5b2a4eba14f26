// A serving process killed in the middle of RDMA READs: the reader gets an error within the
// configured bound (QP timeout x retries, or sooner through the peer's DISCONNECT) — never a hang.
// The server is a child process (posix_spawn) started before this process registers memory.
#include <atomic>
#include <cstring>
#include <fstream>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "bench-mpi/launch/child_process.h"
#include "manager/transport/verbs/verbs_transport.h"
#include "tests/support/status_matchers.h"
#include "tests/support/wait_for.h"
#include "tests/unit/transport_verbs/verbs_test_env.h"

namespace rplasma::transport {
namespace {

using ::rplasma::testing::WaitFor;

constexpr uint64_t kArenaMiB = 4;
constexpr uint64_t kArenaBytes = kArenaMiB << 20;

TEST(VerbsPeerDeathTest, ServerKilledMidReadFailsTheReadWithinTheRetryBound) {
  RPLASMA_REQUIRE_VERBS_IP(ip);
  bench::ScratchDir dir = bench::ScratchDir::CreateOrDie();
  const std::string info = dir.Join("peer.info");
  ASSERT_OK_AND_ASSIGN(bench::ChildProcess peer, bench::ChildProcess::Start({VERBS_TEST_PEER, ip, info, "death-secret",
                                                                             std::to_string(kArenaMiB)},
                                                                            dir.Join("peer.log")));
  ASSERT_TRUE(WaitFor([&] { return std::ifstream(info).good(); }, absl::Seconds(60)))
      << "peer never listened; see " << dir.Join("peer.log");
  std::string address;
  RemoteRegion region;
  {
    std::ifstream in(info);
    unsigned long long addr = 0;
    in >> address >> region.rkey >> addr;
    region.addr = addr;
    region.length = kArenaBytes;
  }

  TransportOptions o;
  o.secret = "death-secret";
  o.qp_timeout = 14;  // 4.096 us * 2^14 = 67 ms per try
  o.retry_count = 3;  // 4 tries: ~270 ms before RETRY_EXC
  o.read_chunk_bytes = 64 << 10;
  o.max_reads_in_flight = 4;
  const absl::Duration bound = absl::Microseconds(4.096 * (1 << o.qp_timeout) * (o.retry_count + 1));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<VerbsTransport> client, VerbsTransport::Create(o));
  std::vector<uint8_t> arena(kArenaBytes);
  ASSERT_OK(client->RegisterArena(arena.data(), arena.size()));  // after the spawn: no fork after reg
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<Channel> ch, client->Connect(address, absl::Now() + absl::Seconds(30)));
  ASSERT_OK(ch->Read(region, arena.data(), absl::Now() + absl::Seconds(60)));
  for (uint64_t i = 0; i < kArenaBytes; i += 4093) {
    ASSERT_EQ(arena[i], static_cast<uint8_t>((i * 131) ^ (i >> 9) ^ 0x3c)) << i;
  }

  std::atomic<int> reads_started{0};
  absl::Status failure;
  absl::Time failed_at;
  std::thread reader([&] {
    for (;;) {
      reads_started.fetch_add(1);
      absl::Status s = ch->Read(region, arena.data(), absl::Now() + absl::Seconds(60));
      if (!s.ok()) {
        failed_at = absl::Now();
        failure = s;
        return;
      }
    }
  });
  ASSERT_TRUE(WaitFor([&] { return reads_started.load() >= 2; }, absl::Seconds(30)));
  absl::SleepFor(absl::Milliseconds(20));  // inside the second Read's chunks
  absl::Time killed_at = absl::Now();
  peer.Kill();
  reader.join();
  absl::Duration detection = failed_at - killed_at;
  EXPECT_FALSE(failure.ok());
  // The spec bound plus slack for the emulated guest (process teardown, timer granularity).
  EXPECT_LT(detection, bound + absl::Seconds(10)) << failure.ToString();
  std::printf("peer death detected after %s (configured bound %s): %s\n", absl::FormatDuration(detection).c_str(),
              absl::FormatDuration(bound).c_str(), failure.ToString().c_str());
  EXPECT_FALSE(ch->healthy());
  // Nothing listens any more: the rebuild fails quickly instead of hanging.
  absl::Time t0 = absl::Now();
  EXPECT_FALSE(ch->Read(region, arena.data(), absl::Now() + absl::Seconds(20)).ok());
  EXPECT_LT(absl::Now() - t0, absl::Seconds(21));
}

}  // namespace
}  // namespace rplasma::transport
