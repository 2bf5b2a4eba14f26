// Fuzzes the directory's Redis values (manager/directory/directory_codec.h): everything read back
// from Redis is untrusted. The input is a key part (a node id, or a key prefix) and a value,
// separated by the first newline; every decoder sees them.
//
// Invariants: a decoded record or location re-encodes to a value that decodes to the same fields
// and fits the codec's own length bounds; a parsed number prints back to digits that parse to it;
// an id member decodes to the id whose hex is the member (in lower case).
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

#include "manager/directory/directory_codec.h"
#include "protocol/base/logging.h"

namespace rplasma {
namespace {

void CheckNodeRecord(absl::string_view node_id, absl::string_view value) {
  absl::StatusOr<NodeRecord> node = DirectoryCodec::DecodeNodeRecord(node_id, value);
  if (!node.ok()) return;
  CHECK(DirectoryCodec::IsValidNodeId(node->node_id));
  CHECK(DirectoryCodec::IsValidAddress(node->tcp_address) && DirectoryCodec::IsValidAddress(node->verbs_address));
  const std::string encoded = DirectoryCodec::EncodeNodeRecord(*node);
  CHECK(encoded.size() <= DirectoryCodec::kMaxNodeValueLength) << encoded;
  absl::StatusOr<NodeRecord> again = DirectoryCodec::DecodeNodeRecord(node_id, encoded);
  CHECK(again.ok()) << again.status();
  CHECK(again->epoch == node->epoch && again->tcp_address == node->tcp_address &&
        again->verbs_address == node->verbs_address && again->node_id == node->node_id);
}

void CheckLocation(absl::string_view node_id, absl::string_view value) {
  absl::StatusOr<ObjectLocation> location = DirectoryCodec::DecodeLocation(node_id, value);
  if (!location.ok()) return;
  const std::string encoded = DirectoryCodec::EncodeLocation(*location);
  CHECK(encoded.size() <= DirectoryCodec::kMaxLocationValueLength) << encoded;
  absl::StatusOr<ObjectLocation> again = DirectoryCodec::DecodeLocation(node_id, encoded);
  CHECK(again.ok()) << again.status();
  const ObjectDescription& a = location->object;
  const ObjectDescription& b = again->object;
  CHECK(a.data_size == b.data_size && a.metadata_size == b.metadata_size && a.generation == b.generation &&
        a.checksum == b.checksum);
}

void CheckNumber(absl::string_view digits) {
  absl::StatusOr<uint64_t> value = DirectoryCodec::ParseUint64(digits);
  if (!value.ok()) return;
  CHECK(!digits.empty() && digits.size() <= DirectoryCodec::kMaxUint64Digits);
  absl::StatusOr<uint64_t> again = DirectoryCodec::ParseUint64(absl::StrCat(*value));
  CHECK(again.ok() && *again == *value);
}

void CheckMember(absl::string_view member) {
  absl::StatusOr<ObjectID> id = DirectoryCodec::DecodeObjectMember(member);
  if (!id.ok()) return;
  CHECK(id->Hex() == absl::AsciiStrToLower(member)) << member;
}

void CheckKeys(absl::string_view prefix, absl::string_view node_id) {
  if (!DirectoryCodec::IsValidPrefix(prefix)) return;
  CHECK(prefix.size() <= DirectoryCodec::kMaxPrefixLength);
  const DirectoryCodec codec{std::string(prefix)};
  CHECK(absl::StartsWith(codec.NodeKey(node_id), prefix));
  CHECK(absl::StartsWith(codec.NodesKey(), prefix));
  CHECK(absl::StartsWith(codec.NodeObjectsKey(node_id), prefix));
}

}  // namespace
}  // namespace rplasma

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t newline = input.find('\n');
  const absl::string_view key = input.substr(0, newline);
  const absl::string_view value = newline == absl::string_view::npos ? absl::string_view() : input.substr(newline + 1);
  rplasma::CheckNodeRecord(key, value);
  rplasma::CheckLocation(key, value);
  rplasma::CheckNumber(value);
  rplasma::CheckMember(value);
  rplasma::CheckKeys(key, value);
  return 0;
}
