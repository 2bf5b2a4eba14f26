// Fuzzes the peer protocol (manager/peer/peer_messages.h): the Call requests an owner decodes from
// any peer that passed the handshake (DecodeRequest) and the replies a reader decodes
// (DecodeReply), envelope, flatbuffer and payload together.
//
// Invariants: what decodes re-encodes (with the project's encoder for its kind) to bytes that
// decode and re-encode to themselves; a decoded reply's views lie inside the input and have the
// sizes its descriptions announce; a batch has 1..kMaxBatchIds entries.
#include <cstddef>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "absl/types/span.h"

#include "manager/peer/peer_messages.h"
#include "protocol/base/logging.h"

namespace rplasma::peer {
namespace {

bool Inside(absl::string_view view, absl::string_view wire) {
  return view.empty() || (view.data() >= wire.data() && view.data() + view.size() <= wire.data() + wire.size());
}

// A decoded entry's error says "peer: <message>"; the encoder is given <message> back.
absl::Status AsSent(const absl::Status& received) {
  return MakeError(ErrorCodeOf(received), absl::StripPrefix(received.message(), "peer: "));
}

absl::Span<const uint8_t> Bytes(absl::string_view s) {
  return absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(s.data()), s.size());
}

void CheckRequest(absl::string_view wire) {
  absl::StatusOr<PeerRequest> request = DecodeRequest(wire);
  if (!request.ok()) return;
  std::visit(
      [](const auto& r) {
        using T = std::decay_t<decltype(r)>;
        if constexpr (std::is_same_v<T, FetchBatchRequest>) {
          CHECK(!r.ids.empty() && r.ids.size() <= kMaxBatchIds) << r.ids.size();
        } else if constexpr (std::is_same_v<T, UnpinBatchRequest>) {
          CHECK(!r.lease_ids.empty() && r.lease_ids.size() <= kMaxBatchIds) << r.lease_ids.size();
        } else if constexpr (std::is_same_v<T, ProbeGetRequest> || std::is_same_v<T, ProbePinRequest>) {
          CHECK(r.bytes >= 1 && r.bytes <= kMaxProbeBytes) << r.bytes;
        }
      },
      *request);
  const std::string first = EncodeRequest(*request);
  absl::StatusOr<PeerRequest> again = DecodeRequest(first);
  CHECK(again.ok()) << again.status();
  CHECK(again->index() == request->index());
  CHECK(EncodeRequest(*again) == first);
  CHECK(!RequestName(*request).empty());
}

// The reply re-encoded by the encoder of its kind.
std::string Reencode(const PeerReplyView& reply) {
  if (const auto* get = std::get_if<GetReplyView>(&reply)) {
    CHECK(get->payload.size() == get->object.total_size());
    absl::Span<const uint8_t> bytes = Bytes(get->payload);
    return EncodeGetReply(get->object, bytes.subspan(0, get->object.data_size), bytes.subspan(get->object.data_size));
  }
  if (const auto* pin = std::get_if<PinReply>(&reply)) {
    CHECK(pin->region.length == pin->object.total_size());
    return EncodePinReply(*pin);
  }
  if (std::holds_alternative<UnpinReply>(reply)) return EncodeUnpinReply();
  const FetchBatchReplyView& batch = std::get<FetchBatchReplyView>(reply);
  CHECK(!batch.objects.empty() && batch.objects.size() <= kMaxBatchIds) << batch.objects.size();
  std::vector<FetchBatchEntry> entries;
  for (const absl::StatusOr<FetchedEntryView>& object : batch.objects) {
    FetchBatchEntry entry;
    if (!object.ok()) {
      entry.status = AsSent(object.status());
    } else if (const auto* pin = std::get_if<PinReply>(&*object)) {
      CHECK(pin->region.length == pin->object.total_size());
      entry.pin = *pin;
    } else {
      const GetReplyView& got = std::get<GetReplyView>(*object);
      CHECK(got.payload.size() == got.object.total_size());
      entry.object = got.object;
      entry.bytes = Bytes(got.payload);
    }
    entries.push_back(entry);
  }
  return EncodeFetchBatchReply(entries);
}

void CheckPayloadsInside(const PeerReplyView& reply, absl::string_view wire) {
  if (const auto* get = std::get_if<GetReplyView>(&reply)) CHECK(Inside(get->payload, wire));
  if (const auto* batch = std::get_if<FetchBatchReplyView>(&reply)) {
    for (const auto& object : batch->objects) {
      if (object.ok() && std::holds_alternative<GetReplyView>(*object)) {
        CHECK(Inside(std::get<GetReplyView>(*object).payload, wire));
      }
    }
  }
}

void CheckReply(absl::string_view wire) {
  absl::StatusOr<PeerReplyView> reply = DecodeReply(wire);
  if (!reply.ok()) return;
  CheckPayloadsInside(*reply, wire);
  const std::string first = Reencode(*reply);
  absl::StatusOr<PeerReplyView> again = DecodeReply(first);
  CHECK(again.ok()) << again.status();
  CHECK(again->index() == reply->index());
  CheckPayloadsInside(*again, first);
  CHECK(Reencode(*again) == first);
}

}  // namespace
}  // namespace rplasma::peer

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view wire(reinterpret_cast<const char*>(data), size);
  rplasma::peer::CheckRequest(wire);
  rplasma::peer::CheckReply(wire);
  return 0;
}
