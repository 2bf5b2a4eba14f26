// Fuzzes the manager's client protocol (protocol/manager_messages.h): the payloads an application
// sends to rplasma-manager's client socket (DecodeManagerRequest) and the replies it reads back
// (DecodeManagerReply).
//
// Invariants: a rejected payload is kProtocolError or kInvalidArgument; what decodes re-encodes to
// bytes that decode and re-encode to themselves, with the same values.
#include <cstddef>
#include <cstdint>
#include <string>
#include <variant>

#include "absl/strings/string_view.h"

#include "protocol/base/logging.h"
#include "protocol/manager_messages.h"

namespace rplasma {
namespace {

void CheckRejection(const absl::Status& status) {
  const ErrorCode code = ErrorCodeOf(status);
  CHECK(code == ErrorCode::kProtocolError || code == ErrorCode::kInvalidArgument) << status;
}

void CheckRequest(absl::string_view payload) {
  absl::StatusOr<ManagerRequest> request = DecodeManagerRequest(payload);
  if (!request.ok()) return CheckRejection(request.status());
  if (const auto* fetch = std::get_if<ManagerFetchRequest>(&request->body)) {
    CHECK(!fetch->ids.empty() && fetch->ids.size() <= kMaxFetchIds) << fetch->ids.size();
    CHECK(fetch->timeout_ms >= 0) << fetch->timeout_ms;
  }
  const std::string first = EncodeManagerRequest(*request);
  absl::StatusOr<ManagerRequest> again = DecodeManagerRequest(first);
  CHECK(again.ok()) << again.status();
  CHECK(again->request_id == request->request_id);
  CHECK(again->body.index() == request->body.index());
  if (const auto* fetch = std::get_if<ManagerFetchRequest>(&request->body)) {
    const auto& fetch_again = std::get<ManagerFetchRequest>(again->body);
    CHECK(fetch_again.ids == fetch->ids);
    CHECK(fetch_again.timeout_ms == fetch->timeout_ms);
  }
  CHECK(EncodeManagerRequest(*again) == first);
}

void CheckReply(absl::string_view payload) {
  absl::StatusOr<ManagerReply> reply = DecodeManagerReply(payload);
  if (!reply.ok()) return CheckRejection(reply.status());
  if (const auto* fetch = std::get_if<ManagerFetchReply>(&reply->body)) {
    CHECK(fetch->codes.size() == fetch->messages.size());
  }
  const std::string first = EncodeManagerReply(*reply);
  absl::StatusOr<ManagerReply> again = DecodeManagerReply(first);
  CHECK(again.ok()) << again.status();
  CHECK(again->request_id == reply->request_id);
  CHECK(again->error == reply->error);
  CHECK(again->body.index() == reply->body.index());
  CHECK(EncodeManagerReply(*again) == first);
}

}  // namespace
}  // namespace rplasma

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view payload(reinterpret_cast<const char*>(data), size);
  rplasma::CheckRequest(payload);
  rplasma::CheckReply(payload);
  return 0;
}
