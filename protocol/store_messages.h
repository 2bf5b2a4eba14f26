// The store protocol as plain C++ values, with pure encode/decode functions (no I/O).
//
// Decode* runs the flatbuffers Verifier on every buffer (always, in every build type), then
// semantic checks: id and object counts per request, sizes and their sum, timeouts, page sizes. A buffer
// that fails either is a kProtocolError / kInvalidArgument status, never a crash.
#ifndef RPLASMA_PROTOCOL_STORE_MESSAGES_H_
#define RPLASMA_PROTOCOL_STORE_MESSAGES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

#include "protocol/base/object_id.h"
#include "protocol/base/status.h"
#include "protocol/object_description.h"

namespace rplasma {

// Limits every request must respect; the store rejects anything beyond them.
inline constexpr uint32_t kMaxIdsPerRequest = 4096;
inline constexpr uint32_t kMaxListPage = 4096;
inline constexpr uint64_t kMaxObjectBytes = uint64_t{1} << 46;  // 64 TiB: far above any arena
inline constexpr size_t kMaxClientNameBytes = 256;
// The most data + metadata a PutRequest may carry inline (larger objects: Create, write, Seal).
inline constexpr uint64_t kMaxInlinePutBytes = 64 * 1024;

enum class ObjectState : uint8_t { kCreated = 0, kSealed = 1 };
enum class EventKind : uint8_t { kSealed = 0, kDeleted = 1, kEvicted = 2 };

// What the store tells a client about one object (its table row, store/object_table.h, stays private).
struct ObjectInfo {
  ObjectID id;
  ErrorCode error = ErrorCode::kOk;
  ObjectState state = ObjectState::kCreated;
  uint64_t offset = 0;
  uint64_t data_size = 0;
  uint64_t metadata_size = 0;
  uint64_t generation = 0;
  uint64_t checksum = 0;
  int32_t ref_count = 0;  // List: every reference (socket and slots); other replies: the socket's

