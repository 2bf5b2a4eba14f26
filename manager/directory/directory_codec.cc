#include "manager/directory/directory_codec.h"

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"

#include "protocol/base/node_id.h"
#include "protocol/base/status.h"

namespace rplasma {
namespace {

bool IsAddressChar(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == ':' || c == '-' ||
         c == '%' || c == '[' || c == ']';
}

// Quotes at most a few bytes of untrusted input for an error message.
std::string Quote(absl::string_view untrusted) {
  constexpr size_t kMaxQuoted = 48;
  std::string quoted = absl::CHexEscape(untrusted.substr(0, kMaxQuoted));
  if (untrusted.size() > kMaxQuoted) absl::StrAppend(&quoted, "...(", untrusted.size(), " bytes)");
  return quoted;
}

absl::Status Malformed(absl::string_view what, absl::string_view value, absl::string_view why) {
  return ProtocolError(absl::StrFormat("malformed %s \"%s\": %s", what, Quote(value), why));
}

// "name=<value>" -> value (possibly empty), if the name matches.
bool TakeField(absl::string_view field, absl::string_view name, absl::string_view* value) {
  if (field.size() < name.size() + 1 || field.substr(0, name.size()) != name || field[name.size()] != '=') {
    return false;
  }
  *value = field.substr(name.size() + 1);
  return true;
}

}  // namespace

bool DirectoryCodec::IsValidNodeId(absl::string_view node_id) { return rplasma::IsValidNodeId(node_id); }

bool DirectoryCodec::IsValidPrefix(absl::string_view prefix) {
  return !prefix.empty() && prefix.size() <= kMaxPrefixLength && IsValidNodeId(prefix);
}

bool DirectoryCodec::IsValidAddress(absl::string_view address) {
  if (address.size() > kMaxAddressLength) return false;
  for (char c : address) {
    if (!IsAddressChar(c)) return false;
  }
  return true;
}

absl::StatusOr<uint64_t> DirectoryCodec::ParseUint64(absl::string_view digits) {
  if (digits.empty()) return Malformed("number", digits, "empty");
  if (digits.size() > kMaxUint64Digits) return Malformed("number", digits, "more than 20 digits");
  uint64_t value = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return Malformed("number", digits, "not a decimal digit");
    uint64_t digit = static_cast<uint64_t>(c - '0');
    if (value > (UINT64_MAX - digit) / 10) return Malformed("number", digits, "does not fit in 64 bits");
    value = value * 10 + digit;
  }
  return value;
}

std::string DirectoryCodec::NodeKey(absl::string_view node_id) const {
  return absl::StrCat(prefix_, ":node:", node_id);
}

std::string DirectoryCodec::NodesKey() const { return absl::StrCat(prefix_, ":nodes"); }

std::string DirectoryCodec::ObjectKey(const ObjectID& id) const { return absl::StrCat(prefix_, ":obj:", id.Hex()); }

std::string DirectoryCodec::NodeObjectsKey(absl::string_view node_id) const {
  return absl::StrCat(prefix_, ":node-objects:", node_id);
}

std::string DirectoryCodec::EncodeNodeRecord(const NodeRecord& node) {
  return absl::StrCat("epoch=", node.epoch, "|tcp=", node.tcp_address, "|verbs=", node.verbs_address);
}

absl::StatusOr<NodeRecord> DirectoryCodec::DecodeNodeRecord(absl::string_view node_id, absl::string_view value) {
  if (!IsValidNodeId(node_id)) return Malformed("node id", node_id, "not [A-Za-z0-9._:-]{1,128}");
  if (value.size() > kMaxNodeValueLength) return Malformed("node record", value, "too long");
  std::vector<absl::string_view> fields = absl::StrSplit(value, '|');
  absl::string_view epoch, tcp, verbs;
  if (fields.size() != 3 || !TakeField(fields[0], "epoch", &epoch) || !TakeField(fields[1], "tcp", &tcp) ||
      !TakeField(fields[2], "verbs", &verbs)) {
    return Malformed("node record", value, "want epoch=<n>|tcp=<address>|verbs=<address>");
  }
  NodeRecord node;
  ASSIGN_OR_RETURN(node.epoch, ParseUint64(epoch));
  if (!IsValidAddress(tcp)) return Malformed("node record", value, "bad tcp address");
  if (!IsValidAddress(verbs)) return Malformed("node record", value, "bad verbs address");
  node.node_id = std::string(node_id);
  node.tcp_address = std::string(tcp);
  node.verbs_address = std::string(verbs);
  return node;
}

std::string DirectoryCodec::EncodeLocation(const ObjectLocation& location) {
  const ObjectDescription& o = location.object;
  return absl::StrCat(o.data_size, ",", o.metadata_size, ",", o.generation, ",", o.checksum);
}

absl::StatusOr<ObjectLocation> DirectoryCodec::DecodeLocation(absl::string_view node_id, absl::string_view value) {
  if (!IsValidNodeId(node_id)) return Malformed("node id", node_id, "not [A-Za-z0-9._:-]{1,128}");
  if (value.size() > kMaxLocationValueLength) return Malformed("location", value, "too long");
  // Four fields, split in place (a lookup decodes one per id and copy).
  absl::string_view parts[4];
  size_t fields = 0;
  for (absl::string_view part : absl::StrSplit(value, ',')) {
    if (fields == 4) return Malformed("location", value, "want size,metadata_size,generation,checksum");
    parts[fields++] = part;
  }
  if (fields != 4) return Malformed("location", value, "want size,metadata_size,generation,checksum");
  ObjectLocation location;
  location.node_id = std::string(node_id);
  ASSIGN_OR_RETURN(location.object.data_size, ParseUint64(parts[0]));
  ASSIGN_OR_RETURN(location.object.metadata_size, ParseUint64(parts[1]));
  ASSIGN_OR_RETURN(location.object.generation, ParseUint64(parts[2]));
  ASSIGN_OR_RETURN(location.object.checksum, ParseUint64(parts[3]));
  return location;
}

absl::StatusOr<ObjectID> DirectoryCodec::DecodeObjectMember(absl::string_view member) {
  if (member.size() != 2 * ObjectID::kSize) return Malformed("object id", member, "want 40 hex digits");
  return ObjectID::FromHex(member);
}

}  // namespace rplasma
