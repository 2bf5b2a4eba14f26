// A queue pair forced into the error state (IBV_QPS_ERR, through the QpFaultInjector seam) while
// many Calls and Reads are in flight on its channel, over a real verbs device (label rdma-guest;
// skips without one). Every request must end before its deadline with verified data or an error,
// the channel must report itself unhealthy, rebuild its endpoint on the next request, a new
// Connect must work, and every QP must be gone on both sides once the channels are dropped.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include <gtest/gtest.h>

#include "manager/transport/verbs/verbs_transport.h"
#include "protocol/base/mutex_lock.h"
#include "protocol/base/status.h"
#include "tests/support/skip.h"
#include "tests/support/status_matchers.h"
#include "tests/support/test_bytes.h"
#include "tests/support/wait_for.h"
#include "tests/unit/transport_verbs/verbs_test_env.h"

namespace rplasma::transport {
namespace {

using ::rplasma::testing::WaitFor;
using testing::EchoHandler;

constexpr uint64_t kArenaBytes = 8u << 20;
constexpr int kCalls = 32;
constexpr int kReads = 32;
constexpr uint64_t kReadBytes = kArenaBytes / kReads;  // each Read its own destination slice

// Keeps the fault injector of every endpoint the client transport connects, newest last.
class InjectorRecorder : public verbs::ConnectObserver {
 public:
  void OnEndpointConnected(const std::string&, uint32_t) override {}
  void OnQpFaultInjector(const std::string&, verbs::QpFaultInjector force_qp_error) override {
    MutexLock lock(&mu_);
    injectors_.push_back(std::move(force_qp_error));
  }
  size_t count() const {
    MutexLock lock(&mu_);
    return injectors_.size();
  }
  verbs::QpFaultInjector last() const {
    MutexLock lock(&mu_);
    return injectors_.back();
  }

 private:
  mutable absl::Mutex mu_;
  std::vector<verbs::QpFaultInjector> injectors_ ABSL_GUARDED_BY(mu_);
};

TransportOptions Options() {
  TransportOptions o;
  o.secret = "verbs-qp-error-test-secret";
  o.message_bytes = 4096;
  o.queue_depth = 16;             // fewer credits than Calls: some wait for a credit when the QP fails
  o.read_chunk_bytes = 64 << 10;  // 4 chunks per Read
  o.max_reads_in_flight = 4;      // most Reads queue behind the window
  o.connect_timeout = absl::Seconds(20);
  return o;
}

// How one request ended, measured from the moment the QP was forced into error.
struct Outcome {
  absl::Status status;
  bool data_ok = false;
  absl::Time ended;
};

TEST(VerbsQpErrorTest, QpForcedToErrorWithManyRequestsInFlightFailsThemCleanlyAndTheChannelRebuilds) {
  RPLASMA_REQUIRE_VERBS_IP(ip);
  std::vector<uint8_t> server_arena = ::rplasma::testing::TestBytes<std::vector<uint8_t>>(2, kArenaBytes);
  std::vector<uint8_t> client_arena(kArenaBytes);
  EchoHandler handler;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<VerbsTransport> server, VerbsTransport::Create(Options()));
  ASSERT_OK(server->RegisterArena(server_arena.data(), server_arena.size()));
  ASSERT_OK_AND_ASSIGN(std::string address, server->Listen(ip + ":0", &handler));
  auto injectors = std::make_shared<InjectorRecorder>();
  verbs::VerbsConnectSeams seams;
  seams.observer = injectors;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<VerbsTransport> client, VerbsTransport::Create(Options(), seams));
  ASSERT_OK(client->RegisterArena(client_arena.data(), client_arena.size()));

  ASSERT_OK_AND_ASSIGN(std::shared_ptr<Channel> ch, client->Connect(address, absl::Now() + absl::Seconds(30)));
  ASSERT_EQ(injectors->count(), 1u);
  ASSERT_OK_AND_ASSIGN(std::string warm, ch->Call("warm", absl::Now() + absl::Seconds(30)));
  ASSERT_EQ(warm, "re:warm");

  // In flight: Calls held by a stalled handler (none can be answered before the fault), and Reads
  // queued behind a 4-READ window. The handler resumes right after the fault: the server's
  // listener closes the dead connection only once its HandleCall returned, and requests that
  // arrive after the fault rebuild the endpoint through that listener.
  handler.Stall();
  std::atomic<int> started{0};
  const absl::Time deadline = absl::Now() + absl::Seconds(60);
  std::vector<Outcome> calls(kCalls), reads(kReads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kCalls; ++i) {
    threads.emplace_back([&, i] {
      const std::string request = absl::StrCat("in-flight-", i, std::string(i * 300, 'q'));  // up to 3 fragments
      started.fetch_add(1);
      absl::StatusOr<std::string> reply = ch->Call(request, deadline);
      calls[i].status = reply.status();
      calls[i].data_ok = reply.ok() && *reply == "re:" + request;
      calls[i].ended = absl::Now();
    });
  }
  for (int i = 0; i < kReads; ++i) {
    threads.emplace_back([&, i] {
      const uint64_t src = (i * 7919) % (kArenaBytes - kReadBytes);
      uint8_t* dst = client_arena.data() + i * kReadBytes;
      started.fetch_add(1);
      reads[i].status = ch->Read(server->RegionFor(src, kReadBytes), dst, deadline);
      reads[i].data_ok = reads[i].status.ok() && std::memcmp(dst, server_arena.data() + src, kReadBytes) == 0;
      reads[i].ended = absl::Now();
    });
  }
  ASSERT_TRUE(
      WaitFor([&] { return handler.calls.load() >= 1 && started.load() == kCalls + kReads; }, absl::Seconds(30)))
      << "no Call reached the server's handler";
  const verbs::QpFaultInjector failed_endpoint = injectors->last();
  const absl::Time faulted = absl::Now();
  ASSERT_OK(failed_endpoint());
  // The endpoint learns of the fault from its flushed work requests, and the channel reports it.
  const bool reported = WaitFor([&] { return !ch->healthy(); }, absl::Seconds(10));
  const absl::Duration noticed = absl::Now() - faulted;
  handler.Resume();
  for (std::thread& t : threads) t.join();

