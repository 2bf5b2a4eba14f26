// A flood of unauthenticated connections against a real TcpTransport over loopback: 1100 silent
// connections and 30 that send garbage, all from the same address as the real peer. The real peer
// must still connect and get its Call answered promptly; the silent ones are closed by the
// handshake deadline; every failure is counted; no thread or fd is left behind.
#include <sys/socket.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "bench-mpi/launch/process_fds.h"
#include "manager/transport/tcp/tcp_socket.h"
#include "manager/transport/tcp/tcp_transport.h"
#include "tests/support/status_matchers.h"
#include "tests/support/wait_for.h"
#include "tests/unit/transport_tcp/fake_request_handler.h"
#include "tests/unit/transport_tcp/tcp_test_util.h"

namespace rplasma::transport::tcp {
namespace {

using ::rplasma::testing::IsOk;
using ::rplasma::testing::WaitFor;
using ::rplasma::transport::testing::FakeRequestHandler;
using ::rplasma::transport::testing::OptionsWithSecret;
using ::rplasma::transport::testing::TestArena;

constexpr char kSecret[] = "handshake-flood-test-secret";
// More than the owner serves at once: before the handshake pool, each held a serving slot and a
// thread for the whole auth timeout, and the real peer was refused.
constexpr int kSilent = static_cast<int>(kMaxServerConnections) + 76;
constexpr int kGarbage = 30;

// True once the owner closed `fd`.
bool ClosedByOwner(int fd, absl::Time deadline) {
  char buf[256];
  while (true) {
    absl::Status s = RecvAll(fd, buf, 1, deadline);
    if (ErrorCodeOf(s) == ErrorCode::kUnavailable) return true;
    if (!s.ok()) return false;
  }
}

TEST(TcpHandshakeFloodTest, SilentAndGarbageConnectionsNeverLockOutAnAuthenticatedPeer) {
  const int fds_before = bench::CountOpenFds();
  TestArena arena(1 << 20);
  FakeRequestHandler handler;
  TransportOptions owner_options = OptionsWithSecret(kSecret);
  owner_options.handshake_timeout = absl::Seconds(3);
  ASSERT_OK_AND_ASSIGN(auto owner, TcpTransport::Create(owner_options));
  ASSERT_OK(owner->RegisterArena(arena.base(), arena.size()));
  ASSERT_OK_AND_ASSIGN(std::string address, owner->Listen("127.0.0.1:0", &handler));

  std::vector<UniqueFd> silent;
  for (int i = 0; i < kSilent; ++i) {
    absl::StatusOr<UniqueFd> fd = TcpConnect(address, absl::Now() + absl::Seconds(5));
    ASSERT_TRUE(fd.ok()) << "connection " << i << ": " << fd.status();
    silent.push_back(*std::move(fd));
  }
  std::vector<UniqueFd> garbage;
  for (int i = 0; i < kGarbage; ++i) {
    ASSERT_OK_AND_ASSIGN(UniqueFd fd, TcpConnect(address, absl::Now() + absl::Seconds(5)));
    std::string junk(100, static_cast<char>(0xA0 + i));
    ASSERT_EQ(::send(fd.get(), junk.data(), junk.size(), MSG_NOSIGNAL), static_cast<ssize_t>(junk.size()));
    garbage.push_back(std::move(fd));
  }

  // The real peer, from the same address, while the flood is still open.
  ASSERT_OK_AND_ASSIGN(auto reader, TcpTransport::Create(OptionsWithSecret(kSecret)));
  const absl::Time start = absl::Now();
  ASSERT_OK_AND_ASSIGN(auto channel, reader->Connect(address, absl::Now() + absl::Seconds(5)));
  absl::StatusOr<std::string> reply = channel->Call("through the flood", absl::Now() + absl::Seconds(5));
  ASSERT_OK(reply.status());
  EXPECT_EQ(*reply, "echo:through the flood");
  EXPECT_LT(absl::Now() - start, owner_options.handshake_timeout / 2)
      << "the authenticated peer waited behind the flood";
  EXPECT_LE(owner->handshakes_pending(), owner_options.max_handshakes_per_source)
      << "one source holds at most its cap of handshake slots";

  // Every silent and garbage connection is closed: garbage at once, silence by the deadline.
  const absl::Time close_deadline = absl::Now() + owner_options.handshake_timeout + absl::Seconds(5);
  for (const UniqueFd& fd : garbage) EXPECT_TRUE(ClosedByOwner(fd.get(), close_deadline));
  for (const UniqueFd& fd : silent) EXPECT_TRUE(ClosedByOwner(fd.get(), close_deadline));
  EXPECT_TRUE(WaitFor([&] { return owner->stats()["auth_failures"] == kSilent + kGarbage; }, absl::Seconds(5)))
      << owner->stats()["auth_failures"];
  EXPECT_EQ(owner->handshakes_pending(), 0u);
  EXPECT_EQ(handler.connect_count(), 1u) << "only the real peer was served";
  EXPECT_EQ(handler.calls(), 1);
  EXPECT_THAT(channel->Call("after the flood", absl::Now() + absl::Seconds(5)), IsOk());

  silent.clear();
  garbage.clear();
  reader->Shutdown();
  owner->Shutdown();
  EXPECT_TRUE(handler.DisconnectsMatchConnects());
  channel.reset();
  reader.reset();
  owner.reset();
  EXPECT_TRUE(WaitFor([&] { return bench::CountOpenFds() <= fds_before; }, absl::Seconds(5)));
}

TEST(TcpHandshakeFloodTest, SilentConnectionIsClosedByTheHandshakeDeadlineNotTheConnectTimeout) {
  TestArena arena(1 << 20);
  FakeRequestHandler handler;
  TransportOptions options = OptionsWithSecret(kSecret);
  options.connect_timeout = absl::Seconds(30);
  options.handshake_timeout = absl::Milliseconds(200);
  ASSERT_OK_AND_ASSIGN(auto owner, TcpTransport::Create(options));
  ASSERT_OK(owner->RegisterArena(arena.base(), arena.size()));
  ASSERT_OK_AND_ASSIGN(std::string address, owner->Listen("127.0.0.1:0", &handler));
  ASSERT_OK_AND_ASSIGN(UniqueFd fd, TcpConnect(address, absl::Now() + absl::Seconds(5)));
  const absl::Time start = absl::Now();
  EXPECT_TRUE(ClosedByOwner(fd.get(), absl::Now() + absl::Seconds(5)));
  EXPECT_LT(absl::Now() - start, absl::Seconds(2));
  EXPECT_TRUE(WaitFor([&] { return owner->stats()["auth_failures"] == 1; }, absl::Seconds(5)));
}

}  // namespace
}  // namespace rplasma::transport::tcp
