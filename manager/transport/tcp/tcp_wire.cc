#include "manager/transport/tcp/tcp_wire.h"

#include "absl/strings/str_cat.h"

#include "manager/transport/transport.h"
#include "protocol/base/status.h"

namespace rplasma::transport::tcp {
namespace {

void PutLe(uint8_t* p, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
uint64_t GetLe(const uint8_t* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

}  // namespace

void EncodeTcpHeader(const TcpHeader& header, uint8_t out[kTcpHeaderBytes]) {
  PutLe(out, kTcpWireVersion, 2);
  out[2] = static_cast<uint8_t>(header.kind);
  out[3] = 0;
  PutLe(out + 4, header.status, 4);
  PutLe(out + 8, header.request_id, 8);
  PutLe(out + 16, header.length, 8);
}

absl::StatusOr<TcpHeader> ParseTcpHeader(const uint8_t in[kTcpHeaderBytes], TcpDirection direction) {
  uint64_t version = GetLe(in, 2);
  if (version != kTcpWireVersion) {
    return ProtocolError(absl::StrCat("tcp transport: unsupported wire version ", version));
  }
  if (in[3] != 0) return ProtocolError("tcp transport: reserved header bits set");
  TcpHeader h;
  h.status = static_cast<uint32_t>(GetLe(in + 4, 4));
  h.request_id = GetLe(in + 8, 8);
  h.length = GetLe(in + 16, 8);
  uint8_t kind = in[2];
  bool request = direction == TcpDirection::kRequest;
  uint64_t limit = 0;
  switch (kind) {
    case static_cast<uint8_t>(TcpKind::kCall):
      if (!request) break;
      limit = kMaxCallBytes;
      break;
    case static_cast<uint8_t>(TcpKind::kRead):
      if (!request) break;
      if (h.length != kReadRequestBytes) return ProtocolError("tcp transport: read request of wrong size");
      limit = kReadRequestBytes;
      break;
    case static_cast<uint8_t>(TcpKind::kCallReply):
      if (request) break;
      limit = kMaxCallBytes;
      break;
    case static_cast<uint8_t>(TcpKind::kReadData):
      if (request) break;
      limit = UINT64_MAX;
      break;
    case static_cast<uint8_t>(TcpKind::kError):
      if (request) break;
      limit = kMaxErrorBytes;
      break;
    default: break;
  }
  if (limit == 0) {
    return ProtocolError(
        absl::StrCat("tcp transport: message kind ", kind, " not valid in a ", request ? "request" : "reply"));
  }
  if (h.length > limit) {
    return ProtocolError(absl::StrCat("tcp transport: message of ", h.length, " bytes exceeds the limit of ", limit));
  }
  if (h.status != 0 && kind != static_cast<uint8_t>(TcpKind::kError)) {
    return ProtocolError("tcp transport: status set on a non-error message");
  }
  h.kind = static_cast<TcpKind>(kind);
  return h;
}

void EncodeReadRequest(uint64_t offset, uint64_t length, uint8_t out[kReadRequestBytes]) {
  PutLe(out, offset, 8);
  PutLe(out + 8, length, 8);
}

void DecodeReadRequest(const uint8_t in[kReadRequestBytes], uint64_t* offset, uint64_t* length) {
  *offset = GetLe(in, 8);
  *length = GetLe(in + 8, 8);
}

}  // namespace rplasma::transport::tcp
