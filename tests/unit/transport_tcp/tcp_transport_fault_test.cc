// Faults around TcpTransport: owners that die, stall or lie (a raw fake owner speaking the wire
// format), and raw peers that send garbage to a real owner before or after authenticating.
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "bench-mpi/launch/process_fds.h"
#include "manager/auth/peer_auth.h"
#include "manager/transport/tcp/tcp_socket.h"
#include "manager/transport/tcp/tcp_transport.h"
#include "manager/transport/tcp/tcp_wire.h"
#include "protocol/base/notification.h"
#include "tests/support/status_matchers.h"
#include "tests/support/wait_for.h"
#include "tests/unit/transport_tcp/fake_request_handler.h"
#include "tests/unit/transport_tcp/tcp_test_util.h"

namespace rplasma::transport::tcp {
namespace {

using ::rplasma::testing::HasErrorCode;
using ::rplasma::testing::IsOk;
using ::rplasma::testing::WaitFor;
using ::rplasma::transport::testing::Deadline;
using ::rplasma::transport::testing::FakeRequestHandler;
using ::rplasma::transport::testing::OptionsWithSecret;
using ::rplasma::transport::testing::TestArena;

constexpr char kSecret[] = "fault-secret";

// An owner that authenticates properly, reads one request, then misbehaves.
class FakeOwner {
 public:
  // kSlowThenServe: a Read's reply in two parts, 64 KiB of 0x5a then, after kSlowPause, the rest as
  // 0xa5; then it answers one Call with "pong".
  enum class Behaviour { kHalfThenClose, kSilent, kGarbageReply, kWrongReadLength, kSlowThenServe };
  static constexpr absl::Duration kSlowPause = absl::Milliseconds(700);

  explicit FakeOwner(Behaviour behaviour) : behaviour_(behaviour) {
    listener_ = *TcpListen("127.0.0.1:0");
    address_ = *LocalAddress(listener_.get());
    thread_ = std::thread([this] { Run(); });
  }
  ~FakeOwner() {
    stop_.Notify();
    thread_.join();
  }
  const std::string& address() const { return address_; }
  // True once the one request it reads has arrived in full (the reader's request is pending).
  bool got_request() const { return got_request_.load(); }

 private:
  void Run() {
    absl::StatusOr<UniqueFd> fd = TcpAccept(listener_.get(), absl::Now() + absl::Seconds(10));
    if (!fd.ok()) return;
    if (!auth::AuthenticateAsServer(fd->get(), kSecret, absl::Now() + absl::Seconds(10)).ok()) return;
    uint8_t encoded[kTcpHeaderBytes];
    if (!RecvAll(fd->get(), encoded, sizeof(encoded), absl::Now() + absl::Seconds(10)).ok()) return;
    absl::StatusOr<TcpHeader> request = ParseTcpHeader(encoded, TcpDirection::kRequest);
    if (!request.ok()) return;
    std::vector<uint8_t> payload(request->length);
    if (!RecvAll(fd->get(), payload.data(), payload.size(), absl::Now() + absl::Seconds(10)).ok()) return;
    got_request_ = true;
    uint64_t length = 0;
    if (request->kind == TcpKind::kRead) {
      uint64_t offset;
      DecodeReadRequest(payload.data(), &offset, &length);
    }
    TcpHeader reply{TcpKind::kReadData, 0, request->request_id, length};
    std::vector<uint8_t> data(length / 2, 0x5a);
    switch (behaviour_) {
      case Behaviour::kHalfThenClose: {
        EncodeTcpHeader(reply, encoded);
        iovec iov[2] = {{encoded, sizeof(encoded)}, {data.data(), data.size()}};
        (void)SendAll(fd->get(), iov, 2, absl::Now() + absl::Seconds(10));
        return;  // dies mid-stream: the fd closes
      }
      case Behaviour::kSilent: break;
      case Behaviour::kGarbageReply: {
        std::memset(encoded, 0xEE, sizeof(encoded));
        iovec iov[1] = {{encoded, sizeof(encoded)}};
        (void)SendAll(fd->get(), iov, 1, absl::Now() + absl::Seconds(10));
        break;
      }
      case Behaviour::kSlowThenServe: {
        EncodeTcpHeader(reply, encoded);
        std::vector<uint8_t> first(64 << 10, 0x5a), rest(length - first.size(), 0xa5);
        iovec head[2] = {{encoded, sizeof(encoded)}, {first.data(), first.size()}};
        if (!SendAll(fd->get(), head, 2, absl::Now() + absl::Seconds(10)).ok()) return;
        absl::SleepFor(kSlowPause);
        iovec tail[1] = {{rest.data(), rest.size()}};
        if (!SendAll(fd->get(), tail, 1, absl::Now() + absl::Seconds(10)).ok()) return;
        if (!RecvAll(fd->get(), encoded, sizeof(encoded), absl::Now() + absl::Seconds(10)).ok()) return;
        absl::StatusOr<TcpHeader> call = ParseTcpHeader(encoded, TcpDirection::kRequest);
        if (!call.ok()) return;
        std::vector<uint8_t> ignored(call->length);
        if (!RecvAll(fd->get(), ignored.data(), ignored.size(), absl::Now() + absl::Seconds(10)).ok()) return;
        TcpHeader pong{TcpKind::kCallReply, 0, call->request_id, 4};
        EncodeTcpHeader(pong, encoded);
        iovec answer[2] = {{encoded, sizeof(encoded)}, {const_cast<char*>("pong"), 4}};
        (void)SendAll(fd->get(), answer, 2, absl::Now() + absl::Seconds(10));
        break;
      }
      case Behaviour::kWrongReadLength: {
        reply.length = length + 1;
        EncodeTcpHeader(reply, encoded);
        iovec iov[1] = {{encoded, sizeof(encoded)}};
        (void)SendAll(fd->get(), iov, 1, absl::Now() + absl::Seconds(10));
        break;
      }
    }
    stop_.WaitForNotification();
  }

