// Pure parts of the verbs transport, testable without a device: message/private-data encoding,
// one-time tickets, READ chunking arithmetic.
#include "manager/transport/verbs/wire_format.h"

#include <vector>

#include <gtest/gtest.h>

#include "manager/transport/transport.h"
#include "manager/transport/verbs/message_ring.h"
#include "manager/transport/verbs/read_plan.h"
#include "manager/transport/verbs/ticket_book.h"
#include "tests/support/status_matchers.h"

namespace rplasma::transport::verbs {
namespace {

using ::rplasma::testing::HasErrorCode;

std::vector<uint8_t> Message(const MessageHeader& h, size_t payload) {
  std::vector<uint8_t> m(kMessageHeaderBytes + payload, 0xab);
  EncodeMessageHeader(h, m.data());
  return m;
}

TEST(VerbsWireFormatTest, MessageHeaderRoundTrips) {
  MessageHeader h{MessageType::kResponse, kFlagError, 7, 0x1122334455667788ull, 1000, 900};
  auto m = Message(h, 100);
  ASSERT_OK_AND_ASSIGN(MessageHeader d, DecodeMessageHeader(m, kMaxCallBytes));
  EXPECT_EQ(d.type, MessageType::kResponse);
  EXPECT_EQ(d.flags, kFlagError);
  EXPECT_EQ(d.credits, 7u);
  EXPECT_EQ(d.request_id, 0x1122334455667788ull);
  EXPECT_EQ(d.total_length, 1000u);
  EXPECT_EQ(d.offset, 900u);
}

TEST(VerbsWireFormatTest, FragmentOutsideItsMessageIsRejected) {
  MessageHeader h{MessageType::kRequest, 0, 0, 1, 1000, 950};
  EXPECT_THAT(DecodeMessageHeader(Message(h, 100), kMaxCallBytes), HasErrorCode(ErrorCode::kProtocolError));
}

TEST(VerbsWireFormatTest, MessageAboveTheCallLimitIsRejectedBeforeAllocation) {
  MessageHeader h{MessageType::kRequest, 0, 0, 1, kMaxCallBytes + 1, 0};
  EXPECT_THAT(DecodeMessageHeader(Message(h, 10), kMaxCallBytes), HasErrorCode(ErrorCode::kProtocolError));
}

TEST(VerbsWireFormatTest, CreditUpdateWithPayloadIsRejected) {
  MessageHeader h{MessageType::kCredit, 0, 3, 0, 0, 0};
  EXPECT_OK(DecodeMessageHeader(Message(h, 0), kMaxCallBytes));
  EXPECT_THAT(DecodeMessageHeader(Message(h, 1), kMaxCallBytes), HasErrorCode(ErrorCode::kProtocolError));
}

TEST(VerbsWireFormatTest, GarbageAndShortMessagesAreRejected) {
  std::vector<uint8_t> junk(64, 0x5a);
  EXPECT_THAT(DecodeMessageHeader(junk, kMaxCallBytes), HasErrorCode(ErrorCode::kProtocolError));
  EXPECT_THAT(DecodeMessageHeader(absl::Span<const uint8_t>(junk.data(), 10), kMaxCallBytes),
              HasErrorCode(ErrorCode::kProtocolError));
  MessageHeader h{MessageType::kRequest, 0, 0, 1, 10, 0};
  auto m = Message(h, 10);
  m[2] = 9;  // unknown type
  EXPECT_THAT(DecodeMessageHeader(m, kMaxCallBytes), HasErrorCode(ErrorCode::kProtocolError));
}

TEST(VerbsWireFormatTest, ConnectDataRoundTripsAndFitsRcPrivateData) {
  ConnectData c;
  c.recv_credits = 64;
  c.message_bytes = 65536;
  for (size_t i = 0; i < kTicketBytes; ++i) c.ticket[i] = static_cast<uint8_t>(i * 7);
  auto bytes = EncodeConnectData(c);
  EXPECT_LE(bytes.size(), 56u);
  std::vector<uint8_t> padded(bytes.begin(), bytes.end());
  padded.resize(56, 0);  // rdma_cm hands the passive side zero-padded private data
  ASSERT_OK_AND_ASSIGN(ConnectData d, DecodeConnectData(padded));
  EXPECT_EQ(d.recv_credits, 64u);
  EXPECT_EQ(d.message_bytes, 65536u);
  EXPECT_EQ(d.ticket, c.ticket);
}

TEST(VerbsWireFormatTest, MissingOrHostileConnectDataIsRejected) {
  EXPECT_THAT(DecodeConnectData({}), HasErrorCode(ErrorCode::kProtocolError));
  ConnectData c;
  c.recv_credits = 0;  // would deadlock the sender
  c.message_bytes = 65536;
  EXPECT_THAT(DecodeConnectData(EncodeConnectData(c)), HasErrorCode(ErrorCode::kProtocolError));
  c.recv_credits = 8;
  c.message_bytes = 100;  // below the header + minimum fragment
  EXPECT_THAT(DecodeConnectData(EncodeConnectData(c)), HasErrorCode(ErrorCode::kProtocolError));
}

TEST(VerbsWireFormatTest, AcceptDataRoundTrips) {
  AcceptData a{32, 8192, 16};
  ASSERT_OK_AND_ASSIGN(AcceptData d, DecodeAcceptData(EncodeAcceptData(a)));
  EXPECT_EQ(d.recv_credits, 32u);
  EXPECT_EQ(d.message_bytes, 8192u);
  EXPECT_EQ(d.responder_resources, 16);
}

TEST(VerbsTicketBookTest, TicketIsValidExactlyOnce) {
  TicketBook book(absl::Seconds(10), 16);
  absl::Time now = absl::Now();
  Ticket t = book.Issue(now);
  EXPECT_TRUE(book.Redeem(t, now));
  EXPECT_FALSE(book.Redeem(t, now));  // replay
}

TEST(VerbsTicketBookTest, ExpiredOrUnknownTicketIsRefused) {
  TicketBook book(absl::Seconds(10), 16);
  absl::Time now = absl::Now();
  Ticket t = book.Issue(now);
  EXPECT_FALSE(book.Redeem(t, now + absl::Seconds(11)));
  Ticket forged{};
  EXPECT_FALSE(book.Redeem(forged, now));
}

TEST(VerbsTicketBookTest, FloodOfTicketsStaysWithinCapacity) {
  TicketBook book(absl::Seconds(10), 4);
  absl::Time now = absl::Now();
  Ticket first = book.Issue(now);
  for (int i = 0; i < 100; ++i) book.Issue(now);
  EXPECT_LE(book.outstanding(), 4u);
  EXPECT_FALSE(book.Redeem(first, now));  // the oldest were dropped
}

TEST(VerbsReadPlanTest, ChunkRespectsThePortMessageLimit) {
  EXPECT_EQ(ReadChunkBytes(1 << 20, 1u << 31), 1u << 20);
  EXPECT_EQ(ReadChunkBytes(1 << 20, 65536), 65536u);
  EXPECT_EQ(ReadChunkCount(0, 4096), 0u);
  EXPECT_EQ(ReadChunkCount(4097, 4096), 2u);
}

TEST(VerbsReadPlanTest, WindowIsTheSmallestOfOptionDeviceAndPeer) {
  EXPECT_EQ(ReadWindow(16, 128, 128), 16u);
  EXPECT_EQ(ReadWindow(16, 8, 128), 8u);
  EXPECT_EQ(ReadWindow(16, 128, 4), 4u);
  EXPECT_EQ(ReadWindow(16, 128, 0), 1u);  // never zero: a Read must make progress
}

TEST(VerbsMessageRingTest, CreditUpdatesInFlightAlwaysFindABuffer) {
  // At most kCreditReturnDivisor updates can be unreceived at once (see message_ring.h).
  EXPECT_GT(kControlBuffers, kCreditReturnDivisor);
  EXPECT_EQ(WrKindOf(MakeWrId(WrKind::kRead, 12345)), WrKind::kRead);
  EXPECT_EQ(WrValueOf(MakeWrId(WrKind::kRead, 12345)), 12345u);
}

}  // namespace
}  // namespace rplasma::transport::verbs
