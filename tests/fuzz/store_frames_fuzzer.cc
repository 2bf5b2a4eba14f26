// Fuzzes what a store reads from a client socket: the byte stream is cut into chunks, as recvmsg
// would deliver it, and fed to a FrameReader (protocol/frame.h, as store/client_session.cc does);
// every complete payload goes to DecodeRequest (as store/store_server.cc does) and, for the
// client's side of the same socket, to DecodeReply.
//
// Invariants: the frames and the error a stream yields do not depend on how it was chunked; a
// header that parses re-encodes to the same bytes; a payload that decodes re-encodes to bytes
// that decode and re-encode to themselves (the encoding is canonical and loses nothing).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

#include "protocol/base/logging.h"
#include "protocol/frame.h"
#include "protocol/store_messages.h"

namespace rplasma {
namespace {

// The frames of a stream, then the status that ended it (OK: ran out of bytes).
struct StreamOutcome {
  std::vector<std::string> payloads;
  absl::Status end;
  bool partial = false;
};

// Feeds `stream` in chunks whose sizes come from a generator seeded by `seed` (seed 0: at once).
StreamOutcome ReadStream(absl::string_view stream, uint32_t seed) {
  FrameReader reader(kDefaultMaxFrameBytes);
  StreamOutcome out;
  uint32_t state = seed;
  size_t pos = 0;
  while (pos < stream.size()) {
    size_t chunk = stream.size() - pos;
    if (seed != 0) {
      state = state * 1103515245u + 12345u;
      chunk = std::min<size_t>(chunk, 1 + (state >> 16) % 37);
    }
    reader.Append(stream.substr(pos, chunk));
    pos += chunk;
    for (;;) {
      absl::StatusOr<std::optional<std::string>> next = reader.Next();
      if (!next.ok()) {
        out.end = next.status();
        return out;
      }
      if (!next->has_value()) break;
      out.payloads.push_back(**next);
    }
  }
  out.partial = reader.HasPartialFrame();
  return out;
}

void CheckHeaderRoundTrip(absl::string_view stream) {
  if (stream.size() < kFrameHeaderBytes) return;
  absl::StatusOr<uint32_t> length = ParseFrameHeader(stream.data(), kDefaultMaxFrameBytes);
  if (!length.ok()) return;
  char again[kFrameHeaderBytes];
  EncodeFrameHeader(*length, again);
  CHECK(absl::string_view(again, kFrameHeaderBytes) == stream.substr(0, kFrameHeaderBytes));
}

void CheckRequest(absl::string_view payload) {
  uint64_t request_id = 0;
  absl::StatusOr<Request> request = DecodeRequest(payload, &request_id);
  if (!request.ok()) {
    const ErrorCode code = ErrorCodeOf(request.status());
    CHECK(code == ErrorCode::kProtocolError || code == ErrorCode::kInvalidArgument) << request.status();
    return;
  }
  CHECK(request->request_id == request_id);
  const std::string first = EncodeRequest(*request);
  absl::StatusOr<Request> again = DecodeRequest(first);
  CHECK(again.ok()) << again.status();
  CHECK(again->request_id == request->request_id);
  CHECK(again->body.index() == request->body.index());
  CHECK(EncodeRequest(*again) == first);
}

void CheckReply(absl::string_view payload) {
  absl::StatusOr<Reply> reply = DecodeReply(payload);
  if (!reply.ok()) return;
  const std::string first = EncodeReply(*reply);
  absl::StatusOr<Reply> again = DecodeReply(first);
  CHECK(again.ok()) << again.status();
  CHECK(again->request_id == reply->request_id);
  CHECK(again->error == reply->error);
  CHECK(again->body.index() == reply->body.index());
  CHECK(EncodeReply(*again) == first);
}

}  // namespace
}  // namespace rplasma

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace rplasma;
  const absl::string_view stream(reinterpret_cast<const char*>(data), size);
  CheckHeaderRoundTrip(stream);

  const StreamOutcome whole = ReadStream(stream, 0);
  const StreamOutcome chunked = ReadStream(stream, static_cast<uint32_t>(size) | 1u);
  CHECK(whole.payloads == chunked.payloads);
  CHECK(whole.end == chunked.end) << whole.end << " vs " << chunked.end;
  CHECK(whole.partial == chunked.partial);

  for (const std::string& payload : whole.payloads) {
    CheckRequest(payload);
    CheckReply(payload);
  }
  // A bare payload too, so that mutations reach the decoders without keeping a valid header.
  CheckRequest(stream);
  CheckReply(stream);
  return 0;
}
