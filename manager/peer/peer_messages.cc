#include "manager/peer/peer_messages.h"

#include <cstring>
#include <iterator>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "flatbuffers/flatbuffers.h"

#include "protocol/object_id_fb.h"
#include "protocol/peer_generated.h"

namespace rplasma::peer {
namespace {

namespace fb = ::rplasma::peerfb;
using flatbuffers::FlatBufferBuilder;

size_t Padded(size_t n) { return (n + 7) & ~size_t{7}; }

// Envelope + flatbuffer (padded), with room reserved for `payload_bytes` that the caller appends:
// the payload is copied once and never zero-filled first.
std::string Envelope(FlatBufferBuilder& b, size_t payload_bytes) {
  const size_t fb_len = b.GetSize();
  std::string out;
  out.reserve(kEnvelopeHeaderBytes + Padded(fb_len) + payload_bytes);
  const uint32_t header[2] = {kPeerMagic, static_cast<uint32_t>(fb_len)};
  out.append(reinterpret_cast<const char*>(header), sizeof(header));
  out.append(reinterpret_cast<const char*>(b.GetBufferPointer()), fb_len);
  out.append(Padded(fb_len) - fb_len, '\0');
  return out;
}

void AppendBytes(std::string& out, absl::Span<const uint8_t> bytes) {
  out.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

// The parts of an envelope. `fb` is 8-byte aligned (copied into `aligned` when the caller's buffer
// was not), so the generated accessors never read misaligned scalars.
struct Parsed {
  absl::string_view fb;
  absl::string_view payload;
  std::string aligned;
};

absl::Status ParseEnvelope(absl::string_view wire, Parsed& out) {
  if (wire.size() < kEnvelopeHeaderBytes) return ProtocolError("peer message: shorter than its header");
  uint32_t header[2];
  std::memcpy(header, wire.data(), sizeof(header));
  if (header[0] != kPeerMagic) return ProtocolError("peer message: bad magic");
  const uint64_t fb_len = header[1];
  if (fb_len == 0 || fb_len > wire.size() - kEnvelopeHeaderBytes) {
    return ProtocolError("peer message: flatbuffer length out of range");
  }
  const uint64_t padded = std::min<uint64_t>(Padded(fb_len), wire.size() - kEnvelopeHeaderBytes);
  out.fb = wire.substr(kEnvelopeHeaderBytes, fb_len);
  out.payload = wire.substr(kEnvelopeHeaderBytes + padded);
  if (reinterpret_cast<uintptr_t>(out.fb.data()) % 8 != 0) {
    out.aligned.assign(out.fb.data(), out.fb.size());
    out.fb = out.aligned;  // std::string storage from operator new is suitably aligned
  }
  return absl::OkStatus();
}

absl::Status CheckProbeBytes(uint64_t bytes) {
  if (bytes == 0 || bytes > kMaxProbeBytes) {
    return MakeError(ErrorCode::kInvalidArgument, absl::StrCat("probe: ", bytes, " bytes outside 1..", kMaxProbeBytes));
  }
  return absl::OkStatus();
}

absl::StatusOr<ObjectDescription> FromFb(const fb::ObjectDescription* o) {
  if (o == nullptr) return ProtocolError("peer reply: missing object description");
  ObjectDescription out{o->data_size(), o->metadata_size(), o->generation(), o->checksum()};
  if (out.data_size > kMaxPeerObjectBytes || out.metadata_size > kMaxPeerObjectBytes ||
      out.total_size() > kMaxPeerObjectBytes) {
    return ProtocolError(
        absl::StrCat("peer reply: object size ", out.data_size, "+", out.metadata_size, " out of range"));
  }
  return out;
}

flatbuffers::Offset<fb::ObjectDescription> ToFb(FlatBufferBuilder& b, const ObjectDescription& o) {
  return fb::CreateObjectDescription(b, o.data_size, o.metadata_size, o.generation, o.checksum);
}

// The lease ids of an UnpinBatch request. The flatbuffers Verifier (2.0.8) checks the alignment of
// a vector's length but not of its 8-byte elements, so a peer can place them anywhere: read each
// with memcpy instead of the vector's accessors (a misaligned load is undefined behaviour).
std::vector<uint64_t> LeaseIds(const flatbuffers::Vector<uint64_t>& leases) {
  std::vector<uint64_t> out(leases.size());
  for (size_t i = 0; i < out.size(); ++i) {
    uint64_t wire;
    std::memcpy(&wire, leases.Data() + i * sizeof(uint64_t), sizeof(uint64_t));
    out[i] = flatbuffers::EndianScalar(wire);
  }
  return out;
}

// Ids of a batch request: 1..kMaxBatchIds.
absl::StatusOr<std::vector<ObjectID>> BatchIds(const flatbuffers::Vector<const ::rplasma::idfb::ObjectIdFb*>* ids,
                                               absl::string_view what) {
  if (ids == nullptr || ids->size() == 0 || ids->size() > kMaxBatchIds) {
    return MakeError(ErrorCode::kInvalidArgument, absl::StrCat(what, ": need 1..", kMaxBatchIds, " ids"));
  }
  std::vector<ObjectID> out;
  out.reserve(ids->size());
  for (const ::rplasma::idfb::ObjectIdFb* id : *ids) out.push_back(ObjectIdFromFb(*id));
  return out;
}

flatbuffers::Offset<flatbuffers::Vector<const ::rplasma::idfb::ObjectIdFb*>> IdsToFb(FlatBufferBuilder& b,
                                                                                     const std::vector<ObjectID>& ids) {
  std::vector<::rplasma::idfb::ObjectIdFb> fb_ids;
  fb_ids.reserve(ids.size());
  for (const ObjectID& id : ids) fb_ids.push_back(ObjectIdToFb(id));
  return b.CreateVectorOfStructs(fb_ids);
}

// The status an error entry of a reply carries (its ErrorCode and message, "peer: "-prefixed).
absl::Status PeerError(uint16_t code, const flatbuffers::String* message) {
  return MakeError(ErrorCodeFromWire(code), absl::StrCat("peer: ", message ? message->str() : ""));
}

uint16_t WireCode(const absl::Status& status) {
  const ErrorCode code = ErrorCodeOf(status);
  return static_cast<uint16_t>(code == ErrorCode::kOk ? ErrorCode::kInternal : code);
}

flatbuffers::Offset<fb::PinReply> PinToFb(FlatBufferBuilder& b, const PinReply& reply) {
  return fb::CreatePinReply(b, ToFb(b, reply.object), reply.region.addr, reply.region.length, reply.region.rkey,
                            reply.lease_id, reply.lease_ttl_ms);
}

absl::StatusOr<PinReply> PinFromFb(const fb::PinReply* r) {
  if (r == nullptr) return ProtocolError("peer pin reply: missing body");
  ASSIGN_OR_RETURN(ObjectDescription object, FromFb(r->object()));
  if (r->length() != object.total_size()) {
    return ProtocolError(
        absl::StrCat("peer pin reply: region of ", r->length(), " bytes for an object of ", object.total_size()));
  }
  if (r->lease_id() == 0) return ProtocolError("peer pin reply: lease id 0");
  PinReply out;
  out.object = object;
  out.region = transport::RemoteRegion{r->addr(), r->length(), r->rkey()};
  out.lease_id = r->lease_id();
  out.lease_ttl_ms = r->lease_ttl_ms();
  return out;
}

absl::StatusOr<FetchBatchReplyView> FetchBatchFromFb(const fb::FetchBatchReply* r, absl::string_view payload) {
  // A batch request has 1..kMaxBatchIds ids, so no reply to one is empty.
  if (r->objects() == nullptr || r->objects()->size() == 0 || r->objects()->size() > kMaxBatchIds) {
    return ProtocolError("peer fetch-batch reply: no entries or too many");
  }
  FetchBatchReplyView out;
  out.objects.reserve(r->objects()->size());
  uint64_t at = 0;
  for (const fb::FetchOutcome* entry : *r->objects()) {
    const int kinds = (entry->error() != 0) + (entry->object() != nullptr) + (entry->pin() != nullptr);
    if (kinds != 1) return ProtocolError("peer fetch-batch reply: an entry is not exactly one of error, inline, pin");
    if (entry->error() != 0) {
      out.objects.emplace_back(PeerError(entry->error(), entry->error_message()));
    } else if (entry->pin() != nullptr) {
      ASSIGN_OR_RETURN(PinReply pin, PinFromFb(entry->pin()));
      out.objects.emplace_back(pin);
    } else {
      ASSIGN_OR_RETURN(ObjectDescription object, FromFb(entry->object()));
      if (object.total_size() > payload.size() - at) {
        return ProtocolError("peer fetch-batch reply: payload shorter than its entries");
      }
      out.objects.emplace_back(GetReplyView{object, payload.substr(at, object.total_size())});
      at += object.total_size();
    }
  }
  if (at != payload.size()) return ProtocolError("peer fetch-batch reply: payload longer than its entries");
  return out;
}

template <typename T>
std::string FinishRequest(FlatBufferBuilder& b, fb::PeerRequestBody type, flatbuffers::Offset<T> body) {
  b.Finish(fb::CreatePeerRequest(b, type, body.Union()));
  return Envelope(b, 0);
}

}  // namespace

std::string EncodeRequest(const PeerRequest& request) {
  FlatBufferBuilder b(128);
  return std::visit(
      [&](const auto& r) -> std::string {
        using T = std::decay_t<decltype(r)>;
        if constexpr (std::is_same_v<T, GetRequest>) {
          const ::rplasma::idfb::ObjectIdFb id = ObjectIdToFb(r.id);
          return FinishRequest(b, fb::PeerRequestBody::GetRequest, fb::CreateGetRequest(b, &id));
        } else if constexpr (std::is_same_v<T, PinRequest>) {
          const ::rplasma::idfb::ObjectIdFb id = ObjectIdToFb(r.id);
          return FinishRequest(b, fb::PeerRequestBody::PinRequest, fb::CreatePinRequest(b, &id));
        } else if constexpr (std::is_same_v<T, UnpinRequest>) {
          return FinishRequest(b, fb::PeerRequestBody::UnpinRequest, fb::CreateUnpinRequest(b, r.lease_id));
        } else if constexpr (std::is_same_v<T, ProbeGetRequest>) {
          return FinishRequest(b, fb::PeerRequestBody::ProbeGetRequest, fb::CreateProbeGetRequest(b, r.bytes));
        } else if constexpr (std::is_same_v<T, FetchBatchRequest>) {
          return FinishRequest(b, fb::PeerRequestBody::FetchBatchRequest,
                               fb::CreateFetchBatchRequest(b, IdsToFb(b, r.ids), r.inline_max, r.inline_budget));
        } else if constexpr (std::is_same_v<T, UnpinBatchRequest>) {
          return FinishRequest(b, fb::PeerRequestBody::UnpinBatchRequest,
                               fb::CreateUnpinBatchRequest(b, b.CreateVector(r.lease_ids)));
        } else {
          return FinishRequest(b, fb::PeerRequestBody::ProbePinRequest, fb::CreateProbePinRequest(b, r.bytes));
        }
      },
      request);
}

absl::StatusOr<PeerRequest> DecodeRequest(absl::string_view wire) {
  Parsed parsed;
  RETURN_IF_ERROR(ParseEnvelope(wire, parsed));
  if (!parsed.payload.empty()) return ProtocolError("peer request: unexpected payload");
  flatbuffers::Verifier verifier(reinterpret_cast<const uint8_t*>(parsed.fb.data()), parsed.fb.size());
  if (!fb::VerifyPeerRequestBuffer(verifier)) return ProtocolError("peer request: flatbuffer verification failed");
  const fb::PeerRequest* root = fb::GetPeerRequest(parsed.fb.data());
  // The verifier accepts a union type whose value is absent: every body pointer may be null.
  if (root->body() == nullptr) return ProtocolError("peer request: missing body");
  switch (root->body_type()) {
    case fb::PeerRequestBody::GetRequest: {
      const ::rplasma::idfb::ObjectIdFb* id = root->body_as_GetRequest()->id();
      if (id == nullptr) return MakeError(ErrorCode::kInvalidArgument, "get: missing object id");
      return GetRequest{ObjectIdFromFb(*id)};
    }
    case fb::PeerRequestBody::PinRequest: {
      const ::rplasma::idfb::ObjectIdFb* id = root->body_as_PinRequest()->id();
      if (id == nullptr) return MakeError(ErrorCode::kInvalidArgument, "pin: missing object id");
      return PinRequest{ObjectIdFromFb(*id)};
    }
    case fb::PeerRequestBody::UnpinRequest: return UnpinRequest{root->body_as_UnpinRequest()->lease_id()};
    case fb::PeerRequestBody::ProbeGetRequest: {
      const uint64_t bytes = root->body_as_ProbeGetRequest()->bytes();
      RETURN_IF_ERROR(CheckProbeBytes(bytes));
      return ProbeGetRequest{bytes};
    }
    case fb::PeerRequestBody::ProbePinRequest: {
      const uint64_t bytes = root->body_as_ProbePinRequest()->bytes();
      RETURN_IF_ERROR(CheckProbeBytes(bytes));
      return ProbePinRequest{bytes};
    }
    case fb::PeerRequestBody::FetchBatchRequest: {
      const fb::FetchBatchRequest* batch = root->body_as_FetchBatchRequest();
      ASSIGN_OR_RETURN(std::vector<ObjectID> ids, BatchIds(batch->ids(), "fetch-batch"));
      return FetchBatchRequest{std::move(ids), batch->inline_max(), batch->inline_budget()};
    }
    case fb::PeerRequestBody::UnpinBatchRequest: {
      const auto* leases = root->body_as_UnpinBatchRequest()->lease_ids();
      if (leases == nullptr || leases->size() == 0 || leases->size() > kMaxBatchIds) {
        return MakeError(ErrorCode::kInvalidArgument, absl::StrCat("unpin-batch: need 1..", kMaxBatchIds, " leases"));
      }
      return UnpinBatchRequest{LeaseIds(*leases)};
    }
    default: return ProtocolError("peer request: unknown or missing body");
  }
}

namespace {

// The envelope and flatbuffer of a Get reply, with room for `payload_bytes` after them.
std::string GetReplyHead(const ObjectDescription& object, size_t payload_bytes) {
  FlatBufferBuilder b(128);
  auto body = fb::CreateGetReply(b, ToFb(b, object));
  b.Finish(fb::CreatePeerReply(b, 0, 0, fb::PeerReplyBody::GetReply, body.Union()));
  return Envelope(b, payload_bytes);
}

}  // namespace

std::string EncodeGetReply(const ObjectDescription& object, absl::Span<const uint8_t> data,
                           absl::Span<const uint8_t> metadata) {
  std::string out = GetReplyHead(object, data.size() + metadata.size());
  AppendBytes(out, data);
  AppendBytes(out, metadata);
  return out;
}

std::string EncodeGetReplyHead(const ObjectDescription& object) { return GetReplyHead(object, 0); }

std::string EncodePinReply(const PinReply& reply) {
  FlatBufferBuilder b(128);
  auto body = PinToFb(b, reply);
  b.Finish(fb::CreatePeerReply(b, 0, 0, fb::PeerReplyBody::PinReply, body.Union()));
  return Envelope(b, 0);
}

namespace {

// The envelope and flatbuffer of a FetchBatch reply; with_payload reserves room for the inline bytes.
std::string FetchBatchHead(absl::Span<const FetchBatchEntry> entries, bool with_payload) {
  FlatBufferBuilder b(64 + 96 * entries.size());
  std::vector<flatbuffers::Offset<fb::FetchOutcome>> outcomes;
  outcomes.reserve(entries.size());
  size_t payload_bytes = 0;
  for (const FetchBatchEntry& e : entries) {
    if (!e.status.ok()) {
      outcomes.push_back(
          fb::CreateFetchOutcome(b, WireCode(e.status), b.CreateString(std::string(e.status.message()))));
    } else if (e.pin.has_value()) {
      outcomes.push_back(fb::CreateFetchOutcome(b, 0, 0, 0, PinToFb(b, *e.pin)));
    } else {
      outcomes.push_back(fb::CreateFetchOutcome(b, 0, 0, ToFb(b, e.object)));
      payload_bytes += e.bytes.size();
    }
  }
  auto body = fb::CreateFetchBatchReply(b, b.CreateVector(outcomes));
  b.Finish(fb::CreatePeerReply(b, 0, 0, fb::PeerReplyBody::FetchBatchReply, body.Union()));
  return Envelope(b, with_payload ? payload_bytes : 0);
}

}  // namespace

std::string EncodeFetchBatchReplyHead(absl::Span<const FetchBatchEntry> entries) {
  return FetchBatchHead(entries, /*with_payload=*/false);
}

std::string EncodeFetchBatchReply(absl::Span<const FetchBatchEntry> entries) {
  std::string out = FetchBatchHead(entries, /*with_payload=*/true);
  for (const FetchBatchEntry& e : entries) {
    if (e.status.ok() && !e.pin.has_value()) AppendBytes(out, e.bytes);
  }
  return out;
}

std::string EncodeUnpinReply() {
  FlatBufferBuilder b(64);
  auto body = fb::CreateUnpinReply(b);
  b.Finish(fb::CreatePeerReply(b, 0, 0, fb::PeerReplyBody::UnpinReply, body.Union()));
  return Envelope(b, 0);
}

std::string EncodeErrorReply(const absl::Status& status) {
  FlatBufferBuilder b(128);
  ErrorCode code = ErrorCodeOf(status);
  if (code == ErrorCode::kOk) code = ErrorCode::kInternal;  // an error reply is never OK
  auto message = b.CreateString(std::string(status.message()));
  b.Finish(fb::CreatePeerReply(b, static_cast<uint16_t>(code), message));
  return Envelope(b, 0);
}

absl::StatusOr<PeerReplyView> DecodeReply(absl::string_view wire) {
  Parsed parsed;
  RETURN_IF_ERROR(ParseEnvelope(wire, parsed));
  flatbuffers::Verifier verifier(reinterpret_cast<const uint8_t*>(parsed.fb.data()), parsed.fb.size());
  if (!verifier.VerifyBuffer<fb::PeerReply>(nullptr)) {
    return ProtocolError("peer reply: flatbuffer verification failed");
  }
  const fb::PeerReply* root = flatbuffers::GetRoot<fb::PeerReply>(parsed.fb.data());
  if (root->error() != 0) {
    ErrorCode code = ErrorCodeFromWire(root->error());
    const std::string message = root->error_message() ? root->error_message()->str() : "";
    return MakeError(code, absl::StrCat("peer: ", message));
  }
  if (root->body() == nullptr) return ProtocolError("peer reply: missing body");
  const bool payload_allowed =
      root->body_type() == fb::PeerReplyBody::GetReply || root->body_type() == fb::PeerReplyBody::FetchBatchReply;
  if (!payload_allowed && !parsed.payload.empty()) return ProtocolError("peer reply: unexpected payload");
  switch (root->body_type()) {
    case fb::PeerReplyBody::GetReply: {
      ASSIGN_OR_RETURN(ObjectDescription object, FromFb(root->body_as_GetReply()->object()));
      if (parsed.payload.size() != object.total_size()) {
        return ProtocolError(absl::StrCat("peer get reply: ", parsed.payload.size(), " payload bytes for an object of ",
                                          object.total_size()));
      }
      return GetReplyView{object, parsed.payload};
    }
    case fb::PeerReplyBody::PinReply: {
      ASSIGN_OR_RETURN(PinReply pin, PinFromFb(root->body_as_PinReply()));
      return pin;
    }
    case fb::PeerReplyBody::UnpinReply: return UnpinReply{};
    case fb::PeerReplyBody::FetchBatchReply: {
      ASSIGN_OR_RETURN(FetchBatchReplyView batch, FetchBatchFromFb(root->body_as_FetchBatchReply(), parsed.payload));
      return batch;
    }
    default: return ProtocolError("peer reply: unknown or missing body");
  }
}

absl::string_view RequestName(const PeerRequest& request) {
  static constexpr absl::string_view kNames[] = {"get",       "pin",         "unpin",      "probe-get",
                                                 "probe-pin", "fetch-batch", "unpin-batch"};
  static_assert(std::size(kNames) == std::variant_size_v<PeerRequest>);
  return kNames[request.index()];
}

}  // namespace rplasma::peer
