// The peer protocol (manager <-> manager) as plain C++ values, with pure encode/decode functions.
//
// Wire form of every Call request and reply (an "envelope", so that a Get reply can carry object
// bytes without copying them into a flatbuffer first):
//
//   offset 0  uint32 magic     kPeerMagic, little-endian
//   offset 4  uint32 fb_length length of the flatbuffer that follows (PeerRequest / PeerReply)
//   offset 8  fb_length bytes  the flatbuffer (manager/peer/peer.fbs), padded with zeros to 8
//   then      payload          Get/ProbeGet replies only: data then metadata, exactly
//                              data_size + metadata_size bytes. FetchBatch replies: the bytes of
//                              every inline entry, in entry order, back to back
//
// Decode* checks the envelope, runs the flatbuffers Verifier (always, in every build), then
// semantic checks (sizes, their sum, region length = object size, payload length). Anything that
// fails is a kProtocolError / kInvalidArgument status — never a crash, whatever the bytes.
#ifndef RPLASMA_MANAGER_PEER_PEER_MESSAGES_H_
#define RPLASMA_MANAGER_PEER_PEER_MESSAGES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

#include "manager/transport/transport.h"
#include "protocol/base/object_id.h"
#include "protocol/base/status.h"
#include "protocol/object_description.h"

namespace rplasma::peer {

inline constexpr uint32_t kPeerMagic = 0x31505052;  // "RPP1"
inline constexpr size_t kEnvelopeHeaderBytes = 8;
// Largest object size a peer may announce (the store's limit).
inline constexpr uint64_t kMaxPeerObjectBytes = uint64_t{1} << 46;
// Largest probe a peer may ask for (auto threshold calibration).
inline constexpr uint64_t kMaxProbeBytes = 4u << 20;
// Largest object a reply carries inline: a Call less room for the envelope and the object's entry.
// Anything larger is pinned and read.
inline constexpr uint64_t kMaxInlineObjectBytes = transport::kMaxCallBytes - 4096;
// Most ids (or leases) in one batch request. A Fetch of more is split by the requester.
inline constexpr size_t kMaxBatchIds = 1024;

// ---- Requests ----
struct GetRequest {
  ObjectID id;
};
struct PinRequest {
  ObjectID id;
};
struct UnpinRequest {
  uint64_t lease_id = 0;
};
struct ProbeGetRequest {
  uint64_t bytes = 0;
};  // 1 .. kMaxProbeBytes
struct ProbePinRequest {
  uint64_t bytes = 0;
};  // 1 .. kMaxProbeBytes

// Batches: 1..kMaxBatchIds entries; ids may repeat (each gets its own outcome). The owner answers
// every id in one reply: its bytes inline when it has at most `inline_max` bytes and they fit the
// reply's `inline_budget` (and the owner's own Get limit), else a pin under its own lease.
// inline_max 0 pins every object with bytes (a Pin batch); inline_max ~0 inlines all that fit.
struct FetchBatchRequest {
  std::vector<ObjectID> ids;
  uint64_t inline_max = 0;
  uint64_t inline_budget = 0;
};
struct UnpinBatchRequest {
  std::vector<uint64_t> lease_ids;
};

using PeerRequest = std::variant<GetRequest, PinRequest, UnpinRequest, ProbeGetRequest, ProbePinRequest,
                                 FetchBatchRequest, UnpinBatchRequest>;

// ---- Replies ----
// Get and Pin replies carry the owner's ObjectDescription (protocol/object_description.h): the
// truth about the object, where a directory entry is only a hint.
// Get / ProbeGet: the description plus the bytes (a view into the decoded buffer).
struct GetReplyView {
  ObjectDescription object;
  absl::string_view payload;  // data then metadata; size == object.total_size()
};
struct PinReply {
  ObjectDescription object;
  transport::RemoteRegion region;  // region.length == object.total_size()
  uint64_t lease_id = 0;
  uint64_t lease_ttl_ms = 0;
};
struct UnpinReply {};
// FetchBatch: one entry per requested id, in order: the object and its bytes (inline), a pin under
// its own lease, or its error.
using FetchedEntryView = std::variant<GetReplyView, PinReply>;
struct FetchBatchReplyView {
  std::vector<absl::StatusOr<FetchedEntryView>> objects;
};

using PeerReplyView = std::variant<GetReplyView, PinReply, UnpinReply, FetchBatchReplyView>;

std::string EncodeRequest(const PeerRequest& request);
absl::StatusOr<PeerRequest> DecodeRequest(absl::string_view wire);

// A Get reply carrying `data` then `metadata` (copied once, straight into the wire buffer).
// REQUIRES: data.size() == object.data_size, metadata.size() == object.metadata_size.
std::string EncodeGetReply(const ObjectDescription& object, absl::Span<const uint8_t> data,
                           absl::Span<const uint8_t> metadata);
// The same reply without its payload: what precedes the object's object.total_size() bytes, which
// the caller sends right after it (gather on send, transport::CallReply).
std::string EncodeGetReplyHead(const ObjectDescription& object);
std::string EncodePinReply(const PinReply& reply);
// A FetchBatch reply from one entry per id: inline, the object and its bytes (data then metadata,
// as one span of object.total_size() bytes, copied once, straight into the wire buffer); pinned,
// its pin; or the id's error.
struct FetchBatchEntry {
  absl::Status status;              // OK: `pin`, or else `object` and `bytes`, are set
  ObjectDescription object;         // inline
  absl::Span<const uint8_t> bytes;  // inline
  std::optional<PinReply> pin;      // pinned
};
std::string EncodeFetchBatchReply(absl::Span<const FetchBatchEntry> entries);
// The same reply without its payload: what precedes the inline entries' bytes, which the caller
// sends right after it, in entry order (gather on send, transport::CallReply).
std::string EncodeFetchBatchReplyHead(absl::Span<const FetchBatchEntry> entries);
std::string EncodeUnpinReply();
// An error reply carrying `status` (its ErrorCode and message).
std::string EncodeErrorReply(const absl::Status& status);

// The reply, or the error the peer reported (its ErrorCode and message, prefixed with "peer: ").
// The returned view points into `wire`, which must outlive it.
absl::StatusOr<PeerReplyView> DecodeReply(absl::string_view wire);

// A short name of the request kind for logs and stats ("get", "pin", ...).
absl::string_view RequestName(const PeerRequest& request);

}  // namespace rplasma::peer

#endif  // RPLASMA_MANAGER_PEER_PEER_MESSAGES_H_
