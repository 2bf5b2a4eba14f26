// ObjectDescription: what identifies a sealed object's bytes — its sizes, its generation, and the
// checksum taken at seal. Plain data.
//
// The same four facts travel everywhere an object is described: the store's ObjectInfo
// (ObjectInfo::description()), the owner's Get/Pin reply on the peer protocol, and a directory
// entry (ObjectLocation::object). The owner's word is the truth; a directory entry only a hint
// (the object may have been deleted, evicted or re-created with a new generation since).
#ifndef RPLASMA_PROTOCOL_OBJECT_DESCRIPTION_H_
#define RPLASMA_PROTOCOL_OBJECT_DESCRIPTION_H_

#include <cstdint>

namespace rplasma {

struct ObjectDescription {
  uint64_t data_size = 0;
  uint64_t metadata_size = 0;
  uint64_t generation = 0;  // new at every Create of the id, never reused (also across store restarts)
  uint64_t checksum = 0;    // what the creator sent at seal (the client computes XXH3-64)

  uint64_t total_size() const { return data_size + metadata_size; }
};

}  // namespace rplasma

#endif  // RPLASMA_PROTOCOL_OBJECT_DESCRIPTION_H_
