#include "manager/transport/tcp/tcp_wire.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "manager/transport/transport.h"
#include "tests/support/status_matchers.h"

namespace rplasma::transport::tcp {
namespace {

using ::rplasma::testing::HasErrorCode;

TEST(TcpWireTest, HeaderRoundTrips) {
  TcpHeader h{TcpKind::kError, 13, 0x0102030405060708ull, 99};
  uint8_t buf[kTcpHeaderBytes];
  EncodeTcpHeader(h, buf);
  EXPECT_EQ(buf[0], 1);  // version, little-endian
  EXPECT_EQ(buf[8], 0x08);
  ASSERT_OK_AND_ASSIGN(TcpHeader back, ParseTcpHeader(buf, TcpDirection::kReply));
  EXPECT_EQ(back.kind, TcpKind::kError);
  EXPECT_EQ(back.status, 13u);
  EXPECT_EQ(back.request_id, h.request_id);
  EXPECT_EQ(back.length, 99u);
}

TEST(TcpWireTest, KindsAreOnlyValidInTheirDirection) {
  uint8_t buf[kTcpHeaderBytes];
  EncodeTcpHeader({TcpKind::kCallReply, 0, 1, 5}, buf);
  EXPECT_THAT(ParseTcpHeader(buf, TcpDirection::kRequest), HasErrorCode(ErrorCode::kProtocolError));
  EncodeTcpHeader({TcpKind::kCall, 0, 1, 5}, buf);
  EXPECT_THAT(ParseTcpHeader(buf, TcpDirection::kReply), HasErrorCode(ErrorCode::kProtocolError));
  EXPECT_OK(ParseTcpHeader(buf, TcpDirection::kRequest).status());
  buf[2] = 77;
  EXPECT_THAT(ParseTcpHeader(buf, TcpDirection::kRequest), HasErrorCode(ErrorCode::kProtocolError));
}

TEST(TcpWireTest, LengthsAboveTheCapsAreRefusedBeforeAnyAllocation) {
  uint8_t buf[kTcpHeaderBytes];
  EncodeTcpHeader({TcpKind::kCall, 0, 1, kMaxCallBytes}, buf);
  EXPECT_OK(ParseTcpHeader(buf, TcpDirection::kRequest).status());
  EncodeTcpHeader({TcpKind::kCall, 0, 1, kMaxCallBytes + 1}, buf);
  EXPECT_THAT(ParseTcpHeader(buf, TcpDirection::kRequest), HasErrorCode(ErrorCode::kProtocolError));
  EncodeTcpHeader({TcpKind::kCallReply, 0, 1, UINT64_MAX}, buf);
  EXPECT_THAT(ParseTcpHeader(buf, TcpDirection::kReply), HasErrorCode(ErrorCode::kProtocolError));
  EncodeTcpHeader({TcpKind::kError, 5, 1, kMaxErrorBytes + 1}, buf);
  EXPECT_THAT(ParseTcpHeader(buf, TcpDirection::kReply), HasErrorCode(ErrorCode::kProtocolError));
  EncodeTcpHeader({TcpKind::kRead, 0, 1, 15}, buf);
  EXPECT_THAT(ParseTcpHeader(buf, TcpDirection::kRequest), HasErrorCode(ErrorCode::kProtocolError));
}

TEST(TcpWireTest, BadVersionReservedBitsOrStrayStatusAreRefused) {
  uint8_t buf[kTcpHeaderBytes];
  EncodeTcpHeader({TcpKind::kCall, 0, 1, 1}, buf);
  buf[0] = 2;
  EXPECT_THAT(ParseTcpHeader(buf, TcpDirection::kRequest), HasErrorCode(ErrorCode::kProtocolError));
  EncodeTcpHeader({TcpKind::kCall, 0, 1, 1}, buf);
  buf[3] = 1;
  EXPECT_THAT(ParseTcpHeader(buf, TcpDirection::kRequest), HasErrorCode(ErrorCode::kProtocolError));
  EncodeTcpHeader({TcpKind::kCall, 4, 1, 1}, buf);
  EXPECT_THAT(ParseTcpHeader(buf, TcpDirection::kRequest), HasErrorCode(ErrorCode::kProtocolError));
}

TEST(TcpWireTest, ReadRequestRoundTrips) {
  uint8_t buf[kReadRequestBytes];
  EncodeReadRequest(UINT64_MAX - 1, 12345, buf);
  uint64_t offset = 0, length = 0;
  DecodeReadRequest(buf, &offset, &length);
  EXPECT_EQ(offset, UINT64_MAX - 1);
  EXPECT_EQ(length, 12345u);
}

}  // namespace
}  // namespace rplasma::transport::tcp
