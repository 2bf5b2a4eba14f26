// TcpTransport over real loopback sockets, with a fake RequestHandler on the owner side.
#include "manager/transport/tcp/tcp_transport.h"

#include <atomic>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "manager/transport/tcp/tcp_socket.h"
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

constexpr size_t kArenaBytes = (64u << 20) + 4096;
constexpr uint64_t kOwnerSeed = 7;

class TcpTransportTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    owner_arena_ = new TestArena(kArenaBytes);
    owner_arena_->Fill(kOwnerSeed);
    reader_arena_ = new TestArena(kArenaBytes);
  }
  static void TearDownTestSuite() {
    delete owner_arena_;
    delete reader_arena_;
  }

  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(owner_, TcpTransport::Create(OptionsWithSecret("shared")));
    ASSERT_OK(owner_->RegisterArena(owner_arena_->base(), owner_arena_->size()));
    ASSERT_OK_AND_ASSIGN(address_, owner_->Listen("127.0.0.1:0", &handler_));
    ASSERT_OK_AND_ASSIGN(reader_, TcpTransport::Create(OptionsWithSecret("shared")));
    ASSERT_OK(reader_->RegisterArena(reader_arena_->base(), reader_arena_->size()));
    ASSERT_OK_AND_ASSIGN(channel_, reader_->Connect(address_, Deadline()));
  }
  void TearDown() override {
    reader_->Shutdown();
    owner_->Shutdown();
    EXPECT_TRUE(handler_.DisconnectsMatchConnects()) << "OnDisconnect must run once per connection";
  }

  // Reads owner [offset, +length) into the reader arena at `dst_offset` and checks every byte.
  void ReadAndVerify(uint64_t offset, uint64_t length, uint64_t dst_offset) {
    uint8_t* dst = reader_arena_->base() + dst_offset;
    std::memset(dst, 0, length);
    ASSERT_OK(channel_->Read(owner_->RegionFor(offset, length), dst, Deadline()));
    for (uint64_t i = 0; i < length; ++i) {
      if (dst[i] != owner_arena_->base()[offset + i]) {
        FAIL() << "byte " << i << " of a " << length << "-byte read differs";
      }
    }
  }

  static TestArena* owner_arena_;
  static TestArena* reader_arena_;
  FakeRequestHandler handler_;
  std::unique_ptr<TcpTransport> owner_;
  std::unique_ptr<TcpTransport> reader_;
  std::string address_;
  std::shared_ptr<Channel> channel_;
};

TestArena* TcpTransportTest::owner_arena_ = nullptr;
TestArena* TcpTransportTest::reader_arena_ = nullptr;

TEST_F(TcpTransportTest, NameIsTcpAndRegionsAreArenaOffsets) {
  EXPECT_EQ(owner_->name(), "tcp");
  RemoteRegion r = owner_->RegionFor(4096, 100);
  EXPECT_EQ(r.addr, 4096u);
  EXPECT_EQ(r.length, 100u);
  EXPECT_EQ(r.rkey, 0u);
}

TEST_F(TcpTransportTest, ListenReportsTheBoundPort) {
  EXPECT_THAT(address_, ::testing::StartsWith("127.0.0.1:"));
  EXPECT_NE(address_, "127.0.0.1:0");
}

TEST_F(TcpTransportTest, SmallCallRoundTrips) {
  ASSERT_OK_AND_ASSIGN(std::string reply, channel_->Call("hello", Deadline()));
  EXPECT_EQ(reply, "echo:hello");
  EXPECT_TRUE(channel_->healthy());
  EXPECT_EQ(channel_->peer_address(), address_);
}

TEST_F(TcpTransportTest, EmptyCallRoundTrips) {
  ASSERT_OK_AND_ASSIGN(std::string reply, channel_->Call("", Deadline()));
  EXPECT_EQ(reply, "echo:");
}

TEST_F(TcpTransportTest, OneMebibyteCallRoundTripsIntact) {
  const std::string request = ::rplasma::testing::TestBytes(3, 1 << 20);
  ASSERT_OK_AND_ASSIGN(std::string reply, channel_->Call(request, Deadline()));
  EXPECT_EQ(reply, "echo:" + request);
}

