#include "protocol/base/node_id.h"

#include "absl/strings/ascii.h"

namespace rplasma {

bool IsValidNodeId(absl::string_view node_id) {
  if (node_id.empty() || node_id.size() > kMaxNodeIdLength) return false;
  for (char c : node_id) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != ':' && c != '-') {
      return false;
    }
  }
  return true;
}

}  // namespace rplasma
