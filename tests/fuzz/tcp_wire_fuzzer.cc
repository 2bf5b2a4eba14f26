// Fuzzes the tcp transport's message header (manager/transport/tcp/tcp_wire.h) as both ends parse
// it: the owner (requests) and the reader (replies), and the 16-byte read request.
//
// Invariants: a header accepted in either direction re-encodes to exactly the bytes it came from,
// its kind is valid for that direction and its length within the kind's limit.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "manager/transport/tcp/tcp_wire.h"
#include "manager/transport/transport.h"
#include "protocol/base/logging.h"

namespace rplasma::transport::tcp {
namespace {

void CheckHeader(const uint8_t* in, TcpDirection direction) {
  absl::StatusOr<TcpHeader> header = ParseTcpHeader(in, direction);
  if (!header.ok()) return;
  const bool request = direction == TcpDirection::kRequest;
  switch (header->kind) {
    case TcpKind::kCall: CHECK(request && header->length <= kMaxCallBytes); break;
    case TcpKind::kRead: CHECK(request && header->length == kReadRequestBytes); break;
    case TcpKind::kCallReply: CHECK(!request && header->length <= kMaxCallBytes); break;
    case TcpKind::kReadData: CHECK(!request); break;
    case TcpKind::kError: CHECK(!request && header->length <= kMaxErrorBytes); break;
    default: CHECK(false) << "kind " << static_cast<int>(header->kind) << " accepted";
  }
  uint8_t again[kTcpHeaderBytes];
  EncodeTcpHeader(*header, again);
  CHECK(std::memcmp(again, in, kTcpHeaderBytes) == 0);
}

}  // namespace
}  // namespace rplasma::transport::tcp

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace rplasma::transport::tcp;
  if (size < kTcpHeaderBytes) return 0;
  CheckHeader(data, TcpDirection::kRequest);
  CheckHeader(data, TcpDirection::kReply);
  if (size >= kTcpHeaderBytes + kReadRequestBytes) {
    uint64_t offset = 0;
    uint64_t length = 0;
    DecodeReadRequest(data + kTcpHeaderBytes, &offset, &length);
    uint8_t again[kReadRequestBytes];
    EncodeReadRequest(offset, length, again);
    CHECK(std::memcmp(again, data + kTcpHeaderBytes, kReadRequestBytes) == 0);
  }
  return 0;
}