TEST_F(TcpTransportTest, CallAboveTheCapIsRefusedWithoutHarmingTheChannel) {
  std::string request(kMaxCallBytes + 1, 'a');
  EXPECT_THAT(channel_->Call(request, Deadline()), HasErrorCode(ErrorCode::kInvalidArgument));
  EXPECT_TRUE(channel_->healthy());
  EXPECT_EQ(handler_.calls(), 0) << "nothing reached the owner";
  EXPECT_THAT(channel_->Call("after", Deadline()), IsOk());
}

TEST_F(TcpTransportTest, OversizeReplyBecomesAnErrorNotACrash) {
  EXPECT_THAT(channel_->Call("big-reply", Deadline()), HasErrorCode(ErrorCode::kInternal));
  ASSERT_OK_AND_ASSIGN(std::string reply, channel_->Call("still", Deadline()));
  EXPECT_EQ(reply, "echo:still");
}

TEST_F(TcpTransportTest, ConnectReusesTheHealthyChannel) {
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<Channel> again, reader_->Connect(address_, Deadline()));
  EXPECT_EQ(again.get(), channel_.get());
  ASSERT_OK(again->Call("served after OnConnect", Deadline()).status());
  EXPECT_EQ(handler_.connect_count(), 1u);
}

TEST_F(TcpTransportTest, ConnectToAClosedPortIsUnavailable) {
  ASSERT_OK_AND_ASSIGN(UniqueFd probe, TcpListen("127.0.0.1:0"));
  ASSERT_OK_AND_ASSIGN(std::string unused, LocalAddress(probe.get()));
  probe.reset();
  EXPECT_THAT(reader_->Connect(unused, Deadline()), HasErrorCode(ErrorCode::kUnavailable));
}

TEST_F(TcpTransportTest, WrongSecretIsRefusedAndCountedOnBothSides) {
  ASSERT_OK_AND_ASSIGN(auto intruder, TcpTransport::Create(OptionsWithSecret("guess")));
  EXPECT_THAT(intruder->Connect(address_, Deadline()), HasErrorCode(ErrorCode::kPermissionDenied));
  EXPECT_EQ(intruder->stats()["auth_failures"], 1u);
  EXPECT_TRUE(WaitFor([&] { return owner_->stats()["auth_failures"] == 1; }, absl::Seconds(5)));
  EXPECT_THAT(channel_->Call("fine", Deadline()), IsOk());
  EXPECT_EQ(handler_.connect_count(), 1u) << "only the good channel was ever announced";
}

TEST_F(TcpTransportTest, ReadsOfEverySizeCopyEveryByte) {
  struct Case {
    uint64_t offset, length, dst_offset;
  };
  const Case cases[] = {{0, 1, 0},
                        {13, 7, 1},
                        {4096, 4096, 8192},
                        {5, 65537, 3},
                        {999, (1 << 20) + 3, 77},
                        {0, 16u << 20, 4096},
                        {4096, 64u << 20, 0}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.length);
    ReadAndVerify(c.offset, c.length, c.dst_offset);
  }
  TransportStats s = reader_->stats();
  EXPECT_EQ(s["reads"], std::size(cases));
  EXPECT_GE(s["read_bytes"], 80u << 20);
  EXPECT_EQ(handler_.allow_read_calls(), static_cast<int>(std::size(cases)));
}

TEST_F(TcpTransportTest, ReadOfZeroBytesSucceedsWithoutTouchingTheOwner) {
  EXPECT_OK(channel_->Read(owner_->RegionFor(0, 0), reader_arena_->base(), Deadline()));
  EXPECT_EQ(handler_.allow_read_calls(), 0);
}

TEST_F(TcpTransportTest, ReadRefusedByAllowReadIsPermissionDeniedAndTheChannelLivesOn) {
  handler_.set_allow_reads(false);
  EXPECT_THAT(channel_->Read(owner_->RegionFor(0, 100), reader_arena_->base(), Deadline()),
              HasErrorCode(ErrorCode::kPermissionDenied));
  EXPECT_TRUE(channel_->healthy());
  handler_.set_allow_reads(true);
  ReadAndVerify(0, 100, 0);
}

