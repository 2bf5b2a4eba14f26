#include "protocol/manager_messages.h"

#include "absl/strings/str_cat.h"
#include "flatbuffers/flatbuffers.h"

#include "protocol/base/node_id.h"
#include "protocol/manager_generated.h"
#include "protocol/object_id_fb.h"

namespace rplasma {
namespace {

using flatbuffers::FlatBufferBuilder;

std::string Finish(FlatBufferBuilder& b) {
  return std::string(reinterpret_cast<const char*>(b.GetBufferPointer()), b.GetSize());
}

}  // namespace

std::string EncodeManagerRequest(const ManagerRequest& request) {
  FlatBufferBuilder b(256);
  if (const auto* fetch = std::get_if<ManagerFetchRequest>(&request.body)) {
    auto ids = ObjectIdVectorToFb(b, fetch->ids);
    auto hint = fetch->hint_node.empty() ? 0 : b.CreateString(fetch->hint_node);
    auto body = mfb::CreateFetchRequest(b, ids, fetch->timeout_ms, hint, fetch->caller_waits_for_seal,
                                        static_cast<mfb::ForcedProtocolFb>(fetch->protocol));
    b.Finish(mfb::CreateManagerRequest(b, request.request_id, mfb::ManagerRequestBody::FetchRequest, body.Union()));
  } else {
    auto body = mfb::CreateManagerStatsRequest(b);
    b.Finish(
        mfb::CreateManagerRequest(b, request.request_id, mfb::ManagerRequestBody::ManagerStatsRequest, body.Union()));
  }
  return Finish(b);
}

absl::StatusOr<ManagerRequest> DecodeManagerRequest(absl::string_view payload) {
  flatbuffers::Verifier verifier(reinterpret_cast<const uint8_t*>(payload.data()), payload.size());
  if (!mfb::VerifyManagerRequestBuffer(verifier)) return ProtocolError("manager request: verification failed");
  const mfb::ManagerRequest* root = mfb::GetManagerRequest(payload.data());
  if (root->body() == nullptr) return ProtocolError("manager request: missing body");
  ManagerRequest out;
  out.request_id = root->request_id();
  switch (root->body_type()) {
    case mfb::ManagerRequestBody::FetchRequest: {
      const mfb::FetchRequest* r = root->body_as_FetchRequest();
      if (r->ids() == nullptr || r->ids()->size() == 0 || r->ids()->size() > kMaxFetchIds) {
        return MakeError(ErrorCode::kInvalidArgument, absl::StrCat("fetch: need 1..", kMaxFetchIds, " ids"));
      }
      if (r->timeout_ms() < 0) return MakeError(ErrorCode::kInvalidArgument, "fetch: negative timeout");
      ManagerFetchRequest fetch;
      fetch.timeout_ms = r->timeout_ms();
      fetch.caller_waits_for_seal = r->caller_waits_for_seal();
      if (r->protocol() > mfb::ForcedProtocolFb::MAX) {
        return MakeError(
            ErrorCode::kInvalidArgument,
            absl::StrCat("fetch: unknown protocol ", static_cast<int>(r->protocol()), " (none, get or pin)"));
      }
      fetch.protocol = static_cast<ForcedProtocol>(r->protocol());
      if (r->hint_node() != nullptr && r->hint_node()->size() > 0) {
        fetch.hint_node = r->hint_node()->str();
        if (!IsValidNodeId(fetch.hint_node)) {
          return MakeError(ErrorCode::kInvalidArgument, "fetch: the hint is not a node id ([A-Za-z0-9._:-]{1,128})");
        }
      }
      for (const ::rplasma::idfb::ObjectIdFb* id : *r->ids()) fetch.ids.push_back(ObjectIdFromFb(*id));
      out.body = std::move(fetch);
      return out;
    }
    case mfb::ManagerRequestBody::ManagerStatsRequest: out.body = ManagerStatsRequest{}; return out;
    default: return ProtocolError("manager request: unknown body");
  }
}

std::string EncodeManagerReply(const ManagerReply& reply) {
  FlatBufferBuilder b(256);
  auto message = reply.error_message.empty() ? 0 : b.CreateString(reply.error_message);
  mfb::ManagerReplyBody type = mfb::ManagerReplyBody::NONE;
  flatbuffers::Offset<void> body;
  if (const auto* fetch = std::get_if<ManagerFetchReply>(&reply.body)) {
    std::vector<uint16_t> codes;
    codes.reserve(fetch->codes.size());
    for (ErrorCode c : fetch->codes) codes.push_back(static_cast<uint16_t>(c));
    std::vector<flatbuffers::Offset<flatbuffers::String>> messages;
    messages.reserve(fetch->messages.size());
    flatbuffers::Offset<flatbuffers::String> empty;  // one for every OK outcome's empty message
    for (const std::string& m : fetch->messages) {
      if (m.empty()) {
        if (empty.IsNull()) empty = b.CreateString("", 0);
        messages.push_back(empty);
      } else {
        const absl::string_view text = absl::string_view(m).substr(0, kMaxFetchMessageBytes);
        messages.push_back(b.CreateString(text.data(), text.size()));
      }
    }
    body = mfb::CreateFetchReply(b, b.CreateVector(codes), b.CreateVector(messages)).Union();
    type = mfb::ManagerReplyBody::FetchReply;
  } else if (const auto* stats = std::get_if<ManagerStatsReply>(&reply.body)) {
    auto json = b.CreateString(stats->json);
    auto node_id = b.CreateString(stats->node_id);
    body = mfb::CreateManagerStatsReply(b, json, node_id).Union();
    type = mfb::ManagerReplyBody::ManagerStatsReply;
  }
  b.Finish(mfb::CreateManagerReply(b, reply.request_id, static_cast<uint16_t>(reply.error), message, type, body));
  return Finish(b);
}

absl::StatusOr<ManagerReply> DecodeManagerReply(absl::string_view payload) {
  flatbuffers::Verifier verifier(reinterpret_cast<const uint8_t*>(payload.data()), payload.size());
  if (!verifier.VerifyBuffer<mfb::ManagerReply>(nullptr)) return ProtocolError("manager reply: verification failed");
  const mfb::ManagerReply* root = flatbuffers::GetRoot<mfb::ManagerReply>(payload.data());
  ManagerReply out;
  out.request_id = root->request_id();
  out.error = ErrorCodeFromWire(root->error());
  if (root->error_message() != nullptr) out.error_message = root->error_message()->str();
  if (out.error != ErrorCode::kOk) return out;
  if (root->body() == nullptr) return ProtocolError("manager reply: missing body");
  switch (root->body_type()) {
    case mfb::ManagerReplyBody::FetchReply: {
      const mfb::FetchReply* r = root->body_as_FetchReply();
      if (r->codes() == nullptr || r->messages() == nullptr || r->codes()->size() != r->messages()->size()) {
        return ProtocolError("fetch reply: codes and messages disagree");
      }
      ManagerFetchReply fetch;
      fetch.codes.reserve(r->codes()->size());
      fetch.messages.reserve(r->messages()->size());
      for (uint16_t c : *r->codes()) fetch.codes.push_back(ErrorCodeFromWire(c));
      for (const flatbuffers::String* m : *r->messages()) fetch.messages.push_back(m ? m->str() : "");
      out.body = std::move(fetch);
      return out;
    }
    case mfb::ManagerReplyBody::ManagerStatsReply: {
      const mfb::ManagerStatsReply* stats = root->body_as_ManagerStatsReply();
      const flatbuffers::String* json = stats->json();
      const flatbuffers::String* node_id = stats->node_id();
      out.body = ManagerStatsReply{json ? json->str() : "{}", node_id ? node_id->str() : ""};
      return out;
    }
    default: return ProtocolError("manager reply: unknown body");
  }
}

}  // namespace rplasma
