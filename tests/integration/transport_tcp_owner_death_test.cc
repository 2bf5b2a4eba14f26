// A reader whose owner process is SIGKILLed while Reads stream: every pending Read fails promptly
// with kUnavailable (never waits for its deadline), the channel turns unhealthy, and reconnecting
// to the dead address fails cleanly.
#include <signal.h>

#include <atomic>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "bench-mpi/launch/child_process.h"
#include "manager/transport/tcp/tcp_transport.h"
#include "tests/support/status_matchers.h"
#include "tests/support/wait_for.h"
#include "tests/unit/transport_tcp/tcp_test_util.h"

namespace rplasma::transport::tcp {
namespace {

using ::rplasma::testing::HasErrorCode;
using ::rplasma::testing::WaitFor;
using ::rplasma::transport::testing::OptionsWithSecret;
using ::rplasma::transport::testing::TestArena;

constexpr size_t kMiB = 1 << 20;
constexpr size_t kReadBytes = 32 * kMiB;

std::string OwnerAddress(const std::string& log) {
  std::ifstream in(log);
  std::string word, address;
  while (in >> word) {
    if (word == "OWNER_ADDRESS" && (in >> address)) return address;
  }
  return "";
}

TEST(TcpOwnerDeathTest, KilledOwnerFailsInFlightReadsPromptly) {
  bench::ScratchDir dir = bench::ScratchDir::CreateOrDie();
  std::string log = dir.Join("owner.log");
  ASSERT_OK_AND_ASSIGN(bench::ChildProcess owner, bench::ChildProcess::Start({TRANSPORT_TCP_OWNER, "s3", "33"}, log));
  std::string address;
  ASSERT_TRUE(WaitFor([&] { return !(address = OwnerAddress(log)).empty(); }, absl::Seconds(10)));

  TestArena arena(2 * kReadBytes);
  ASSERT_OK_AND_ASSIGN(auto reader, TcpTransport::Create(OptionsWithSecret("s3")));
  ASSERT_OK(reader->RegisterArena(arena.base(), arena.size()));
  ASSERT_OK_AND_ASSIGN(auto channel, reader->Connect(address, absl::Now() + absl::Seconds(10)));
  ASSERT_OK(channel->Read(RemoteRegion{kMiB, kReadBytes, 0}, arena.base(), absl::Now() + absl::Seconds(30)));
  const std::string expected = ::rplasma::testing::TestBytes(7, kMiB + kReadBytes);  // the owner's arena.Fill(7)
  for (size_t i = 0; i < kReadBytes; i += 4093) {
    ASSERT_EQ(arena.base()[i], static_cast<uint8_t>(expected[kMiB + i])) << i;
  }

  // Two threads keep 32 MiB Reads in flight; the owner dies under them.
  constexpr absl::Duration kDeadline = absl::Seconds(60);
  std::atomic<bool> stop{false};
  std::vector<absl::Status> last(2);
  std::vector<absl::Duration> last_took(2);
  std::atomic<int> started[2] = {0, 0};  // Reads begun by each thread
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&, t] {
      while (!stop.load()) {
        absl::Time start = absl::Now();
        started[t]++;
        last[t] = channel->Read(RemoteRegion{0, kReadBytes, 0}, arena.base() + t * kReadBytes, start + kDeadline);
        last_took[t] = absl::Now() - start;
        if (!last[t].ok()) return;
      }
    });
  }
  // Streaming: each thread has finished a Read and begun the next. (No ASSERT: the kill below is
  // what ends the threads.)
  EXPECT_TRUE(WaitFor([&] { return started[0].load() >= 2 && started[1].load() >= 2; }, absl::Seconds(30)))
      << "the Reads did not get going";
  absl::Time killed = absl::Now();
  owner.Kill();
  for (auto& th : threads) th.join();
  absl::Duration to_notice = absl::Now() - killed;
  stop = true;

  for (int t = 0; t < 2; ++t) {
    EXPECT_THAT(last[t], HasErrorCode(ErrorCode::kUnavailable)) << t;
    EXPECT_LT(last_took[t], absl::Seconds(10)) << "failed long before its 60 s deadline";
  }
  EXPECT_LT(to_notice, absl::Seconds(10));
  EXPECT_FALSE(channel->healthy());
  EXPECT_THAT(reader->Connect(address, absl::Now() + absl::Seconds(5)), HasErrorCode(ErrorCode::kUnavailable));
  EXPECT_EQ(reader->stats()["connections"], 0u);
}

}  // namespace
}  // namespace rplasma::transport::tcp
