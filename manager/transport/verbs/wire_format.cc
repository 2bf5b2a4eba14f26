#include "manager/transport/verbs/wire_format.h"

#include <cstring>

#include "absl/strings/str_format.h"

#include "protocol/base/status.h"

namespace rplasma::transport::verbs {
namespace {

constexpr uint32_t kConnectMagic = 0x43565052;  // "RPVC"
constexpr uint32_t kAcceptMagic = 0x41565052;   // "RPVA"
// Bounds on what a peer may announce: enough for any sane configuration, small enough that a
// hostile value cannot make us size queues absurdly.
constexpr uint32_t kMaxAnnouncedCredits = 1u << 16;
constexpr uint32_t kMinMessageBytes = 4096;
constexpr uint32_t kMaxMessageBytes = 16u << 20;

void Put16(uint8_t* p, uint16_t v) {
  for (int i = 0; i < 2; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
void Put32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
void Put64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
uint16_t Get16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }
uint32_t Get32(const uint8_t* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}
uint64_t Get64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

absl::Status CheckPeerQueue(uint32_t credits, uint32_t message_bytes) {
  if (credits < 1 || credits > kMaxAnnouncedCredits) {
    return ProtocolError(absl::StrFormat("verbs peer announced %u receive credits", credits));
  }
  if (message_bytes < kMinMessageBytes || message_bytes > kMaxMessageBytes) {
    return ProtocolError(absl::StrFormat("verbs peer announced %u-byte messages", message_bytes));
  }
  return absl::OkStatus();
}

}  // namespace

void EncodeMessageHeader(const MessageHeader& h, uint8_t out[kMessageHeaderBytes]) {
  Put16(out, kMessageMagic);
  out[2] = static_cast<uint8_t>(h.type);
  out[3] = h.flags;
  Put32(out + 4, h.credits);
  Put64(out + 8, h.request_id);
  Put64(out + 16, h.total_length);
  Put64(out + 24, h.offset);
}

absl::StatusOr<MessageHeader> DecodeMessageHeader(absl::Span<const uint8_t> message, uint64_t max_message_bytes) {
  if (message.size() < kMessageHeaderBytes) {
    return ProtocolError(absl::StrFormat("verbs message of %u bytes is shorter than its header", message.size()));
  }
  const uint8_t* p = message.data();
  if (Get16(p) != kMessageMagic) return ProtocolError("verbs message: bad magic");
  MessageHeader h;
  uint8_t type = p[2];
  if (type < 1 || type > 3) return ProtocolError(absl::StrFormat("verbs message: unknown type %u", type));
  h.type = static_cast<MessageType>(type);
  h.flags = p[3];
  h.credits = Get32(p + 4);
  h.request_id = Get64(p + 8);
  h.total_length = Get64(p + 16);
  h.offset = Get64(p + 24);
  uint64_t payload = message.size() - kMessageHeaderBytes;
  if (h.type == MessageType::kCredit) {
    if (payload != 0 || h.total_length != 0 || h.offset != 0 || h.flags != 0) {
      return ProtocolError("verbs credit update carries data");
    }
    return h;
  }
  if ((h.flags & ~kFlagError) != 0) return ProtocolError("verbs message: unknown flags");
  if (h.type == MessageType::kRequest && h.flags != 0) return ProtocolError("verbs request with flags");
  if (h.total_length > max_message_bytes) {
    return ProtocolError(
        absl::StrFormat("verbs message of %u bytes exceeds the %u-byte limit", h.total_length, max_message_bytes));
  }
  if (h.offset > h.total_length || payload > h.total_length - h.offset) {
    return ProtocolError("verbs message fragment lies outside its message");
  }
  if (payload == 0 && h.total_length != 0) return ProtocolError("verbs message: empty fragment");
  return h;
}

std::array<uint8_t, kConnectDataBytes> EncodeConnectData(const ConnectData& d) {
  std::array<uint8_t, kConnectDataBytes> out{};
  Put32(out.data(), kConnectMagic);
  Put16(out.data() + 4, kWireVersion);
  Put32(out.data() + 8, d.recv_credits);
  Put32(out.data() + 12, d.message_bytes);
  std::memcpy(out.data() + 16, d.ticket.data(), kTicketBytes);
  return out;
}

absl::StatusOr<ConnectData> DecodeConnectData(absl::Span<const uint8_t> b) {
  if (b.size() < kConnectDataBytes) return ProtocolError("verbs connect request without rplasma private data");
  if (Get32(b.data()) != kConnectMagic) return ProtocolError("verbs connect request: bad magic");
  if (Get16(b.data() + 4) != kWireVersion) return ProtocolError("verbs connect request: unsupported version");
  ConnectData d;
  d.recv_credits = Get32(b.data() + 8);
  d.message_bytes = Get32(b.data() + 12);
  RETURN_IF_ERROR(CheckPeerQueue(d.recv_credits, d.message_bytes));
  std::memcpy(d.ticket.data(), b.data() + 16, kTicketBytes);
  return d;
}

std::array<uint8_t, kAcceptDataBytes> EncodeAcceptData(const AcceptData& d) {
  std::array<uint8_t, kAcceptDataBytes> out{};
  Put32(out.data(), kAcceptMagic);
  Put16(out.data() + 4, kWireVersion);
  Put32(out.data() + 8, d.recv_credits);
  Put32(out.data() + 12, d.message_bytes);
  out[16] = d.responder_resources;
  return out;
}

absl::StatusOr<AcceptData> DecodeAcceptData(absl::Span<const uint8_t> b) {
  if (b.size() < kAcceptDataBytes) return ProtocolError("verbs accept without rplasma private data");
  if (Get32(b.data()) != kAcceptMagic) return ProtocolError("verbs accept: bad magic");
  if (Get16(b.data() + 4) != kWireVersion) return ProtocolError("verbs accept: unsupported version");
  AcceptData d;
  d.recv_credits = Get32(b.data() + 8);
  d.message_bytes = Get32(b.data() + 12);
  d.responder_resources = b[16];
  RETURN_IF_ERROR(CheckPeerQueue(d.recv_credits, d.message_bytes));
  return d;
}

}  // namespace rplasma::transport::verbs