  const Behaviour behaviour_;
  UniqueFd listener_;
  std::string address_;
  Notification stop_;
  std::atomic<bool> got_request_{false};
  std::thread thread_;
};

class TcpFaultTest : public ::testing::Test {
 protected:
  // The reader's dead-peer timeout: outstanding requests that see no reply byte this long close the channel.
  static constexpr absl::Duration kStallTimeout = absl::Seconds(1);

  void SetUp() override {
    TcpTuning tuning;
    tuning.dead_peer_timeout = kStallTimeout;
    ASSERT_OK_AND_ASSIGN(reader_, TcpTransport::Create(OptionsWithSecret(kSecret), tuning));
    ASSERT_OK(reader_->RegisterArena(arena_.base(), arena_.size()));
  }
  absl::Status ReadFrom(Channel& ch, absl::Time deadline) {
    return ch.Read(RemoteRegion{0, 1 << 20, 0}, arena_.base(), deadline);
  }

  TestArena arena_{2 << 20};
  std::unique_ptr<TcpTransport> reader_;
};

TEST_F(TcpFaultTest, OwnerDyingMidReadFailsPromptlyWithUnavailable) {
  FakeOwner owner(FakeOwner::Behaviour::kHalfThenClose);
  ASSERT_OK_AND_ASSIGN(auto ch, reader_->Connect(owner.address(), Deadline()));
  absl::Time start = absl::Now();
  EXPECT_THAT(ReadFrom(*ch, start + absl::Seconds(20)), HasErrorCode(ErrorCode::kUnavailable));
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  EXPECT_FALSE(ch->healthy());
  EXPECT_EQ(reader_->stats()["errors"], 1u);
}

TEST_F(TcpFaultTest, SilentOwnerHitsTheDeadlineAndTheChannelClosesOnceStalled) {
  FakeOwner owner(FakeOwner::Behaviour::kSilent);
  ASSERT_OK_AND_ASSIGN(auto ch, reader_->Connect(owner.address(), Deadline()));
  absl::Time start = absl::Now();
  EXPECT_THAT(ReadFrom(*ch, start + absl::Milliseconds(300)), HasErrorCode(ErrorCode::kDeadlineExceeded));
  absl::Duration took = absl::Now() - start;
  EXPECT_GE(took, absl::Milliseconds(290));
  EXPECT_LT(took, absl::Seconds(5));
  // One expired request does not close the channel; a peer that answers nothing for the stall
  // timeout while a request is outstanding does.
  EXPECT_TRUE(ch->healthy() || absl::Now() - start >= kStallTimeout);
  EXPECT_TRUE(WaitFor([&] { return !ch->healthy(); }, absl::Seconds(5)));
  EXPECT_GE(absl::Now() - start, kStallTimeout - absl::Milliseconds(10));
  EXPECT_THAT(ch->Call("later", Deadline()), HasErrorCode(ErrorCode::kUnavailable));
}

TEST_F(TcpFaultTest, OneTimeoutLeavesTheOtherPendingRequestsAloneUntilThePeerStalls) {
  FakeOwner owner(FakeOwner::Behaviour::kSilent);
  ASSERT_OK_AND_ASSIGN(auto ch, reader_->Connect(owner.address(), Deadline()));
  absl::Status long_read;
  std::atomic<bool> long_read_done{false};
  absl::Time start = absl::Now();
  std::thread patient([&] {
    long_read = ReadFrom(*ch, absl::Now() + absl::Seconds(30));
    long_read_done = true;
  });
  EXPECT_TRUE(WaitFor([&] { return owner.got_request(); }, absl::Seconds(5))) << "the long read never arrived";
  EXPECT_THAT(ch->Call("short", absl::Now() + absl::Milliseconds(200)), HasErrorCode(ErrorCode::kDeadlineExceeded));
  if (absl::Now() - start < kStallTimeout - absl::Milliseconds(200)) {
    EXPECT_FALSE(long_read_done.load()) << "the short call's deadline ended the long read: " << long_read;
  }
  patient.join();
  // The silent owner never answers: the stall timeout, not the other request's deadline, ends it.
  EXPECT_THAT(long_read, HasErrorCode(ErrorCode::kUnavailable));
  EXPECT_GE(absl::Now() - start, kStallTimeout - absl::Milliseconds(10));
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  EXPECT_FALSE(ch->healthy());
}

// A reply crawling in over a bad link must not hold its caller past the deadline: the caller leaves
// mid-reply, the rest of that reply is drained (never into the caller's destination), and the
// stream position survives for the next request on the same channel.
TEST_F(TcpFaultTest, DeadlinePassingMidReplyEndsTheReadOnTimeAndTheChannelKeepsItsPlace) {
  FakeOwner owner(FakeOwner::Behaviour::kSlowThenServe);
  ASSERT_OK_AND_ASSIGN(auto ch, reader_->Connect(owner.address(), Deadline()));
  std::memset(arena_.base(), 0, arena_.size());
  const absl::Time start = absl::Now();
  EXPECT_THAT(ReadFrom(*ch, start + absl::Milliseconds(300)), HasErrorCode(ErrorCode::kDeadlineExceeded));
  const absl::Duration took = absl::Now() - start;
  EXPECT_LT(took, absl::Milliseconds(300) + (FakeOwner::kSlowPause - absl::Milliseconds(300)) / 2)
      << "the Read waited for the rest of its reply";
  EXPECT_TRUE(ch->healthy());
  ASSERT_OK_AND_ASSIGN(std::string reply, ch->Call("ping", start + absl::Seconds(10)));
  EXPECT_EQ(reply, "pong");
  EXPECT_TRUE(ch->healthy());
  const uint8_t* base = arena_.base();
  EXPECT_EQ(std::count(base, base + arena_.size(), 0xa5), 0) << "late bytes went into the expired Read's destination";
}

TEST_F(TcpFaultTest, GarbageReplyClosesTheChannel) {
  FakeOwner owner(FakeOwner::Behaviour::kGarbageReply);
  ASSERT_OK_AND_ASSIGN(auto ch, reader_->Connect(owner.address(), Deadline()));
  EXPECT_THAT(ReadFrom(*ch, Deadline()), HasErrorCode(ErrorCode::kUnavailable));
  EXPECT_FALSE(ch->healthy());
}

TEST_F(TcpFaultTest, ReadReplyOfTheWrongLengthClosesTheChannel) {
  FakeOwner owner(FakeOwner::Behaviour::kWrongReadLength);
  ASSERT_OK_AND_ASSIGN(auto ch, reader_->Connect(owner.address(), Deadline()));
  EXPECT_THAT(ReadFrom(*ch, Deadline()), HasErrorCode(ErrorCode::kUnavailable));
  EXPECT_FALSE(ch->healthy());
}

// Raw peers against a real owner; a good channel must keep working throughout.
class TcpHostilePeerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    TransportOptions options = OptionsWithSecret(kSecret);
    options.connect_timeout = absl::Milliseconds(500);  // also the owner's auth timeout
    ASSERT_OK_AND_ASSIGN(owner_, TcpTransport::Create(options));
    ASSERT_OK(owner_->RegisterArena(arena_.base(), arena_.size()));
    ASSERT_OK_AND_ASSIGN(address_, owner_->Listen("127.0.0.1:0", &handler_));
    ASSERT_OK_AND_ASSIGN(reader_, TcpTransport::Create(OptionsWithSecret(kSecret)));
    ASSERT_OK_AND_ASSIGN(good_, reader_->Connect(address_, Deadline()));
    // The owner announces a connection to its handler just after its side of the handshake, which
    // may be after the reader's Connect returned.
    ASSERT_TRUE(WaitFor([&] { return handler_.connect_count() == 1; }, absl::Seconds(5)));
  }
  void TearDown() override {
    EXPECT_THAT(good_->Call("still here", Deadline()), IsOk());
    EXPECT_TRUE(good_->healthy());
    reader_->Shutdown();
    owner_->Shutdown();
    EXPECT_TRUE(handler_.DisconnectsMatchConnects());
  }