  // The four facts that identify the object's bytes (meaningful once it is sealed).
  ObjectDescription description() const { return {data_size, metadata_size, generation, checksum}; }
};

// ---- Requests (client -> store) ----
struct ConnectRequest {
  std::string client_name;
  bool shared_index = false;  // asks for the shared index and slots (their fds ride on the reply)
};
struct CreateRequest {
  ObjectID id;
  uint64_t data_size = 0;
  uint64_t metadata_size = 0;
  bool evict_if_full = true;
};
struct SealRequest {
  ObjectID id;
  uint64_t checksum = 0;
  bool release = false;  // also drop the creator's reference
};
struct AbortRequest {
  ObjectID id;
};
struct GetRequest {
  std::vector<ObjectID> ids;
  int64_t timeout_ms = -1;  // -1 waits forever, 0 does not wait
};
struct ReleaseRequest {
  std::vector<ObjectID> ids;
  bool no_reply = false;  // the store answers nothing
};
struct ContainsRequest {
  std::vector<ObjectID> ids;
};
struct DeleteRequest {
  std::vector<ObjectID> ids;
};
struct EvictRequest {
  uint64_t bytes = 0;
};
struct ListRequest {
  std::optional<ObjectID> start_after;  // ids strictly greater, in ObjectID order
  uint32_t limit = 1024;                // 1 .. kMaxListPage
};
struct StatsRequest {};
struct SubscribeRequest {
  bool include_existing = true;
};
// Sent with no reply after a client cleared a reference slot whose object may be kReclaiming.
struct SlotsReleasedRequest {};
// Create, copy, seal and release in one request. `data` and `metadata` are views: when encoding,
// into the caller's buffers; when decoding, into the payload passed to DecodeRequest (valid only
// while it lives). Together at most kMaxInlinePutBytes.
struct PutRequest {
  ObjectID id;
  absl::Span<const uint8_t> data;
  absl::Span<const uint8_t> metadata;
  uint64_t checksum = 0;  // ObjectChecksum(data, metadata), trusted like SealRequest's
  bool evict_if_full = true;
};

// Batches of 1..kMaxIdsPerRequest objects, each checked and handled exactly like its single
// request, independently and in order. Replies: CreateBatch an ObjectsReply (per object: id,
// offset, generation, sizes, or its error), SealBatch and PutBatch a CodesReply. A PutBatch's bytes
// are bounded by the frame cap (kDefaultMaxFrameBytes, protocol/frame.h).
struct CreateBatchRequest {
  std::vector<CreateRequest> objects;
};
struct SealBatchRequest {
  std::vector<SealRequest> objects;
};
struct PutBatchRequest {
  std::vector<PutRequest> objects;
};  // views as in PutRequest

using RequestBody =
    std::variant<ConnectRequest, CreateRequest, SealRequest, AbortRequest, GetRequest, ReleaseRequest, ContainsRequest,
                 DeleteRequest, EvictRequest, ListRequest, StatsRequest, SubscribeRequest, PutRequest,
                 CreateBatchRequest, SealBatchRequest, PutBatchRequest, SlotsReleasedRequest>;
struct Request {
  uint64_t request_id = 0;
  RequestBody body;
};

// ---- Replies and events (store -> client) ----
struct ConnectReply {
  uint64_t arena_size = 0;
  std::string store_name;
  uint32_t max_ids_per_request = kMaxIdsPerRequest;
  // The shared-memory index (entries) and this client's reference slots; their memfds follow the
  // arena's on the reply, in that order. 0: not offered (every get uses the socket).
  uint64_t index_entries = 0;
  uint64_t slots = 0;
};
struct CreateReply {
  uint64_t offset = 0;
  uint64_t generation = 0;
};
struct EmptyReply {};
// Get, List (with `more` when another page follows), CreateBatch.
struct ObjectsReply {
  std::vector<ObjectInfo> objects;
  bool more = false;
};
// Per-id results of Release, Contains (kOk = present and sealed), Delete, SealBatch, PutBatch.
struct CodesReply {
  std::vector<ErrorCode> codes;
};
struct EvictReply {
  uint64_t bytes_evicted = 0;
  uint64_t objects_evicted = 0;
};
struct StatsReply {
  uint64_t capacity = 0;
  uint64_t used_bytes = 0;
  uint64_t objects_created = 0;  // unsealed
  uint64_t objects_sealed = 0;
  uint64_t ref_count = 0;  // references summed over objects, taken through the socket or a slot
  uint64_t clients = 0;
  uint64_t evictions = 0;
  uint64_t evicted_bytes = 0;
  uint64_t free_blocks = 0;
  uint64_t largest_free_block = 0;
  double fragmentation = 0;  // 1 - largest_free_block / free bytes (0 when nothing free)
  uint64_t waiting_gets = 0;
  uint64_t subscribers = 0;
  uint64_t indexed_objects = 0;   // sealed objects published in the shared-memory index
  uint64_t slot_references = 0;   // of ref_count: those held through the clients' slots
  uint64_t reclaims_waiting = 0;  // deleted objects kept until a slot lets go of them
};
struct ObjectEvent {
  EventKind kind = EventKind::kSealed;
  ObjectInfo object;
};
// Several events of a subscription in one frame, in the order they happened.
struct ObjectEvents {
  std::vector<ObjectEvent> events;
};
// Events per ObjectEvents frame, at most: ~75 bytes each on the wire, well within a frame.
inline constexpr size_t kMaxEventsPerFrame = 4096;

using ReplyBody = std::variant<ConnectReply, CreateReply, EmptyReply, ObjectsReply, CodesReply, EvictReply, StatsReply,
                               ObjectEvent, ObjectEvents>;
struct Reply {
  uint64_t request_id = 0;
  ErrorCode error = ErrorCode::kOk;
  std::string error_message;
  ReplyBody body = EmptyReply{};

  // The status this reply stands for (OK, or error + message).
  absl::Status status() const { return MakeError(error, error_message); }
};

std::string EncodeRequest(const Request& request);
// A payload that fails verification is kProtocolError; a well-formed request whose values fail the
// semantic checks is kInvalidArgument, and then `request_id` (if given) is set to its id.
absl::StatusOr<Request> DecodeRequest(absl::string_view payload, uint64_t* request_id = nullptr);

std::string EncodeReply(const Reply& reply);
// An error reply for `request_id` carrying `status`.
Reply ErrorReply(uint64_t request_id, const absl::Status& status);
absl::StatusOr<Reply> DecodeReply(absl::string_view payload);

}  // namespace rplasma

#endif  // RPLASMA_PROTOCOL_STORE_MESSAGES_H_
