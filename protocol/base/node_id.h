// Node ids: the name a manager process goes by in the directory, in peer replies and in fetch
// hints (name + random suffix, unique per process): [A-Za-z0-9._:-]{1,128}.
#ifndef RPLASMA_PROTOCOL_BASE_NODE_ID_H_
#define RPLASMA_PROTOCOL_BASE_NODE_ID_H_

#include <cstddef>

#include "absl/strings/string_view.h"

namespace rplasma {

inline constexpr size_t kMaxNodeIdLength = 128;

bool IsValidNodeId(absl::string_view node_id);

}  // namespace rplasma

#endif  // RPLASMA_PROTOCOL_BASE_NODE_ID_H_