  UniqueFd RawConnect() { return *TcpConnect(address_, Deadline()); }
  UniqueFd AuthenticatedRawConnect() {
    UniqueFd fd = RawConnect();
    EXPECT_OK(auth::AuthenticateAsClient(fd.get(), kSecret, Deadline()));
    return fd;
  }
  static void Send(int fd, const void* data, size_t n) {
    iovec iov[1] = {{const_cast<void*>(data), n}};
    EXPECT_OK(SendAll(fd, iov, 1, Deadline()));
  }
  // True once the owner closed `fd` (EOF or reset), discarding anything it sent before.
  static bool ClosedByOwner(int fd, absl::Duration within = absl::Seconds(5)) {
    absl::Time deadline = absl::Now() + within;
    uint8_t buf[256];
    while (true) {
      absl::Status s = RecvAll(fd, buf, 1, deadline);
      if (ErrorCodeOf(s) == ErrorCode::kUnavailable) return true;
      if (!s.ok()) return false;  // deadline: still open
    }
  }

  TestArena arena_{1 << 20};
  FakeRequestHandler handler_;
  std::unique_ptr<TcpTransport> owner_;
  std::unique_ptr<TcpTransport> reader_;
  std::string address_;
  std::shared_ptr<Channel> good_;
};

TEST_F(TcpHostilePeerTest, GarbageInsteadOfTheAuthResponseIsRefused) {
  UniqueFd fd = RawConnect();
  std::vector<uint8_t> garbage(auth::kResponseBytes, 0x41);
  Send(fd.get(), garbage.data(), garbage.size());
  EXPECT_TRUE(ClosedByOwner(fd.get()));
  EXPECT_TRUE(WaitFor([&] { return owner_->stats()["auth_failures"] == 1; }, absl::Seconds(5)));
  EXPECT_EQ(handler_.connect_count(), 1u) << "only the good channel";
}

