// Fuzzes the verbs transport's wire format (manager/transport/verbs/wire_format.h): a received
// message fragment's header and the rdma_cm private data of a connect request and of an accept.
//
// Invariants: an accepted fragment lies inside its message, which is within the limit; a header
// re-encodes to exactly its bytes; connect and accept data re-encode to data that decodes to the
// same values.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "absl/types/span.h"

#include "manager/transport/verbs/wire_format.h"
#include "protocol/base/logging.h"

namespace rplasma::transport::verbs {
namespace {

void CheckMessage(absl::Span<const uint8_t> message, uint64_t max_message_bytes) {
  absl::StatusOr<MessageHeader> header = DecodeMessageHeader(message, max_message_bytes);
  if (!header.ok()) return;
  const uint64_t payload = message.size() - kMessageHeaderBytes;
  if (header->type == MessageType::kCredit) {
    CHECK(payload == 0 && header->total_length == 0 && header->offset == 0);
  } else {
    CHECK(header->total_length <= max_message_bytes);
    CHECK(header->offset <= header->total_length);
    CHECK(payload <= header->total_length - header->offset);
  }
  uint8_t again[kMessageHeaderBytes];
  EncodeMessageHeader(*header, again);
  CHECK(std::memcmp(again, message.data(), kMessageHeaderBytes) == 0);
}

void CheckConnectData(absl::Span<const uint8_t> bytes) {
  absl::StatusOr<ConnectData> data = DecodeConnectData(bytes);
  if (!data.ok()) return;
  const auto encoded = EncodeConnectData(*data);
  absl::StatusOr<ConnectData> again = DecodeConnectData(encoded);
  CHECK(again.ok()) << again.status();
  CHECK(again->recv_credits == data->recv_credits && again->message_bytes == data->message_bytes);
  CHECK(again->ticket == data->ticket);
}

void CheckAcceptData(absl::Span<const uint8_t> bytes) {
  absl::StatusOr<AcceptData> data = DecodeAcceptData(bytes);
  if (!data.ok()) return;
  const auto encoded = EncodeAcceptData(*data);
  absl::StatusOr<AcceptData> again = DecodeAcceptData(encoded);
  CHECK(again.ok()) << again.status();
  CHECK(again->recv_credits == data->recv_credits && again->message_bytes == data->message_bytes);
  CHECK(again->responder_resources == data->responder_resources);
}

}  // namespace
}  // namespace rplasma::transport::verbs

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace rplasma::transport::verbs;
  const absl::Span<const uint8_t> bytes(data, size);
  // The limit a receiver uses comes from the peer's announced message size: vary it too.
  uint64_t max_message_bytes = 64 * 1024;
  if (size > 0) max_message_bytes = uint64_t{1} << (data[size - 1] % 40);
  CheckMessage(bytes, max_message_bytes);
  CheckConnectData(bytes);
  CheckAcceptData(bytes);
  return 0;
}
