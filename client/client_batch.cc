// Client: the batched writes — CreateMany (and its PendingCreateMany), SealAndReleaseMany, PutInlineMany (the last two
// also detached: sent, their answers not waited for) — and the batched Release of ObjectBuffers. Each splits its
// objects into as few store requests as the limits allow and sends them one after another (one reply outstanding, as
// GetLocal does, so answers never pile up in the store's queue for this connection).
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
  return StartCreateMany(objects, evict_if_full)->Finish();
}

std::unique_ptr<PendingCreateMany> Client::StartCreateMany(absl::Span<const CreateSpec> objects, bool evict_if_full) {
  // (The constructor is private: no make_unique.)
  return std::unique_ptr<PendingCreateMany>(new PendingCreateMany(this, objects, evict_if_full));
}

PendingCreateMany::PendingCreateMany(Client* client, absl::Span<const CreateSpec> objects, bool evict_if_full)
    : client_(client),
      objects_(objects.begin(), objects.end()),
      evict_if_full_(evict_if_full),
      first_(std::make_unique<PendingReply>()) {
  // Every object sent is answered in Finish before the results are handed out; until then it holds
  // an empty object. (Not a shared error status: copying one and overwriting each copy are atomic
  // reference-count updates on one word, which the fetching threads of a manager contended for:
  // 3% of its CPU in a warm 1000 x 1 KiB fetch loop.)
  results_.reserve(objects_.size());
  to_send_.reserve(objects_.size());
  for (size_t i = 0; i < objects_.size(); ++i) {
    const CreateSpec& spec = objects_[i];
    if (CreatableSize(spec)) {
      results_.emplace_back(CreatedObject{});
      to_send_.push_back(i);
    } else {
      // Sent, it would make the store refuse the whole batch.
      results_.push_back(
          MakeError(ErrorCode::kInvalidArgument, absl::StrCat("create(", spec.id.Hex(), "): size ", spec.data_size, "+",
                                                              spec.metadata_size, " is too large")));
    }
  }
  if (!to_send_.empty()) first_sent_ = SendPart(0, first_.get());
}

PendingCreateMany::~PendingCreateMany() {
  if (finished_) return;
  absl::StatusOr<std::vector<absl::StatusOr<CreatedObject>>> created = Finish();
  if (!created.ok()) return;  // Finish aborted them already
  std::vector<ObjectID> ids;
  for (const absl::StatusOr<CreatedObject>& object : *created) {
    if (object.ok()) ids.push_back(object->id);
  }
  client_->AbortCreated(ids);
}

absl::Span<const size_t> PendingCreateMany::Part(size_t start) const {
  return absl::MakeConstSpan(to_send_).subspan(start, client_->max_ids_per_request_);
}

absl::Status PendingCreateMany::SendPart(size_t start, PendingReply* pending) {
  CreateBatchRequest request;
  const absl::Span<const size_t> part = Part(start);
  request.objects.reserve(part.size());
  for (size_t i : part) {
    request.objects.push_back(
        CreateRequest{objects_[i].id, objects_[i].data_size, objects_[i].metadata_size, evict_if_full_});
  }
  return client_->connection_->Send(std::move(request), pending);
}

absl::StatusOr<std::vector<absl::StatusOr<CreatedObject>>> PendingCreateMany::Finish() {
  if (finished_) return MakeError(ErrorCode::kInvalidArgument, "create: the answers were taken already");
  finished_ = true;
  if (to_send_.empty()) return std::move(results_);
  ClientConnection& connection = *client_->connection_;
  RETURN_IF_ERROR(TakePart(0, first_sent_.ok() ? connection.Wait(first_.get()) : first_sent_));
  for (size_t start = client_->max_ids_per_request_; start < to_send_.size(); start += client_->max_ids_per_request_) {
    PendingReply pending;
    const absl::Status sent = SendPart(start, &pending);
    RETURN_IF_ERROR(TakePart(start, sent.ok() ? connection.Wait(&pending) : sent));
  }
  return std::move(results_);
}

absl::Status PendingCreateMany::TakePart(size_t start, absl::StatusOr<Reply> raw) {
  const absl::Span<const size_t> part = Part(start);
  absl::StatusOr<ObjectsReply> reply = ExpectBody<ObjectsReply>(std::move(raw), "create");
  ClientConnection& connection = *client_->connection_;
  if (reply.ok()) {
    // Every entry must answer for the object asked, in order, before any of it is used.
    bool matches = reply->objects.size() == part.size();
    for (size_t k = 0; matches && k < part.size(); ++k) matches = reply->objects[k].id == objects_[part[k]].id;
    if (!matches) {
      for (const ObjectInfo& info : reply->objects) {
        if (info.error == ErrorCode::kOk) (void)connection.SendDetached(AbortRequest{info.id});
      }
      reply = ProtocolError(absl::StrCat("create: store answered ", reply->objects.size(), " entries for ", part.size(),
                                         " objects, not one per object in order"));
    }
  }
  if (!reply.ok()) {
    client_->AbortCreated(created_here_);
    return reply.status();
  }
  std::vector<ObjectID> misplaced;
  {
    MutexLock lock(&client_->mu_);
    for (size_t k = 0; k < part.size(); ++k) {
      const CreateSpec& spec = objects_[part[k]];
      const ObjectInfo& info = reply->objects[k];
      absl::StatusOr<CreatedObject>& result = results_[part[k]];
      if (info.error != ErrorCode::kOk) {
        result = ObjectError(info.error, "create", spec.id.Hex());
        continue;
      }
      // Never trust the store's offset: a bad one would hand out memory outside the mapping.
      if (!client_->InArena(info.offset, spec.data_size + spec.metadata_size)) {
        misplaced.push_back(spec.id);
        result = ProtocolError(absl::StrCat("create(", spec.id.Hex(), "): store placed the object outside the arena"));
        continue;
      }
      uint8_t* data = client_->arena_base_ + info.offset;
      const CreatedObject created{spec.id, absl::MakeSpan(data, spec.data_size),
                                  absl::MakeSpan(data + spec.data_size, spec.metadata_size), info.offset,
                                  info.generation};
      client_->created_[spec.id] = created;
      created_here_.push_back(spec.id);
      result = created;
    }
  }
  for (const ObjectID& id : misplaced) (void)connection.SendDetached(AbortRequest{id});
  return absl::OkStatus();
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