TEST_F(TcpHostilePeerTest, RequestsWithoutAuthenticationAreNeverServed) {
  UniqueFd fd = RawConnect();
  uint8_t encoded[kTcpHeaderBytes];
  EncodeTcpHeader({TcpKind::kCall, 0, 1, 5}, encoded);
  Send(fd.get(), encoded, sizeof(encoded));
  Send(fd.get(), "hello", 5);
  std::vector<uint8_t> filler(auth::kResponseBytes, 0);
  Send(fd.get(), filler.data(), filler.size());
  EXPECT_TRUE(ClosedByOwner(fd.get()));
  EXPECT_EQ(handler_.calls(), 0);
}

TEST_F(TcpHostilePeerTest, SilentUnauthenticatedPeerIsDroppedAfterTheAuthTimeout) {
  UniqueFd fd = RawConnect();
  EXPECT_TRUE(ClosedByOwner(fd.get(), absl::Seconds(5)));
  EXPECT_TRUE(WaitFor([&] { return owner_->stats()["auth_failures"] == 1; }, absl::Seconds(5)));
}

TEST_F(TcpHostilePeerTest, GarbageAfterAuthenticationClosesOnlyThatConnection) {
  UniqueFd fd = AuthenticatedRawConnect();
  EXPECT_TRUE(WaitFor([&] { return handler_.connect_count() == 2; }, absl::Seconds(5)));
  std::vector<uint8_t> garbage(kTcpHeaderBytes, 0xFF);
  Send(fd.get(), garbage.data(), garbage.size());
  EXPECT_TRUE(ClosedByOwner(fd.get()));
  EXPECT_TRUE(WaitFor([&] { return handler_.disconnect_count() == 1; }, absl::Seconds(5)));
}