TEST_F(TcpTransportTest, ReadOutsideTheOwnersArenaIsRefused) {
  uint8_t* dst = reader_arena_->base();
  EXPECT_THAT(channel_->Read(owner_->RegionFor(kArenaBytes - 10, 11), dst, Deadline()),
              HasErrorCode(ErrorCode::kInvalidArgument));
  EXPECT_THAT(channel_->Read(RemoteRegion{UINT64_MAX - 5, 10, 0}, dst, Deadline()),
              HasErrorCode(ErrorCode::kInvalidArgument));
  EXPECT_EQ(handler_.allow_read_calls(), 0) << "bounds are checked before the handler is asked";
  ReadAndVerify(kArenaBytes - 10, 10, 0);
}

TEST_F(TcpTransportTest, ReadIntoMemoryOutsideTheLocalArenaIsRefused) {
  std::vector<uint8_t> outside(16);
  EXPECT_THAT(channel_->Read(owner_->RegionFor(0, 16), outside.data(), Deadline()),
              HasErrorCode(ErrorCode::kInvalidArgument));
  EXPECT_THAT(channel_->Read(owner_->RegionFor(0, 16), reader_arena_->base() + kArenaBytes - 8, Deadline()),
              HasErrorCode(ErrorCode::kInvalidArgument));
}

