// Client: the batched writes — CreateMany, SealAndReleaseMany, PutInlineMany (the last two also
// detached: sent, their answers not waited for) — and the batched
// Release of ObjectBuffers. Each splits its objects into as few store requests as the limits allow
// and sends them one after another (one reply outstanding, as GetLocal does, so answers never pile
// up in the store's queue for this connection).
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"

#include "client/client.h"
#include "client/client_connection.h"
#include "client/reply_body.h"
#include "protocol/base/mutex_lock.h"
#include "protocol/base/status.h"
#include "protocol/frame.h"

namespace rplasma {
namespace {

using client_internal::ExpectBody;
using client_internal::ExpectCodes;
using client_internal::ObjectError;

// What one inline object may add to a PutBatch frame beyond its bytes (table, vtable, id, two
// vector headers and their padding, the vector slot: about 100 bytes; counted generously), and the
// room kept free for the request's envelope. A batch is closed before it would pass the budget.
constexpr size_t kPutOverheadBytes = 256;
constexpr size_t kPutBatchBudgetBytes = kDefaultMaxFrameBytes - 16 * 1024;
static_assert(kMaxInlinePutBytes + kPutOverheadBytes <= kPutBatchBudgetBytes,
              "a frame must hold at least one inline object of the largest size");

bool CreatableSize(const CreateSpec& spec) {
  return spec.data_size <= kMaxObjectBytes && spec.metadata_size <= kMaxObjectBytes - spec.data_size;
}

// The status for a per-object code of a batch (OK for kOk).
absl::Status CodeStatus(ErrorCode code, absl::string_view op, const ObjectID& id) {
  return code == ErrorCode::kOk ? absl::OkStatus() : ObjectError(code, op, id.Hex());
}

}  // namespace

absl::StatusOr<std::vector<absl::StatusOr<CreatedObject>>> Client::CreateMany(absl::Span<const CreateSpec> objects,
                                                                              bool evict_if_full) {
  // Every object sent is answered below; until then it shares this placeholder (no allocation each).
  static const absl::Status* const kNotAnswered = new absl::Status(absl::UnknownError("not answered"));
  std::vector<absl::StatusOr<CreatedObject>> results;
  results.reserve(objects.size());
  std::vector<size_t> to_send;  // indices of the objects the store is asked for
  to_send.reserve(objects.size());
  for (size_t i = 0; i < objects.size(); ++i) {
    const CreateSpec& spec = objects[i];
    if (CreatableSize(spec)) {
      results.push_back(*kNotAnswered);
      to_send.push_back(i);
    } else {
      // Sent, it would make the store refuse the whole batch.
      results.push_back(
          MakeError(ErrorCode::kInvalidArgument, absl::StrCat("create(", spec.id.Hex(), "): size ", spec.data_size, "+",
                                                              spec.metadata_size, " is too large")));
    }
  }
  std::vector<ObjectID> created_here;  // undone on an outer error
  for (size_t start = 0; start < to_send.size(); start += max_ids_per_request_) {
    const absl::Span<const size_t> part = absl::MakeConstSpan(to_send).subspan(start, max_ids_per_request_);
    CreateBatchRequest request;
    request.objects.reserve(part.size());
    for (size_t i : part) {
      request.objects.push_back(
          CreateRequest{objects[i].id, objects[i].data_size, objects[i].metadata_size, evict_if_full});
    }
    absl::StatusOr<ObjectsReply> reply = ExpectBody<ObjectsReply>(connection_->Call(std::move(request)), "create");
    if (reply.ok()) {
      // Every entry must answer for the object asked, in order, before any of it is used.
      bool matches = reply->objects.size() == part.size();
      for (size_t k = 0; matches && k < part.size(); ++k) matches = reply->objects[k].id == objects[part[k]].id;
      if (!matches) {
        for (const ObjectInfo& info : reply->objects) {
          if (info.error == ErrorCode::kOk) (void)connection_->SendDetached(AbortRequest{info.id});
        }
        reply = ProtocolError(absl::StrCat("create: store answered ", reply->objects.size(), " entries for ",
                                           part.size(), " objects, not one per object in order"));
      }
    }
    if (!reply.ok()) {
      AbortCreated(created_here);
      return reply.status();
    }
    std::vector<ObjectID> misplaced;
    {
      MutexLock lock(&mu_);
      for (size_t k = 0; k < part.size(); ++k) {
        const CreateSpec& spec = objects[part[k]];
        const ObjectInfo& info = reply->objects[k];
        absl::StatusOr<CreatedObject>& result = results[part[k]];
        if (info.error != ErrorCode::kOk) {
          result = ObjectError(info.error, "create", spec.id.Hex());
          continue;
        }
        // Never trust the store's offset: a bad one would hand out memory outside the mapping.
        if (!InArena(info.offset, spec.data_size + spec.metadata_size)) {
          misplaced.push_back(spec.id);
          result =
              ProtocolError(absl::StrCat("create(", spec.id.Hex(), "): store placed the object outside the arena"));
          continue;
        }
        uint8_t* data = arena_base_ + info.offset;
        const CreatedObject created{spec.id, absl::MakeSpan(data, spec.data_size),
                                    absl::MakeSpan(data + spec.data_size, spec.metadata_size), info.offset,
                                    info.generation};
        created_[spec.id] = created;
        created_here.push_back(spec.id);
        result = created;
      }
    }
    for (const ObjectID& id : misplaced) (void)connection_->SendDetached(AbortRequest{id});
  }
  return results;
}

void Client::AbortCreated(absl::Span<const ObjectID> ids) {
  for (const ObjectID& id : ids) {
    (void)connection_->SendDetached(AbortRequest{id});  // fails at once if the store is gone
    ForgetCreated(id);
  }
}

absl::StatusOr<std::vector<absl::Status>> Client::SealAndReleaseMany(absl::Span<const SealSpec> objects) {
  return SealAndReleaseManyImpl(objects, /*detached=*/false);
}

absl::StatusOr<std::vector<absl::Status>> Client::SealAndReleaseManyDetached(absl::Span<const SealSpec> objects) {
  return SealAndReleaseManyImpl(objects, /*detached=*/true);
}

absl::StatusOr<std::vector<absl::Status>> Client::SealAndReleaseManyImpl(absl::Span<const SealSpec> objects,
                                                                         bool detached) {
  std::vector<absl::Status> results;
  results.reserve(objects.size());
  for (size_t start = 0; start < objects.size(); start += max_ids_per_request_) {
    const absl::Span<const SealSpec> part = objects.subspan(start, max_ids_per_request_);
    SealBatchRequest request;
    request.objects.reserve(part.size());
    for (const SealSpec& spec : part) request.objects.push_back(SealRequest{spec.id, spec.checksum, /*release=*/true});
    if (detached) {
      RETURN_IF_ERROR(connection_->SendDetached(std::move(request)));
      MutexLock lock(&mu_);
      for (const SealSpec& spec : part) {
        created_.erase(spec.id);
        results.push_back(absl::OkStatus());
      }
      continue;
    }
    ASSIGN_OR_RETURN(CodesReply codes, ExpectCodes(connection_->Call(std::move(request)), part.size(), "seal"));
    MutexLock lock(&mu_);
    for (size_t k = 0; k < part.size(); ++k) {
      const ErrorCode code = codes.codes[k];
      // As SealWith: forget what is sealed or gone; keep what can still be sealed or aborted.
      if (code == ErrorCode::kOk || code == ErrorCode::kObjectAlreadySealed || code == ErrorCode::kObjectNotFound) {
        created_.erase(part[k].id);
      }
      results.push_back(CodeStatus(code, "seal", part[k].id));
    }
  }
  return results;
}

absl::StatusOr<std::vector<absl::Status>> Client::PutInlineMany(absl::Span<const InlineObject> objects) {
  return PutInlineManyImpl(objects, /*detached=*/false);
}

absl::StatusOr<std::vector<absl::Status>> Client::PutInlineManyDetached(absl::Span<const InlineObject> objects) {
  return PutInlineManyImpl(objects, /*detached=*/true);
}

absl::StatusOr<std::vector<absl::Status>> Client::PutInlineManyImpl(absl::Span<const InlineObject> objects,
                                                                    bool detached) {
  std::vector<absl::Status> results(objects.size());
  std::vector<size_t> batch;  // indices of the objects in the request being filled
  size_t batch_bytes = 0;
  auto send = [&]() -> absl::Status {
    PutBatchRequest request;
    request.objects.reserve(batch.size());
    for (size_t i : batch) {
      const InlineObject& o = objects[i];
      request.objects.push_back(PutRequest{o.id, o.data, o.metadata, o.checksum, /*evict_if_full=*/true});
    }
    if (detached) {
      RETURN_IF_ERROR(connection_->SendDetached(std::move(request)));
      for (size_t i : batch) results[i] = absl::OkStatus();
    } else {
      ASSIGN_OR_RETURN(CodesReply codes, ExpectCodes(connection_->Call(std::move(request)), batch.size(), "put"));
      for (size_t k = 0; k < batch.size(); ++k) {
        results[batch[k]] = CodeStatus(codes.codes[k], "put", objects[batch[k]].id);
      }
    }
    batch.clear();
    batch_bytes = 0;
    return absl::OkStatus();
  };
  for (size_t i = 0; i < objects.size(); ++i) {
    const InlineObject& o = objects[i];
    const size_t bytes = o.data.size() + o.metadata.size();
    if (bytes > kMaxInlinePutBytes) {
      results[i] = MakeError(ErrorCode::kInvalidArgument,
                             absl::StrCat("put(", o.id.Hex(), "): ", o.data.size(), "+", o.metadata.size(),
                                          " bytes exceed the inline limit of ", kMaxInlinePutBytes));
      continue;
    }
    if (!batch.empty() &&
        (batch.size() == max_ids_per_request_ || batch_bytes + bytes + kPutOverheadBytes > kPutBatchBudgetBytes)) {
      RETURN_IF_ERROR(send());
    }
    batch.push_back(i);
    batch_bytes += bytes + kPutOverheadBytes;
  }
  if (!batch.empty()) RETURN_IF_ERROR(send());
  return results;
}

absl::Status Client::Release(absl::Span<ObjectBuffer> buffers) {
  absl::Status status;
  std::vector<ObjectID> ids;
  auto flush = [&] {
    if (ids.empty()) return;
    absl::Status sent = connection_->SendNoReply(ReleaseRequest{std::exchange(ids, {}), /*no_reply=*/true});
    if (status.ok()) status = sent;
  };
  for (ObjectBuffer& buffer : buffers) {
    if (!buffer.valid()) continue;
    if (buffer.client_ != this || buffer.slot_ != ObjectBuffer::kNoSlot) {
      // Another Client's buffer releases through its own client; one held through a slot, here
      // and now with no message.
      absl::Status released = buffer.Release();
      if (status.ok()) status = released;
      continue;
    }
    buffer.client_ = nullptr;
    buffer.base_ = nullptr;
    ids.push_back(buffer.info_.id);
    if (ids.size() == max_ids_per_request_) flush();
  }
  flush();
  return status;
}

}  // namespace rplasma
