// Bytes the verbs transport puts on the wire, as pure encode/decode functions (no verbs calls).
//
// 1. Every SEND carries one message fragment: a 32-byte header, then payload bytes.
//
//   offset 0  u16 magic 0x5652 ("RV")  | u8 type | u8 flags
//   offset 4  u32 credits      receive credits the sender returns to the receiver (piggyback)
//   offset 8  u64 request_id   pairs a response with its request; 0 for credit updates
//   offset 16 u64 total_length length of the whole message (<= kMaxCallBytes)
//   offset 24 u64 offset       where this fragment's payload goes in the message
//
//   Fragments of one message may interleave with other messages; the receiver reassembles by
//   (type, request_id). A credit update (type kCredit) has no payload and consumes no credit.
//
// 2. rdma_connect private data (client -> server, 48 bytes, fits the 56-byte RC limit):
//   u32 magic "RPVC" | u16 version | u16 reserved | u32 recv_credits | u32 message_bytes | ticket[32]
// 3. rdma_accept private data (server -> client, 20 bytes):
//   u32 magic "RPVA" | u16 version | u16 reserved | u32 recv_credits | u32 message_bytes
//   | u8 responder_resources | 3 reserved
//
// All integers little-endian. Decoders validate everything: bytes come from the network.
#ifndef RPLASMA_MANAGER_TRANSPORT_VERBS_WIRE_FORMAT_H_
#define RPLASMA_MANAGER_TRANSPORT_VERBS_WIRE_FORMAT_H_

#include <array>
#include <cstddef>
#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace rplasma::transport::verbs {

inline constexpr size_t kMessageHeaderBytes = 32;
inline constexpr uint16_t kMessageMagic = 0x5652;
inline constexpr uint16_t kWireVersion = 1;
inline constexpr size_t kTicketBytes = 32;
inline constexpr size_t kConnectDataBytes = 16 + kTicketBytes;
inline constexpr size_t kAcceptDataBytes = 20;
static_assert(kConnectDataBytes <= 56, "RC rdma_connect private data is limited to 56 bytes");

using Ticket = std::array<uint8_t, kTicketBytes>;

enum class MessageType : uint8_t { kRequest = 1, kResponse = 2, kCredit = 3 };
// Response flag: the payload is an error message from the peer, not a reply.
inline constexpr uint8_t kFlagError = 1;

struct MessageHeader {
  MessageType type = MessageType::kCredit;
  uint8_t flags = 0;
  uint32_t credits = 0;
  uint64_t request_id = 0;
  uint64_t total_length = 0;
  uint64_t offset = 0;
};

void EncodeMessageHeader(const MessageHeader& header, uint8_t out[kMessageHeaderBytes]);
// Parses and validates the header of a received message of `size` bytes (header + payload):
// known type, payload within [offset, total_length], total_length <= max_message_bytes, credit
// updates carry no payload. kProtocolError otherwise.
absl::StatusOr<MessageHeader> DecodeMessageHeader(absl::Span<const uint8_t> message, uint64_t max_message_bytes);

struct ConnectData {
  uint32_t recv_credits = 0;
  uint32_t message_bytes = 0;
  Ticket ticket{};
};
std::array<uint8_t, kConnectDataBytes> EncodeConnectData(const ConnectData& data);
// `bytes` may be longer than kConnectDataBytes (transports pad private data with zeros).
absl::StatusOr<ConnectData> DecodeConnectData(absl::Span<const uint8_t> bytes);

struct AcceptData {
  uint32_t recv_credits = 0;
  uint32_t message_bytes = 0;
  uint8_t responder_resources = 0;
};
std::array<uint8_t, kAcceptDataBytes> EncodeAcceptData(const AcceptData& data);
absl::StatusOr<AcceptData> DecodeAcceptData(absl::Span<const uint8_t> bytes);

}  // namespace rplasma::transport::verbs

#endif  // RPLASMA_MANAGER_TRANSPORT_VERBS_WIRE_FORMAT_H_