TEST_F(TcpTransportTest, ManyThreadsShareOneChannel) {
  constexpr int kThreads = 8;
  constexpr int kOpsPerThread = 40;
  constexpr uint64_t kSlot = 256 << 10;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      uint8_t* dst = reader_arena_->base() + t * kSlot;
      for (int i = 0; i < kOpsPerThread; ++i) {
        if (i % 2 == 0) {
          std::string request = absl::StrCat("t", t, "-", i, std::string(i * 997, 'z'));
          absl::StatusOr<std::string> reply = channel_->Call(request, Deadline());
          if (!reply.ok() || *reply != "echo:" + request) failures++;
        } else {
          uint64_t offset = static_cast<uint64_t>(t) * 1000003 + i * 17;
          uint64_t length = 1 + (static_cast<uint64_t>(i) * 7919) % kSlot;
          if (!channel_->Read(owner_->RegionFor(offset, length), dst, Deadline()).ok()) {
            failures++;
            continue;
          }
          for (uint64_t k = 0; k < length; ++k) {
            if (dst[k] != owner_arena_->base()[offset + k]) {
              failures++;
              break;
            }
          }
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_TRUE(channel_->healthy());
  EXPECT_EQ(handler_.connect_count(), 1u);
}

TEST_F(TcpTransportTest, AWaiterTakesOverReadingOnceTheLeaderHasItsReply) {
  // The first caller leads (reads the socket) while the owner sleeps; the second waits behind it.
  // The owner answers in order, so the leader's reply comes first and it leaves: the waiter must
  // then read its own reply.
  absl::StatusOr<std::string> first, second;
  std::thread leader([&] { first = channel_->Call("sleep:200", Deadline()); });
  ASSERT_TRUE(WaitFor([&] { return handler_.calls() >= 1; }, absl::Seconds(5)));
  std::thread waiter([&] { second = channel_->Call("after", Deadline()); });
  leader.join();
  waiter.join();
  ASSERT_OK(first.status());
  ASSERT_OK(second.status());
  EXPECT_EQ(*first, "slept");
  EXPECT_EQ(*second, "echo:after");
  EXPECT_TRUE(channel_->healthy());
  EXPECT_THAT(channel_->Call("again", Deadline()), IsOk());
}

TEST_F(TcpTransportTest, ALeaderWhoseDeadlinePassesAbandonsOnlyItsOwnCall) {
  // The owner answers in order: the hasty call's reply (after 1 s) comes before the patient's.
  absl::StatusOr<std::string> hasty, patient;
  const absl::Time start = absl::Now();
  std::thread leader([&] { hasty = channel_->Call("sleep:1000", absl::Now() + absl::Milliseconds(50)); });
  ASSERT_TRUE(WaitFor([&] { return handler_.calls() >= 1; }, absl::Seconds(5)));
  std::thread waiter([&] { patient = channel_->Call("patient", Deadline()); });
  leader.join();
  EXPECT_THAT(hasty, HasErrorCode(ErrorCode::kDeadlineExceeded));
  EXPECT_LT(absl::Now() - start, absl::Milliseconds(700)) << "the hasty call waited past its deadline";
  waiter.join();
  ASSERT_OK(patient.status()) << "one call's deadline must not fail the others on the channel";
  EXPECT_EQ(*patient, "echo:patient") << "the late reply of the hasty call was not discarded";
  EXPECT_TRUE(channel_->healthy());
  ASSERT_OK_AND_ASSIGN(auto again, reader_->Connect(address_, Deadline()));
  EXPECT_EQ(again.get(), channel_.get()) << "the channel was replaced";
  EXPECT_THAT(channel_->Call("later", Deadline()), IsOk());
  EXPECT_EQ(reader_->stats()["reconnects"], 0u);
  EXPECT_EQ(reader_->stats()["rx_messages"], 3u) << "the late reply is read and counted";
}

TEST_F(TcpTransportTest, AReadWhoseDeadlinePassesAbandonsOnlyItselfAndItsLateBytesNeverLand) {
  constexpr uint64_t kLength = 1 << 20;
  uint8_t* hasty_dst = reader_arena_->base();
  uint8_t* patient_dst = reader_arena_->base() + (8 << 20);
  std::memset(hasty_dst, 0xAB, kLength);
  handler_.DelayNextReads(1, absl::Seconds(1));
  absl::Status hasty, patient;
  const absl::Time start = absl::Now();
  std::thread leader(
      [&] { hasty = channel_->Read(owner_->RegionFor(0, kLength), hasty_dst, absl::Now() + absl::Milliseconds(50)); });
  ASSERT_TRUE(WaitFor([&] { return handler_.allow_read_calls() >= 1; }, absl::Seconds(5)));
  std::thread waiter([&] { patient = channel_->Read(owner_->RegionFor(4 << 20, kLength), patient_dst, Deadline()); });
  leader.join();
  EXPECT_THAT(hasty, HasErrorCode(ErrorCode::kDeadlineExceeded));
  EXPECT_LT(absl::Now() - start, absl::Milliseconds(700)) << "the hasty read waited past its deadline";
  waiter.join();
  ASSERT_OK(patient) << "one read's deadline must not fail the others on the channel";
  for (uint64_t i = 0; i < kLength; ++i) {
    ASSERT_EQ(patient_dst[i], owner_arena_->base()[(4 << 20) + i]) << "byte " << i;
  }
  // Calls are answered in order: once this one is in, the late reply has been read (and dropped).
  EXPECT_THAT(channel_->Call("after", Deadline()), IsOk());
  EXPECT_EQ(reader_->stats()["rx_messages"], 3u);
  for (uint64_t i = 0; i < kLength; ++i) {
    ASSERT_EQ(hasty_dst[i], 0xAB) << "the late reply was written into the abandoned destination at byte " << i;
  }
  EXPECT_TRUE(channel_->healthy());
  ReadAndVerify(0, kLength, 0);
}

TEST_F(TcpTransportTest, AnIdleChannelTurnsUnhealthyWhenTheOwnerGoesAway) {
  ASSERT_OK(channel_->Call("before", Deadline()).status());
  EXPECT_TRUE(channel_->healthy());
  owner_->Shutdown();
  EXPECT_TRUE(WaitFor([&] { return !channel_->healthy(); }, absl::Seconds(5)))
      << "no request is pending: the channel itself notices the closed connection";
  EXPECT_THAT(reader_->Connect(address_, Deadline()), HasErrorCode(ErrorCode::kUnavailable))
      << "the dead channel is not handed out again";
}

TEST_F(TcpTransportTest, StatsCountMessagesBytesAndConnections) {
  ASSERT_OK(channel_->Call("x", Deadline()).status());
  ReadAndVerify(0, 1000, 0);
  TransportStats s = reader_->stats();
  EXPECT_EQ(s["tx_messages"], 2u);
  EXPECT_EQ(s["rx_messages"], 2u);
  EXPECT_EQ(s["reads"], 1u);
  EXPECT_EQ(s["read_bytes"], 1000u);
  EXPECT_EQ(s["connections"], 1u);
  EXPECT_GE(s["rx_bytes"], 1000u + 6u);
  EXPECT_EQ(s["errors"], 0u);
  EXPECT_TRUE(WaitFor([&] { return owner_->stats()["connections"] == 1; }, absl::Seconds(5)));
  EXPECT_TRUE(WaitFor([&] { return owner_->stats()["tx_messages"] == 2; }, absl::Seconds(5)));
}

TEST_F(TcpTransportTest, OnDisconnectRunsOnceWhenTheReaderGoesAway) {
  ASSERT_OK_AND_ASSIGN(auto second, TcpTransport::Create(OptionsWithSecret("shared")));
  ASSERT_OK_AND_ASSIGN(auto ch, second->Connect(address_, Deadline()));
  ASSERT_OK(ch->Call("hi", Deadline()).status());
  EXPECT_TRUE(WaitFor([&] { return handler_.connect_count() == 2; }, absl::Seconds(5)));
  second->Shutdown();
  EXPECT_FALSE(ch->healthy());
  EXPECT_THAT(ch->Call("late", Deadline()), HasErrorCode(ErrorCode::kUnavailable));
  EXPECT_TRUE(WaitFor([&] { return handler_.disconnect_count() == 1; }, absl::Seconds(5)));
  EXPECT_TRUE(WaitFor([&] { return owner_->server_connection_count() == 1; }, absl::Seconds(5)))
      << "the finished connection is reaped";
  EXPECT_THAT(channel_->Call("first channel unaffected", Deadline()), IsOk());
}

TEST_F(TcpTransportTest, OwnerShutdownFailsPendingRequestsPromptly) {
  absl::Time start = absl::Now();
  std::thread stopper([&] {
    absl::SleepFor(absl::Milliseconds(100));
    owner_->Shutdown();  // joins the serving thread, which is inside a 1.5 s HandleCall
  });
  absl::StatusOr<std::string> reply = channel_->Call("sleep:1500", Deadline());
  absl::Duration took = absl::Now() - start;
  stopper.join();
  EXPECT_THAT(reply, HasErrorCode(ErrorCode::kUnavailable));
  EXPECT_LT(took, absl::Milliseconds(1400)) << "the failure arrives with the FIN, not after the handler";
  EXPECT_FALSE(channel_->healthy());
  EXPECT_EQ(handler_.disconnect_count(), 1u);
}

TEST_F(TcpTransportTest, UnhealthyChannelIsReplacedOnConnect) {
  TcpTuning tuning;
  tuning.dead_peer_timeout = absl::Seconds(1);
  ASSERT_OK_AND_ASSIGN(auto second, TcpTransport::Create(OptionsWithSecret("shared"), tuning));
  ASSERT_OK_AND_ASSIGN(auto first, second->Connect(address_, Deadline()));
  // The call gives up at once; its reply is due after 2 s, so for 1 s the channel's only
  // outstanding request sees no reply byte: the channel is stalled.
  EXPECT_THAT(first->Call("sleep:2000", absl::Now() + absl::Milliseconds(50)),
              HasErrorCode(ErrorCode::kDeadlineExceeded));
  EXPECT_TRUE(first->healthy()) << "one expired call does not close the channel";
  EXPECT_TRUE(WaitFor([&] { return !first->healthy(); }, absl::Seconds(5)));
  ASSERT_OK_AND_ASSIGN(auto replacement, second->Connect(address_, Deadline()));
  EXPECT_NE(replacement.get(), first.get());
  EXPECT_THAT(replacement->Call("again", Deadline()), IsOk());
  EXPECT_EQ(second->stats()["reconnects"], 1u);
}

// A channel whose replies are overdue is retired for new requests long before the dead-peer
// timeout closes it: the request in flight keeps its channel and gets its reply.
TEST_F(TcpTransportTest, SilentChannelIsRetiredForNewRequestsButServesTheOneInFlight) {
  TcpTuning tuning;
  tuning.dead_peer_timeout = absl::Seconds(30);
  tuning.retire_stalled_after = absl::Milliseconds(300);
  ASSERT_OK_AND_ASSIGN(auto second, TcpTransport::Create(OptionsWithSecret("shared"), tuning));
  ASSERT_OK_AND_ASSIGN(auto first, second->Connect(address_, Deadline()));
  const absl::Time start = absl::Now();
  absl::StatusOr<std::string> slow;
  std::thread in_flight([&] { slow = first->Call("sleep:1500", absl::Now() + absl::Seconds(10)); });
  EXPECT_TRUE(WaitFor([&] { return !first->healthy(); }, absl::Seconds(5)));
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(290)) << "retired before retire_stalled_after";
  ASSERT_OK_AND_ASSIGN(auto replacement, second->Connect(address_, Deadline()));
  EXPECT_NE(replacement.get(), first.get());
  EXPECT_THAT(replacement->Call("again", Deadline()), IsOk());
  in_flight.join();
  EXPECT_THAT(slow, IsOk()) << "the retired channel still delivers the reply in flight";
  EXPECT_TRUE(first->healthy()) << "no reply is overdue any more";
  EXPECT_EQ(second->stats()["reconnects"], 1u);
}

// A reply nobody reads (its caller left at the deadline) is not a silent peer.
TEST_F(TcpTransportTest, UnreadReplyOfAnAbandonedCallKeepsTheChannelHealthy) {
  TcpTuning tuning;
  tuning.retire_stalled_after = absl::Milliseconds(300);
  ASSERT_OK_AND_ASSIGN(auto second, TcpTransport::Create(OptionsWithSecret("shared"), tuning));
  ASSERT_OK_AND_ASSIGN(auto channel, second->Connect(address_, Deadline()));
  EXPECT_THAT(channel->Call("sleep:200", absl::Now() + absl::Milliseconds(20)),
              HasErrorCode(ErrorCode::kDeadlineExceeded));
  absl::SleepFor(absl::Milliseconds(600));  // the reply came at 200 ms and waits unread
  EXPECT_TRUE(channel->healthy());
  ASSERT_OK_AND_ASSIGN(auto same, second->Connect(address_, Deadline()));
  EXPECT_EQ(same.get(), channel.get());
  EXPECT_THAT(channel->Call("next", Deadline()), IsOk());
}

TEST_F(TcpTransportTest, PrivateChannelIsANewConnectionEachTimeClosedOnReleaseAndByShutdown) {
  ASSERT_OK_AND_ASSIGN(auto second, TcpTransport::Create(OptionsWithSecret("shared"), {}));
  ASSERT_OK_AND_ASSIGN(auto shared, second->Connect(address_, Deadline()));
  ASSERT_OK_AND_ASSIGN(auto mine, second->ConnectPrivate(address_, Deadline()));
  ASSERT_OK_AND_ASSIGN(auto another, second->ConnectPrivate(address_, Deadline()));
  EXPECT_NE(mine.get(), shared.get());
  EXPECT_NE(mine.get(), another.get());
  EXPECT_THAT(mine->Call("private", Deadline()), IsOk());
  EXPECT_EQ(second->stats()["connections"], 3u);
  ASSERT_OK_AND_ASSIGN(auto again, second->Connect(address_, Deadline()));
  EXPECT_EQ(again.get(), shared.get()) << "private channels are not cached";
  another.reset();
  EXPECT_EQ(second->stats()["connections"], 2u) << "closed when its last holder let go";
  second->Shutdown();
  EXPECT_FALSE(mine->healthy()) << "Shutdown closes a private channel still held";
  EXPECT_THAT(mine->Call("late", Deadline()), HasErrorCode(ErrorCode::kUnavailable));
  EXPECT_THAT(second->ConnectPrivate(address_, Deadline()), HasErrorCode(ErrorCode::kUnavailable));
}

TEST(TcpTuningTest, RetireStalledAfterIsBounded) {
  TcpTuning tuning;
  EXPECT_OK(tuning.Validate());
  tuning.retire_stalled_after = absl::Milliseconds(1);
  EXPECT_THAT(tuning.Validate(), HasErrorCode(ErrorCode::kInvalidArgument));
}

TEST_F(TcpTransportTest, RequestWhoseDeadlinePassedBeforeSendingLeavesTheChannelHealthy) {
  EXPECT_THAT(channel_->Call("never sent", absl::Now() - absl::Seconds(1)), HasErrorCode(ErrorCode::kDeadlineExceeded));
  EXPECT_TRUE(channel_->healthy());
  EXPECT_EQ(handler_.calls(), 0);
  EXPECT_THAT(channel_->Call("sent", Deadline()), IsOk());
}

TEST_F(TcpTransportTest, ShutdownIsIdempotentAndRefusesLaterUse) {
  reader_->Shutdown();
  reader_->Shutdown();
  EXPECT_THAT(reader_->Connect(address_, Deadline()), HasErrorCode(ErrorCode::kUnavailable));
  EXPECT_THAT(channel_->Call("x", Deadline()), HasErrorCode(ErrorCode::kUnavailable));
  EXPECT_EQ(reader_->stats()["connections"], 0u);
}

TEST(TcpTransportCreateTest, RegisterArenaOnceAndListenOnce) {
  FakeRequestHandler handler;
  ASSERT_OK_AND_ASSIGN(auto t, TcpTransport::Create(OptionsWithSecret("s")));
  TestArena arena(4096);
  EXPECT_THAT(t->RegisterArena(nullptr, 10), HasErrorCode(ErrorCode::kInvalidArgument));
  ASSERT_OK(t->RegisterArena(arena.base(), arena.size()));
  EXPECT_FALSE(t->RegisterArena(arena.base(), arena.size()).ok());
  ASSERT_OK(t->Listen("127.0.0.1:0", &handler).status());
  EXPECT_FALSE(t->Listen("127.0.0.1:0", &handler).ok());
  ASSERT_OK_AND_ASSIGN(auto fresh, TcpTransport::Create(OptionsWithSecret("s")));
  EXPECT_THAT(fresh->Listen("nonsense", &handler), HasErrorCode(ErrorCode::kInvalidArgument));
  EXPECT_THAT(fresh->Listen("127.0.0.1:0", nullptr), HasErrorCode(ErrorCode::kInvalidArgument));
}

TEST(TcpTransportCreateTest, InvalidOptionsAreRefused) {
  TransportOptions o = OptionsWithSecret("s");
  o.connect_timeout = absl::ZeroDuration();
  EXPECT_THAT(TcpTransport::Create(o), HasErrorCode(ErrorCode::kInvalidArgument));
}

TEST(TcpTransportCreateTest, InvalidTuningIsRefused) {
  TcpTuning tuning;
  tuning.socket_buffer_bytes = 100;
  EXPECT_THAT(TcpTransport::Create(OptionsWithSecret("s"), tuning), HasErrorCode(ErrorCode::kInvalidArgument));
  tuning = TcpTuning{};
  tuning.dead_peer_timeout = absl::Milliseconds(10);
  EXPECT_THAT(TcpTransport::Create(OptionsWithSecret("s"), tuning), HasErrorCode(ErrorCode::kInvalidArgument));
  for (const char* name : {"Cubic", "cubic\n", "a_name_too_long_x", "../bbr"}) {
    tuning = TcpTuning{};
    tuning.congestion_control = name;
    EXPECT_THAT(TcpTransport::Create(OptionsWithSecret("s"), tuning), HasErrorCode(ErrorCode::kInvalidArgument))
        << name;
  }
  tuning.congestion_control = "";  // the system's default
  EXPECT_OK(TcpTransport::Create(OptionsWithSecret("s"), tuning).status());
}

TEST(TcpTransportCreateTest, FixedSocketBuffersStillMoveEveryByte) {
  FakeRequestHandler handler;
  TcpTuning tuning;
  tuning.socket_buffer_bytes = 256 << 10;
  TestArena owner_arena(4 << 20), reader_arena(4 << 20);
  owner_arena.Fill(11);
  ASSERT_OK_AND_ASSIGN(auto owner, TcpTransport::Create(OptionsWithSecret("s"), tuning));
  ASSERT_OK(owner->RegisterArena(owner_arena.base(), owner_arena.size()));
  ASSERT_OK_AND_ASSIGN(std::string address, owner->Listen("127.0.0.1:0", &handler));
  ASSERT_OK_AND_ASSIGN(auto reader, TcpTransport::Create(OptionsWithSecret("s"), tuning));
  ASSERT_OK(reader->RegisterArena(reader_arena.base(), reader_arena.size()));
  ASSERT_OK_AND_ASSIGN(auto ch, reader->Connect(address, Deadline()));
  ASSERT_OK(ch->Read(owner->RegionFor(0, 4 << 20), reader_arena.base(), Deadline()));
  EXPECT_EQ(std::memcmp(owner_arena.base(), reader_arena.base(), 4 << 20), 0);
}

TEST(TcpTransportCreateTest, EmptySecretRefusesEveryPeer) {
  FakeRequestHandler handler;
  ASSERT_OK_AND_ASSIGN(auto owner, TcpTransport::Create(OptionsWithSecret("")));
  ASSERT_OK_AND_ASSIGN(std::string address, owner->Listen("127.0.0.1:0", &handler));
  ASSERT_OK_AND_ASSIGN(auto reader, TcpTransport::Create(OptionsWithSecret("x")));
  EXPECT_FALSE(reader->Connect(address, Deadline()).ok());
  EXPECT_EQ(handler.connect_count(), 0u);
}

}  // namespace
}  // namespace rplasma::transport::tcp
