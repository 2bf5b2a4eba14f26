// The manager's client protocol (application <-> rplasma-manager --client-socket) as plain C++
// values, with pure encode/decode functions. Decode* runs the flatbuffers Verifier (always), then
// semantic checks (id count, codes/messages agree). Bad bytes -> kProtocolError/kInvalidArgument.
#ifndef RPLASMA_PROTOCOL_MANAGER_MESSAGES_H_
#define RPLASMA_PROTOCOL_MANAGER_MESSAGES_H_

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

#include "protocol/base/object_id.h"
#include "protocol/base/status.h"
#include "protocol/forced_protocol.h"

namespace rplasma {

// Largest frame on the manager's client socket (a FetchReply for kMaxFetchIds ids with messages).
inline constexpr uint32_t kMaxManagerFrameBytes = 8u << 20;
inline constexpr uint32_t kMaxFetchIds = 4096;
inline constexpr size_t kMaxFetchMessageBytes = 1024;  // longer messages are truncated

struct ManagerFetchRequest {
  std::vector<ObjectID> ids;  // 1 .. kMaxFetchIds
  int64_t timeout_ms = 0;     // >= 0
  std::string hint_node;      // "" or a node id (protocol/base/node_id.h) that probably holds the ids
  // The caller waits for the objects to show sealed in the shared index itself (manager.fbs).
  bool caller_waits_for_seal = false;
  ForcedProtocol protocol = ForcedProtocol::kNone;
};
struct ManagerStatsRequest {};
using ManagerRequestBody = std::variant<ManagerFetchRequest, ManagerStatsRequest>;
struct ManagerRequest {
  uint64_t request_id = 0;
  ManagerRequestBody body;
};

struct ManagerFetchReply {
  std::vector<ErrorCode> codes;       // one per requested id
  std::vector<std::string> messages;  // same length; "" for OK
};
struct ManagerStatsReply {
  std::string json;
  std::string node_id;  // the manager's node id (what a fetch hint names); "" from an older manager
};
struct ManagerEmptyReply {};
using ManagerReplyBody = std::variant<ManagerEmptyReply, ManagerFetchReply, ManagerStatsReply>;
struct ManagerReply {
  uint64_t request_id = 0;
  ErrorCode error = ErrorCode::kOk;
  std::string error_message;
  ManagerReplyBody body;

  absl::Status status() const { return MakeError(error, error_message); }
};

std::string EncodeManagerRequest(const ManagerRequest& request);
absl::StatusOr<ManagerRequest> DecodeManagerRequest(absl::string_view payload);
std::string EncodeManagerReply(const ManagerReply& reply);
absl::StatusOr<ManagerReply> DecodeManagerReply(absl::string_view payload);

}  // namespace rplasma

#endif  // RPLASMA_PROTOCOL_MANAGER_MESSAGES_H_
