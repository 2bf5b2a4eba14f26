// DirectoryCodec: the Redis key schema of the directory and the encoding of its values
// (docs/DIRECTORY.md describes both). Pure functions: no I/O, unit-testable.
//
// Keys (P = key prefix, default "rplasma"):
//   P:node:<node_id>          string "epoch=<u64>|tcp=<address>|verbs=<address>", with a TTL
//   P:nodes                   set of node ids that registered (for sweeping expired nodes)
//   P:obj:<40 hex>            hash  node_id -> "<data_size>,<metadata_size>,<generation>,<checksum>"
//   P:node-objects:<node_id>  set of 40-hex ids the node published
//
// Everything decoded here came from Redis and is untrusted: lengths are bounded before parsing,
// numbers are decimal digits only and must fit in 64 bits, node ids and addresses are checked
// against their character sets. Decoding failures are errors (kProtocolError), never crashes.
//
// Thread-safety: immutable; safe to share.
#ifndef RPLASMA_MANAGER_DIRECTORY_DIRECTORY_CODEC_H_
#define RPLASMA_MANAGER_DIRECTORY_DIRECTORY_CODEC_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

#include "manager/directory/directory.h"
#include "protocol/base/node_id.h"
#include "protocol/base/object_id.h"

namespace rplasma {

class DirectoryCodec {
 public:
  static constexpr size_t kMaxNodeIdLength = rplasma::kMaxNodeIdLength;
  static constexpr size_t kMaxAddressLength = 256;
  static constexpr size_t kMaxPrefixLength = 64;
  static constexpr size_t kMaxUint64Digits = 20;
  // Longest valid location value: four 20-digit numbers and three commas.
  static constexpr size_t kMaxLocationValueLength = 4 * kMaxUint64Digits + 3;
  static constexpr size_t kMaxNodeValueLength = 64 + 2 * kMaxAddressLength;

  // REQUIRES: IsValidPrefix(prefix).
  explicit DirectoryCodec(std::string prefix) : prefix_(std::move(prefix)) {}

  // Node ids: [A-Za-z0-9._:-]{1,128}. Prefixes: the same charset, 1..64 characters.
  static bool IsValidNodeId(absl::string_view node_id);
  static bool IsValidPrefix(absl::string_view prefix);
  // Peer addresses inside a node record: "" or up to 256 of [A-Za-z0-9._:%[]-].
  static bool IsValidAddress(absl::string_view address);
  // Decimal digits only, no sign or spaces, at most 20 digits, value fits in uint64.
  static absl::StatusOr<uint64_t> ParseUint64(absl::string_view digits);

  std::string NodeKey(absl::string_view node_id) const;
  std::string NodesKey() const;
  std::string ObjectKey(const ObjectID& id) const;
  std::string NodeObjectsKey(absl::string_view node_id) const;

  // Node record value. Encode REQUIRES valid addresses (RegisterNode checks); Decode fills
  // `node_id` from the argument (it is part of the key, not of the value).
  static std::string EncodeNodeRecord(const NodeRecord& node);
  static absl::StatusOr<NodeRecord> DecodeNodeRecord(absl::string_view node_id, absl::string_view value);

  // Location field value (the node id is the hash field name).
  static std::string EncodeLocation(const ObjectLocation& location);
  static absl::StatusOr<ObjectLocation> DecodeLocation(absl::string_view node_id, absl::string_view value);

  // A member of a node-objects set: 40 hex digits.
  static absl::StatusOr<ObjectID> DecodeObjectMember(absl::string_view member);

 private:
  std::string prefix_;
};

}  // namespace rplasma

#endif  // RPLASMA_MANAGER_DIRECTORY_DIRECTORY_CODEC_H_
