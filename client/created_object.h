// CreatedObject: an object created in this process's mapping of the store's arena and not yet
// sealed — the one name for it in the client (Client::Create) and in the manager (LocalStore::Create,
// the destination of a fetch). `data` and `metadata` are contiguous in the arena, metadata right
// after data: [data.data(), data.data() + data.size() + metadata.size()) is the whole object.
// Plain data; the spans stay valid while the arena is mapped.
#ifndef RPLASMA_CLIENT_CREATED_OBJECT_H_
#define RPLASMA_CLIENT_CREATED_OBJECT_H_

#include <cstdint>

#include "absl/types/span.h"

#include "protocol/base/object_id.h"

namespace rplasma {

struct CreatedObject {
  ObjectID id;
  absl::Span<uint8_t> data;
  absl::Span<uint8_t> metadata;
  uint64_t offset = 0;  // in the arena
  uint64_t generation = 0;

  uint8_t* base() const { return data.data(); }
  uint64_t total_size() const { return data.size() + metadata.size(); }
};

}  // namespace rplasma

#endif  // RPLASMA_CLIENT_CREATED_OBJECT_H_
