// Conversions between ObjectID and its flatbuffers struct (protocol/object_id.fbs), the one id
// struct that the store, manager-client and peer schemas all include. For the *_messages.cc codecs
// only: like all generated code, the struct stays private to them.
#ifndef RPLASMA_PROTOCOL_OBJECT_ID_FB_H_
#define RPLASMA_PROTOCOL_OBJECT_ID_FB_H_

#include <cstring>
#include <vector>

#include "flatbuffers/flatbuffers.h"

#include "protocol/base/object_id.h"
#include "protocol/object_id_generated.h"

namespace rplasma {

// The wire form is exactly the id's bytes: no padding, no alignment beyond a byte.
static_assert(sizeof(idfb::ObjectIdFb) == ObjectID::kSize);
static_assert(alignof(idfb::ObjectIdFb) == 1);

inline idfb::ObjectIdFb ObjectIdToFb(const ObjectID& id) {
  idfb::ObjectIdFb out;
  std::memcpy(&out, id.data(), ObjectID::kSize);
  return out;
}

inline ObjectID ObjectIdFromFb(const idfb::ObjectIdFb& id) {
  ObjectID out;
  std::memcpy(out.mutable_data(), &id, ObjectID::kSize);
  return out;
}

// A vector of ids as a flatbuffers vector of structs.
inline flatbuffers::Offset<flatbuffers::Vector<const idfb::ObjectIdFb*>> ObjectIdVectorToFb(
    flatbuffers::FlatBufferBuilder& b, const std::vector<ObjectID>& ids) {
  std::vector<idfb::ObjectIdFb> v;
  v.reserve(ids.size());
  for (const ObjectID& id : ids) v.push_back(ObjectIdToFb(id));
  return b.CreateVectorOfStructs(v);
}

}  // namespace rplasma

#endif  // RPLASMA_PROTOCOL_OBJECT_ID_FB_H_
