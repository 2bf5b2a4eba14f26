// Client::Fetch: asks the local rplasma-manager (its --client-socket) to bring objects from other
// nodes into this store. One short-lived connection per call: Fetch is rare and long compared
// with a connect, and no state is shared between concurrent callers.
#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/client.h"
#include "protocol/frame.h"
#include "protocol/manager_messages.h"
#include "protocol/socket_io.h"
#include "protocol/status.h"

namespace rplasma {
namespace {

// Time the manager gets beyond the fetch timeout to answer (lookups, a slow seal).
constexpr absl::Duration kReplyGrace = absl::Seconds(5);

}  // namespace

absl::Status Client::Fetch(absl::Span<const ObjectID> ids, absl::Duration timeout) {
  if (ids.empty()) return absl::OkStatus();
  if (options_.manager_socket.empty()) {
    return MakeError(ErrorCode::kInvalidArgument, "fetch: no manager socket (ClientOptions::manager_socket)");
  }
  timeout = std::max(timeout, absl::ZeroDuration());
  const absl::Time deadline = absl::Now() + timeout;
  absl::StatusOr<UniqueFd> fd = UnixConnect(options_.manager_socket);
  if (!fd.ok()) {
    return MakeError(ErrorCode::kUnavailable,
                     absl::StrCat("fetch: manager at ", options_.manager_socket, ": ", fd.status().message()));
  }
  size_t failed = 0;
  ErrorCode first_code = ErrorCode::kOk;
  std::vector<std::string> failures;
  uint64_t request_id = 0;
  for (size_t start = 0; start < ids.size(); start += kMaxFetchIds) {
    const size_t n = std::min<size_t>(kMaxFetchIds, ids.size() - start);
    ManagerFetchRequest fetch;
    fetch.ids.assign(ids.begin() + start, ids.begin() + start + n);
    fetch.timeout_ms = std::max<int64_t>(0, absl::ToInt64Milliseconds(deadline - absl::Now()));
    ManagerRequest request{++request_id, std::move(fetch)};
    RETURN_IF_ERROR(WriteFrame(fd->get(), EncodeManagerRequest(request)));
    ASSIGN_OR_RETURN(std::string payload,
                     ReadFrame(fd->get(), kMaxManagerFrameBytes, std::max(deadline, absl::Now()) + kReplyGrace));
    ASSIGN_OR_RETURN(ManagerReply reply, DecodeManagerReply(payload));
    if (reply.request_id != request_id) return ProtocolError("fetch: manager replied to another request");
    RETURN_IF_ERROR(reply.status());
    const auto* result = std::get_if<ManagerFetchReply>(&reply.body);
    if (result == nullptr || result->codes.size() != n) return ProtocolError("fetch: malformed manager reply");
    for (size_t i = 0; i < n; ++i) {
      if (result->codes[i] == ErrorCode::kOk) continue;
      if (failed++ == 0) first_code = result->codes[i];
      if (failures.size() < 3) {
        failures.push_back(absl::StrCat(ids[start + i].Hex(), ": ", ErrorCodeName(result->codes[i]), " ",
                                        result->messages[i]));
      }
    }
  }
  if (failed == 0) return absl::OkStatus();
  return MakeError(first_code, absl::StrCat("fetch: ", failed, " of ", ids.size(), " objects failed (",
                                            absl::StrJoin(failures, "; "), failed > failures.size() ? "; ..." : "",
                                            ")"));
}

}  // namespace rplasma
