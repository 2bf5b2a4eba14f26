#include "protocol/store_messages.h"

#include <cstring>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "flatbuffers/flatbuffers.h"

#include "protocol/object_id_fb.h"
#include "protocol/store_generated.h"

namespace rplasma {
namespace {

namespace fb = ::rplasma::fb;
using flatbuffers::FlatBufferBuilder;
using flatbuffers::Offset;

fb::ObjectInfoFb ToFb(const ObjectInfo& o) {
  return fb::ObjectInfoFb(ObjectIdToFb(o.id), o.offset, o.data_size, o.metadata_size, o.generation, o.checksum,
                          o.ref_count, static_cast<uint16_t>(o.error), static_cast<fb::ObjectStateFb>(o.state));
}

absl::StatusOr<ObjectInfo> FromFb(const fb::ObjectInfoFb& o) {
  if (static_cast<uint8_t>(o.state()) > static_cast<uint8_t>(ObjectState::kSealed)) {
    return ProtocolError("object info: unknown state");
  }
  ObjectInfo out;
  out.id = ObjectIdFromFb(o.id());
  out.error = ErrorCodeFromWire(o.error());
  out.state = static_cast<ObjectState>(o.state());
  out.offset = o.offset();
  out.data_size = o.data_size();
  out.metadata_size = o.metadata_size();
  out.generation = o.generation();
  out.checksum = o.checksum();
  out.ref_count = o.ref_count();
  return out;
}

// FromFb of an element of a vector of structs. The Verifier (flatbuffers 2.0.8) does not check
// that a vector's 8-byte structs are aligned, so the struct is copied out before its fields are read.
absl::StatusOr<ObjectInfo> FromFbInVector(const fb::ObjectInfoFb* o) {
  fb::ObjectInfoFb aligned;
  std::memcpy(&aligned, o, sizeof(aligned));
  return FromFb(aligned);
}

// An event of `kind` (as on the wire, unchecked) about `object`.
absl::StatusOr<ObjectEvent> EventFromFb(fb::EventKindFb kind, absl::StatusOr<ObjectInfo> object) {
  if (static_cast<uint8_t>(kind) > static_cast<uint8_t>(EventKind::kEvicted)) {
    return ProtocolError("event: unknown kind");
  }
  RETURN_IF_ERROR(object.status());
  return ObjectEvent{static_cast<EventKind>(kind), *std::move(object)};
}

// Ids of a request: required, 1..kMaxIdsPerRequest.
absl::StatusOr<std::vector<ObjectID>> DecodeIds(const flatbuffers::Vector<const idfb::ObjectIdFb*>* ids,
                                                absl::string_view what) {
  if (ids == nullptr || ids->size() == 0) {
    return MakeError(ErrorCode::kInvalidArgument, absl::StrCat(what, ": no object ids"));
  }
  if (ids->size() > kMaxIdsPerRequest) {
    return MakeError(ErrorCode::kInvalidArgument,
                     absl::StrCat(what, ": ", ids->size(), " ids exceed the limit of ", kMaxIdsPerRequest));
  }
  std::vector<ObjectID> out;
  out.reserve(ids->size());
  for (const idfb::ObjectIdFb* id : *ids) out.push_back(ObjectIdFromFb(*id));
  return out;
}

absl::StatusOr<ObjectID> RequireId(const idfb::ObjectIdFb* id, absl::string_view what) {
  if (id == nullptr) return MakeError(ErrorCode::kInvalidArgument, absl::StrCat(what, ": missing object id"));
  return ObjectIdFromFb(*id);
}

absl::StatusOr<CreateRequest> DecodeCreate(const fb::CreateRequest& m) {
  CreateRequest out;
  ASSIGN_OR_RETURN(out.id, RequireId(m.id(), "create"));
  out.data_size = m.data_size();
  out.metadata_size = m.metadata_size();
  out.evict_if_full = m.evict_if_full();
  if (out.data_size > kMaxObjectBytes || out.metadata_size > kMaxObjectBytes ||
      out.data_size + out.metadata_size > kMaxObjectBytes) {
    return MakeError(ErrorCode::kInvalidArgument,
                     absl::StrCat("create(", out.id.Hex(), "): size ", out.data_size, "+", out.metadata_size,
                                  " exceeds the limit of ", kMaxObjectBytes));
  }
  return out;
}

absl::StatusOr<SealRequest> DecodeSeal(const fb::SealRequest& m) {
  SealRequest out;
  ASSIGN_OR_RETURN(out.id, RequireId(m.id(), "seal"));
  out.checksum = m.checksum();
  out.release = m.release();
  return out;
}

absl::StatusOr<PutRequest> DecodePut(const fb::PutRequest& m) {
  PutRequest out;
  ASSIGN_OR_RETURN(out.id, RequireId(m.id(), "put"));
  if (m.data() != nullptr) out.data = {m.data()->data(), m.data()->size()};
  if (m.metadata() != nullptr) out.metadata = {m.metadata()->data(), m.metadata()->size()};
  out.checksum = m.checksum();
  out.evict_if_full = m.evict_if_full();
  if (out.data.size() + out.metadata.size() > kMaxInlinePutBytes) {
    return MakeError(ErrorCode::kInvalidArgument,
                     absl::StrCat("put(", out.id.Hex(), "): ", out.data.size(), "+", out.metadata.size(),
                                  " bytes inline exceed the limit of ", kMaxInlinePutBytes));
  }
  return out;
}

// A batch's objects: required, 1..kMaxIdsPerRequest, each checked by `decode_one` exactly as its
// single request is. The first bad object fails the whole batch, naming its index.
template <typename T, typename FbT>
absl::StatusOr<std::vector<T>> DecodeObjects(const flatbuffers::Vector<Offset<FbT>>* objects, absl::string_view what,
                                             absl::StatusOr<T> (*decode_one)(const FbT&)) {
  if (objects == nullptr || objects->size() == 0) {
    return MakeError(ErrorCode::kInvalidArgument, absl::StrCat(what, ": no objects"));
  }
  if (objects->size() > kMaxIdsPerRequest) {
    return MakeError(ErrorCode::kInvalidArgument,
                     absl::StrCat(what, ": ", objects->size(), " objects exceed the limit of ", kMaxIdsPerRequest));
  }
  std::vector<T> out;
  out.reserve(objects->size());
  for (flatbuffers::uoffset_t i = 0; i < objects->size(); ++i) {
    const FbT* object = objects->Get(i);
    if (object == nullptr) return ProtocolError(absl::StrCat(what, ": object ", i, " missing"));
    absl::StatusOr<T> decoded = decode_one(*object);
    if (!decoded.ok()) {
      return MakeError(ErrorCodeOf(decoded.status()),
                       absl::StrCat(what, ", object ", i, ": ", decoded.status().message()));
    }
    out.push_back(*std::move(decoded));
  }
  return out;
}

absl::StatusOr<RequestBody> DecodeBody(const fb::StoreRequest& r) {
  // The verifier accepts a union whose type is set but whose table is absent.
  if (r.body() == nullptr) return ProtocolError("request: missing body");
  switch (r.body_type()) {
    case fb::RequestBody::ConnectRequest: {
      const auto* m = r.body_as_ConnectRequest();
      ConnectRequest out;
      if (m->client_name() != nullptr) {
        if (m->client_name()->size() > kMaxClientNameBytes) {
          return MakeError(ErrorCode::kInvalidArgument, "connect: client name too long");
        }
        out.client_name = m->client_name()->str();
      }
      out.shared_index = m->shared_index();
      return out;
    }
    case fb::RequestBody::CreateRequest: return DecodeCreate(*r.body_as_CreateRequest());
    case fb::RequestBody::SealRequest: return DecodeSeal(*r.body_as_SealRequest());
    case fb::RequestBody::AbortRequest: {
      AbortRequest out;
      ASSIGN_OR_RETURN(out.id, RequireId(r.body_as_AbortRequest()->id(), "abort"));
      return out;
    }
    case fb::RequestBody::GetRequest: {
      const auto* m = r.body_as_GetRequest();
      GetRequest out;
      ASSIGN_OR_RETURN(out.ids, DecodeIds(m->ids(), "get"));
      out.timeout_ms = m->timeout_ms();
      if (out.timeout_ms < -1) return MakeError(ErrorCode::kInvalidArgument, "get: timeout must be >= -1");
      return out;
    }
    case fb::RequestBody::ReleaseRequest: {
      ReleaseRequest out;
      ASSIGN_OR_RETURN(out.ids, DecodeIds(r.body_as_ReleaseRequest()->ids(), "release"));
      out.no_reply = r.body_as_ReleaseRequest()->no_reply();
      return out;
    }
    case fb::RequestBody::ContainsRequest: {
      ContainsRequest out;
      ASSIGN_OR_RETURN(out.ids, DecodeIds(r.body_as_ContainsRequest()->ids(), "contains"));
      return out;
    }
    case fb::RequestBody::DeleteRequest: {
      DeleteRequest out;
      ASSIGN_OR_RETURN(out.ids, DecodeIds(r.body_as_DeleteRequest()->ids(), "delete"));
      return out;
    }
    case fb::RequestBody::EvictRequest: return EvictRequest{r.body_as_EvictRequest()->bytes()};
    case fb::RequestBody::ListRequest: {
      const auto* m = r.body_as_ListRequest();
      ListRequest out;
      if (m->start_after() != nullptr) out.start_after = ObjectIdFromFb(*m->start_after());
      out.limit = m->limit();
      if (out.limit == 0 || out.limit > kMaxListPage) {
        return MakeError(ErrorCode::kInvalidArgument, absl::StrCat("list: limit must be 1..", kMaxListPage));
      }
      return out;
    }
    case fb::RequestBody::StatsRequest: return StatsRequest{};
    case fb::RequestBody::SlotsReleasedRequest: return SlotsReleasedRequest{};
    case fb::RequestBody::SubscribeRequest: return SubscribeRequest{r.body_as_SubscribeRequest()->include_existing()};
    case fb::RequestBody::PutRequest: return DecodePut(*r.body_as_PutRequest());
    case fb::RequestBody::CreateBatchRequest: {
      CreateBatchRequest out;
      ASSIGN_OR_RETURN(out.objects,
                       DecodeObjects(r.body_as_CreateBatchRequest()->objects(), "create batch", DecodeCreate));
      return out;
    }
    case fb::RequestBody::SealBatchRequest: {
      SealBatchRequest out;
      ASSIGN_OR_RETURN(out.objects, DecodeObjects(r.body_as_SealBatchRequest()->objects(), "seal batch", DecodeSeal));
      return out;
    }
    case fb::RequestBody::PutBatchRequest: {
      PutBatchRequest out;
      ASSIGN_OR_RETURN(out.objects, DecodeObjects(r.body_as_PutBatchRequest()->objects(), "put batch", DecodePut));
      return out;
    }
    case fb::RequestBody::NONE: break;
  }
  return ProtocolError(absl::StrCat("request: unknown body type ", static_cast<int>(r.body_type())));
}

// Room for the whole request up front, so an inline Put is not regrown (and copied) while built.
size_t InitialBuilderBytes(const RequestBody& body) {
  if (const auto* put = std::get_if<PutRequest>(&body)) return 256 + put->data.size() + put->metadata.size();
  if (const auto* batch = std::get_if<PutBatchRequest>(&body)) {
    size_t bytes = 256;
    for (const PutRequest& p : batch->objects) bytes += 128 + p.data.size() + p.metadata.size();
    return bytes;
  }
  return 128;
}

Offset<fb::CreateRequest> EncodeCreate(FlatBufferBuilder& b, const CreateRequest& m) {
  idfb::ObjectIdFb id = ObjectIdToFb(m.id);
  return fb::CreateCreateRequest(b, &id, m.data_size, m.metadata_size, m.evict_if_full);
}

Offset<fb::SealRequest> EncodeSeal(FlatBufferBuilder& b, const SealRequest& m) {
  idfb::ObjectIdFb id = ObjectIdToFb(m.id);
  return fb::CreateSealRequest(b, &id, m.checksum, m.release);
}

Offset<fb::PutRequest> EncodePut(FlatBufferBuilder& b, const PutRequest& m) {
  idfb::ObjectIdFb id = ObjectIdToFb(m.id);
  auto data = b.CreateVector(m.data.data(), m.data.size());
  auto metadata = b.CreateVector(m.metadata.data(), m.metadata.size());
  return fb::CreatePutRequest(b, &id, data, metadata, m.checksum, m.evict_if_full);
}

// A batch's objects as a vector of tables (each built before the vector, as flatbuffers requires).
template <typename T, typename FbT>
Offset<flatbuffers::Vector<Offset<FbT>>> EncodeObjects(FlatBufferBuilder& b, const std::vector<T>& objects,
                                                       Offset<FbT> (*encode_one)(FlatBufferBuilder&, const T&)) {
  std::vector<Offset<FbT>> offsets;
  offsets.reserve(objects.size());
  for (const T& object : objects) offsets.push_back(encode_one(b, object));
  return b.CreateVector(offsets);
}

template <typename T>
std::string Finish(FlatBufferBuilder& b, Offset<T> root) {
  b.Finish(root);
  return std::string(reinterpret_cast<const char*>(b.GetBufferPointer()), b.GetSize());
}

}  // namespace

std::string EncodeRequest(const Request& request) {
  FlatBufferBuilder b(InitialBuilderBytes(request.body));
  auto [type, body] = std::visit(
      [&b](const auto& m) -> std::pair<fb::RequestBody, Offset<void>> {
        using T = std::decay_t<decltype(m)>;
        if constexpr (std::is_same_v<T, ConnectRequest>) {
          return {fb::RequestBody::ConnectRequest,
                  fb::CreateConnectRequest(b, b.CreateString(m.client_name), m.shared_index).Union()};
        } else if constexpr (std::is_same_v<T, CreateRequest>) {
          return {fb::RequestBody::CreateRequest, EncodeCreate(b, m).Union()};
        } else if constexpr (std::is_same_v<T, SealRequest>) {
          return {fb::RequestBody::SealRequest, EncodeSeal(b, m).Union()};
        } else if constexpr (std::is_same_v<T, AbortRequest>) {
          idfb::ObjectIdFb id = ObjectIdToFb(m.id);
          return {fb::RequestBody::AbortRequest, fb::CreateAbortRequest(b, &id).Union()};
        } else if constexpr (std::is_same_v<T, GetRequest>) {
          return {fb::RequestBody::GetRequest,
                  fb::CreateGetRequest(b, ObjectIdVectorToFb(b, m.ids), m.timeout_ms).Union()};
        } else if constexpr (std::is_same_v<T, ReleaseRequest>) {
          return {fb::RequestBody::ReleaseRequest,
                  fb::CreateReleaseRequest(b, ObjectIdVectorToFb(b, m.ids), m.no_reply).Union()};
        } else if constexpr (std::is_same_v<T, ContainsRequest>) {
          return {fb::RequestBody::ContainsRequest, fb::CreateContainsRequest(b, ObjectIdVectorToFb(b, m.ids)).Union()};
        } else if constexpr (std::is_same_v<T, DeleteRequest>) {
          return {fb::RequestBody::DeleteRequest, fb::CreateDeleteRequest(b, ObjectIdVectorToFb(b, m.ids)).Union()};
        } else if constexpr (std::is_same_v<T, EvictRequest>) {
          return {fb::RequestBody::EvictRequest, fb::CreateEvictRequest(b, m.bytes).Union()};
        } else if constexpr (std::is_same_v<T, ListRequest>) {
          idfb::ObjectIdFb id;
          if (m.start_after) id = ObjectIdToFb(*m.start_after);
          return {fb::RequestBody::ListRequest,
                  fb::CreateListRequest(b, m.start_after ? &id : nullptr, m.limit).Union()};
        } else if constexpr (std::is_same_v<T, StatsRequest>) {
          return {fb::RequestBody::StatsRequest, fb::CreateStatsRequest(b).Union()};
        } else if constexpr (std::is_same_v<T, SlotsReleasedRequest>) {
          return {fb::RequestBody::SlotsReleasedRequest, fb::CreateSlotsReleasedRequest(b).Union()};
        } else if constexpr (std::is_same_v<T, SubscribeRequest>) {
          return {fb::RequestBody::SubscribeRequest, fb::CreateSubscribeRequest(b, m.include_existing).Union()};
        } else if constexpr (std::is_same_v<T, PutRequest>) {
          return {fb::RequestBody::PutRequest, EncodePut(b, m).Union()};
        } else if constexpr (std::is_same_v<T, CreateBatchRequest>) {
          return {fb::RequestBody::CreateBatchRequest,
                  fb::CreateCreateBatchRequest(b, EncodeObjects(b, m.objects, EncodeCreate)).Union()};
        } else if constexpr (std::is_same_v<T, SealBatchRequest>) {
          return {fb::RequestBody::SealBatchRequest,
                  fb::CreateSealBatchRequest(b, EncodeObjects(b, m.objects, EncodeSeal)).Union()};
        } else {
          static_assert(std::is_same_v<T, PutBatchRequest>);
          return {fb::RequestBody::PutBatchRequest,
                  fb::CreatePutBatchRequest(b, EncodeObjects(b, m.objects, EncodePut)).Union()};
        }
      },
      request.body);
  return Finish(b, fb::CreateStoreRequest(b, request.request_id, type, body));
}

absl::StatusOr<Request> DecodeRequest(absl::string_view payload, uint64_t* request_id) {
  flatbuffers::Verifier verifier(reinterpret_cast<const uint8_t*>(payload.data()), payload.size());
  if (!verifier.VerifyBuffer<fb::StoreRequest>(nullptr)) {
    return ProtocolError("request: flatbuffer verification failed");
  }
  const auto* r = flatbuffers::GetRoot<fb::StoreRequest>(payload.data());
  Request out;
  out.request_id = r->request_id();
  if (request_id != nullptr) *request_id = out.request_id;
  ASSIGN_OR_RETURN(out.body, DecodeBody(*r));
  return out;
}

std::string EncodeReply(const Reply& reply) {
  FlatBufferBuilder b(128);
  auto [type, body] = std::visit(
      [&b](const auto& m) -> std::pair<fb::ReplyBody, Offset<void>> {
        using T = std::decay_t<decltype(m)>;
        if constexpr (std::is_same_v<T, ConnectReply>) {
          return {fb::ReplyBody::ConnectReply, fb::CreateConnectReply(b, m.arena_size, b.CreateString(m.store_name),
                                                                      m.max_ids_per_request, m.index_entries, m.slots)
                                                   .Union()};
        } else if constexpr (std::is_same_v<T, CreateReply>) {
          return {fb::ReplyBody::CreateReply, fb::CreateCreateReply(b, m.offset, m.generation).Union()};
        } else if constexpr (std::is_same_v<T, EmptyReply>) {
          return {fb::ReplyBody::EmptyReply, fb::CreateEmptyReply(b).Union()};
        } else if constexpr (std::is_same_v<T, ObjectsReply>) {
          std::vector<fb::ObjectInfoFb> v;
          v.reserve(m.objects.size());
          for (const ObjectInfo& o : m.objects) v.push_back(ToFb(o));
          return {fb::ReplyBody::ObjectsReply, fb::CreateObjectsReply(b, b.CreateVectorOfStructs(v), m.more).Union()};
        } else if constexpr (std::is_same_v<T, CodesReply>) {
          std::vector<uint16_t> v;
          v.reserve(m.codes.size());
          for (ErrorCode c : m.codes) v.push_back(static_cast<uint16_t>(c));
          return {fb::ReplyBody::CodesReply, fb::CreateCodesReply(b, b.CreateVector(v)).Union()};
        } else if constexpr (std::is_same_v<T, EvictReply>) {
          return {fb::ReplyBody::EvictReply, fb::CreateEvictReply(b, m.bytes_evicted, m.objects_evicted).Union()};
        } else if constexpr (std::is_same_v<T, StatsReply>) {
          return {fb::ReplyBody::StatsReply,
                  fb::CreateStatsReply(b, m.capacity, m.used_bytes, m.objects_created, m.objects_sealed, m.ref_count,
                                       m.clients, m.evictions, m.evicted_bytes, m.free_blocks, m.largest_free_block,
                                       m.fragmentation, m.waiting_gets, m.subscribers, m.indexed_objects,
                                       m.slot_references, m.reclaims_waiting)
                      .Union()};
        } else if constexpr (std::is_same_v<T, ObjectEvent>) {
          fb::ObjectInfoFb info = ToFb(m.object);
          return {fb::ReplyBody::ObjectEvent,
                  fb::CreateObjectEvent(b, static_cast<fb::EventKindFb>(m.kind), &info).Union()};
        } else {
          static_assert(std::is_same_v<T, ObjectEvents>);
          std::vector<fb::EventKindFb> kinds;
          std::vector<fb::ObjectInfoFb> objects;
          kinds.reserve(m.events.size());
          objects.reserve(m.events.size());
          for (const ObjectEvent& e : m.events) {
            kinds.push_back(static_cast<fb::EventKindFb>(e.kind));
            objects.push_back(ToFb(e.object));
          }
          const auto kinds_offset = b.CreateVector(kinds);
          const auto objects_offset = b.CreateVectorOfStructs(objects);
          return {fb::ReplyBody::ObjectEvents, fb::CreateObjectEvents(b, kinds_offset, objects_offset).Union()};
        }
      },
      reply.body);
  auto message = reply.error_message.empty() ? Offset<flatbuffers::String>() : b.CreateString(reply.error_message);
  return Finish(b, fb::CreateStoreReply(b, reply.request_id, static_cast<uint16_t>(reply.error), message, type, body));
}

Reply ErrorReply(uint64_t request_id, const absl::Status& status) {
  Reply reply;
  reply.request_id = request_id;
  reply.error = ErrorCodeOf(status);
  reply.error_message = std::string(status.message());
  return reply;
}

absl::StatusOr<Reply> DecodeReply(absl::string_view payload) {
  flatbuffers::Verifier verifier(reinterpret_cast<const uint8_t*>(payload.data()), payload.size());
  if (!verifier.VerifyBuffer<fb::StoreReply>(nullptr)) {
    return ProtocolError("reply: flatbuffer verification failed");
  }
  const auto* r = flatbuffers::GetRoot<fb::StoreReply>(payload.data());
  Reply out;
  out.request_id = r->request_id();
  out.error = ErrorCodeFromWire(r->error());
  if (r->error_message() != nullptr) out.error_message = r->error_message()->str();
  if (r->body() == nullptr && r->body_type() != fb::ReplyBody::NONE) return ProtocolError("reply: missing body");
  switch (r->body_type()) {
    case fb::ReplyBody::ConnectReply: {
      const auto* m = r->body_as_ConnectReply();
      ConnectReply c;
      c.arena_size = m->arena_size();
      if (m->store_name() != nullptr) c.store_name = m->store_name()->str();
      c.max_ids_per_request = m->max_ids_per_request();
      c.index_entries = m->index_entries();
      c.slots = m->slots();
      out.body = std::move(c);
      break;
    }
    case fb::ReplyBody::CreateReply:
      out.body = CreateReply{r->body_as_CreateReply()->offset(), r->body_as_CreateReply()->generation()};
      break;
    case fb::ReplyBody::EmptyReply:
    case fb::ReplyBody::NONE: out.body = EmptyReply{}; break;
    case fb::ReplyBody::ObjectsReply: {
      const auto* m = r->body_as_ObjectsReply();
      ObjectsReply o;
      o.more = m->more();
      if (m->objects() != nullptr) {
        o.objects.reserve(m->objects()->size());
        for (const fb::ObjectInfoFb* info : *m->objects()) {
          ASSIGN_OR_RETURN(ObjectInfo decoded, FromFbInVector(info));
          o.objects.push_back(decoded);
        }
      }
      out.body = std::move(o);
      break;
    }
    case fb::ReplyBody::CodesReply: {
      const auto* m = r->body_as_CodesReply();
      CodesReply c;
      if (m->codes() != nullptr) {
        for (uint16_t code : *m->codes()) c.codes.push_back(ErrorCodeFromWire(code));
      }
      out.body = std::move(c);
      break;
    }
    case fb::ReplyBody::EvictReply:
      out.body = EvictReply{r->body_as_EvictReply()->bytes_evicted(), r->body_as_EvictReply()->objects_evicted()};
      break;
    case fb::ReplyBody::StatsReply: {
      const auto* m = r->body_as_StatsReply();
      out.body = StatsReply{
          m->capacity(),        m->used_bytes(),   m->objects_created(), m->objects_sealed(),  m->ref_count(),
          m->clients(),         m->evictions(),    m->evicted_bytes(),   m->free_blocks(),     m->largest_free_block(),
          m->fragmentation(),   m->waiting_gets(), m->subscribers(),     m->indexed_objects(), m->slot_references(),
          m->reclaims_waiting()};
      break;
    }
    case fb::ReplyBody::ObjectEvent: {
      const auto* m = r->body_as_ObjectEvent();
      if (m->object() == nullptr) return ProtocolError("event: missing object");
      ASSIGN_OR_RETURN(out.body, EventFromFb(m->kind(), FromFb(*m->object())));
      break;
    }
    case fb::ReplyBody::ObjectEvents: {
      const auto* m = r->body_as_ObjectEvents();
      if (m->kinds() == nullptr || m->objects() == nullptr || m->kinds()->size() != m->objects()->size()) {
        return ProtocolError("events: kinds and objects missing or of different counts");
      }
      if (m->kinds()->size() > kMaxEventsPerFrame) return ProtocolError("events: too many in one frame");
      ObjectEvents events;
      events.events.reserve(m->kinds()->size());
      for (flatbuffers::uoffset_t i = 0; i < m->kinds()->size(); ++i) {
        ASSIGN_OR_RETURN(ObjectEvent e, EventFromFb(m->kinds()->Get(i), FromFbInVector(m->objects()->Get(i))));
        events.events.push_back(e);
      }
      out.body = std::move(events);
      break;
    }
    default: return ProtocolError(absl::StrCat("reply: unknown body type ", static_cast<int>(r->body_type())));
  }
  return out;
}

}  // namespace rplasma