  int calls_ok = 0, calls_failed = 0, reads_ok = 0, reads_failed = 0;
  absl::Duration slowest = absl::ZeroDuration();
  for (int i = 0; i < kCalls; ++i) {
    // A Call answered after the fault came over a rebuilt endpoint; its reply must be its own.
    if (calls[i].status.ok()) {
      EXPECT_TRUE(calls[i].data_ok) << "call " << i << " got someone else's reply";
      ++calls_ok;
    } else {
      ++calls_failed;
    }
    EXPECT_LT(calls[i].ended, deadline) << "call " << i << ": " << calls[i].status;
    slowest = std::max(slowest, calls[i].ended - faulted);
  }
  for (int i = 0; i < kReads; ++i) {
    if (reads[i].status.ok()) {
      EXPECT_TRUE(reads[i].data_ok) << "read " << i << " succeeded with wrong bytes";
      ++reads_ok;
    } else {
      ++reads_failed;
    }
    EXPECT_LT(reads[i].ended, deadline) << "read " << i << ": " << reads[i].status;
    slowest = std::max(slowest, reads[i].ended - faulted);
  }
  std::cerr << "[ qp_error ] the channel reported the fault after " << absl::FormatDuration(noticed) << "; calls "
            << calls_ok << " ok / " << calls_failed << " failed, reads " << reads_ok << " ok / " << reads_failed
            << " failed; the last request ended " << absl::FormatDuration(slowest) << " after the fault\n";
  EXPECT_TRUE(reported) << "the channel still reports a healthy endpoint 10 s after its QP failed";
  // The Call held in the stalled handler at the fault can never have its reply.
  EXPECT_GE(calls_failed, 1);
  EXPECT_LT(slowest, absl::Seconds(30)) << "requests must end promptly after the QP error, not at their deadline";
  EXPECT_FALSE(failed_endpoint().ok()) << "the failed endpoint has no connected QP left to fail";

  // The next request (if none did already) rebuilds the endpoint: a fresh ticket, a fresh QP.
  const absl::Time later = absl::Now() + absl::Seconds(30);
  ASSERT_OK_AND_ASSIGN(std::string reply, ch->Call("after the fault", later));
  EXPECT_EQ(reply, "re:after the fault");
  EXPECT_TRUE(ch->healthy());
  EXPECT_EQ(client->stats()["reconnects"], 1u) << "one rebuild, however many requests saw the failure";
  EXPECT_EQ(injectors->count(), 2u);
  std::memset(client_arena.data(), 0, client_arena.size());
  ASSERT_OK(ch->Read(server->RegionFor(12345, 3 << 20), client_arena.data(), later));
  EXPECT_EQ(std::memcmp(client_arena.data(), server_arena.data() + 12345, 3 << 20), 0);

  // A new Connect gets its own channel and endpoint, and works too.
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<Channel> fresh, client->Connect(address, later));
  ASSERT_OK_AND_ASSIGN(std::string fresh_reply, fresh->Call("fresh", later));
  EXPECT_EQ(fresh_reply, "re:fresh");
  EXPECT_EQ(injectors->count(), 3u);

  // Leak audit: the failed QP is gone on both sides (2 live each), then none once the channels go.
  EXPECT_EQ(client->qps_created(), 3u);
  EXPECT_TRUE(WaitFor([&] { return client->stats()["connections"] == 2; }, absl::Seconds(20)))
      << "client connections: " << client->stats()["connections"];
  EXPECT_TRUE(WaitFor([&] { return server->stats()["connections"] == 2 && handler.disconnects.load() == 1; },
                      absl::Seconds(20)))
      << "server connections: " << server->stats()["connections"] << ", disconnects " << handler.disconnects.load();
  EXPECT_EQ(handler.connects.load(), 3);
  ch.reset();
  fresh.reset();
  EXPECT_TRUE(WaitFor([&] { return client->stats()["connections"] == 0; }, absl::Seconds(20)))
      << "client connections: " << client->stats()["connections"];
  EXPECT_TRUE(WaitFor([&] { return server->stats()["connections"] == 0 && handler.disconnects.load() == 3; },
                      absl::Seconds(20)))
      << "server connections: " << server->stats()["connections"] << ", disconnects " << handler.disconnects.load();
  client->Shutdown();
  server->Shutdown();
}

}  // namespace
}  // namespace rplasma::transport
