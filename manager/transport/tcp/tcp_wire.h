// The tcp transport's message header, sent after the peer-auth handshake on every connection.
//
// Every message is a 24-byte header, little-endian, followed by `length` payload bytes:
//
//   offset  0  uint16 version     kTcpWireVersion
//   offset  2  uint8  kind        TcpKind below
//   offset  3  uint8  reserved    must be 0
//   offset  4  uint32 status      kError: the rplasma ErrorCode; otherwise 0
//   offset  8  uint64 request_id  chosen by the requester, echoed in the reply
//   offset 16  uint64 length      payload bytes
//
//   kind          direction         payload                          length limit
//   kCall         reader -> owner   request bytes                    kMaxCallBytes
//   kRead         reader -> owner   uint64 arena offset, uint64 len  exactly 16
//   kCallReply    owner -> reader   reply bytes                      kMaxCallBytes
//   kReadData     owner -> reader   the region's bytes, raw          the requested length
//   kError        owner -> reader   error message (UTF-8)            kMaxErrorBytes
//
// Headers are validated (version, reserved, kind for the direction, length cap) before any payload
// memory is allocated. Pure encode/parse; no I/O.
#ifndef RPLASMA_MANAGER_TRANSPORT_TCP_TCP_WIRE_H_
#define RPLASMA_MANAGER_TRANSPORT_TCP_TCP_WIRE_H_

#include <cstddef>
#include <cstdint>

#include "absl/status/statusor.h"

namespace rplasma::transport::tcp {

inline constexpr uint16_t kTcpWireVersion = 1;
inline constexpr size_t kTcpHeaderBytes = 24;
inline constexpr size_t kReadRequestBytes = 16;
inline constexpr uint64_t kMaxErrorBytes = 4096;

enum class TcpKind : uint8_t {
  kCall = 1,
  kRead = 2,
  kCallReply = 3,
  kReadData = 4,
  kError = 5,
};

struct TcpHeader {
  TcpKind kind = TcpKind::kCall;
  uint32_t status = 0;
  uint64_t request_id = 0;
  uint64_t length = 0;
};

// Which end parses: a request (owner side) or a reply (reader side).
enum class TcpDirection { kRequest, kReply };

void EncodeTcpHeader(const TcpHeader& header, uint8_t out[kTcpHeaderBytes]);
// kProtocolError on a bad version, reserved bits, a kind not valid in `direction`, or a length
// above the kind's limit (kReadData's length is checked by the reader against its request).
absl::StatusOr<TcpHeader> ParseTcpHeader(const uint8_t in[kTcpHeaderBytes], TcpDirection direction);

void EncodeReadRequest(uint64_t offset, uint64_t length, uint8_t out[kReadRequestBytes]);
void DecodeReadRequest(const uint8_t in[kReadRequestBytes], uint64_t* offset, uint64_t* length);

}  // namespace rplasma::transport::tcp

#endif  // RPLASMA_MANAGER_TRANSPORT_TCP_TCP_WIRE_H_