TEST_F(TcpHostilePeerTest, OversizeLengthsCloseTheConnectionWithoutAllocating) {
  for (uint64_t length : {static_cast<uint64_t>(kMaxCallBytes) + 1, UINT64_MAX}) {
    UniqueFd fd = AuthenticatedRawConnect();
    uint8_t encoded[kTcpHeaderBytes];
    EncodeTcpHeader({TcpKind::kCall, 0, 1, 0}, encoded);
    for (int i = 0; i < 8; ++i) encoded[16 + i] = static_cast<uint8_t>(length >> (8 * i));
    Send(fd.get(), encoded, sizeof(encoded));
    EXPECT_TRUE(ClosedByOwner(fd.get())) << length;
  }
  EXPECT_EQ(handler_.calls(), 0);
}

TEST_F(TcpHostilePeerTest, TruncatedRequestThenHangUpEndsTheConnection) {
  UniqueFd fd = AuthenticatedRawConnect();
  uint8_t encoded[kTcpHeaderBytes];
  EncodeTcpHeader({TcpKind::kCall, 0, 1, 100}, encoded);
  Send(fd.get(), encoded, sizeof(encoded));
  Send(fd.get(), "0123456789", 10);
  fd.reset();
  EXPECT_TRUE(WaitFor([&] { return handler_.disconnect_count() == 1; }, absl::Seconds(5)));
  EXPECT_EQ(handler_.calls(), 0);
}

TEST_F(TcpHostilePeerTest, RandomBytesBeforeOrAfterAuthenticationNeverHarmTheOwner) {
  std::mt19937_64 rng(20261122);
  constexpr int kRounds = 30;
  for (int i = 0; i < kRounds; ++i) {
    UniqueFd fd = i % 2 == 0 ? RawConnect() : AuthenticatedRawConnect();
    std::vector<uint8_t> junk(1 + rng() % 300);
    for (auto& b : junk) b = static_cast<uint8_t>(rng());
    if (i % 3 == 0 && junk.size() >= kTcpHeaderBytes) junk[0] = 1, junk[1] = 0;  // plausible version
    Send(fd.get(), junk.data(), junk.size());
  }  // each closes here
  EXPECT_TRUE(WaitFor([&] { return handler_.disconnect_count() == kRounds / 2; }, absl::Seconds(10)));
  EXPECT_TRUE(WaitFor([&] { return owner_->server_connection_count() == 1; }, absl::Seconds(10)));
  EXPECT_EQ(handler_.calls(), 0) << "no random byte string made a complete valid request";
}

TEST_F(TcpHostilePeerTest, ManyAbruptConnectionsLeaveNoThreadsOrFdsBehind) {
  int fds_before = ::rplasma::bench::CountOpenFds();
  for (int i = 0; i < 20; ++i) {
    UniqueFd fd = i % 2 == 0 ? RawConnect() : AuthenticatedRawConnect();
  }
  EXPECT_TRUE(WaitFor([&] { return owner_->server_connection_count() == 1; }, absl::Seconds(10)));
  EXPECT_TRUE(WaitFor([&] { return ::rplasma::bench::CountOpenFds() <= fds_before; }, absl::Seconds(5)));
  EXPECT_TRUE(WaitFor([&] { return handler_.disconnect_count() == 10; }, absl::Seconds(5)));
}

}  // namespace
}  // namespace rplasma::transport::tcp
