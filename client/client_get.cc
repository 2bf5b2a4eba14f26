// Client: the read side — Get, GetOne and the ObjectBuffers they hand out.
//
// A sealed local object is served with no message at all when the store shares its index
// (client/local_index.h): a lookup in shared memory and a reference taken through one of the
// client's slots. Everything else (no index, not sealed yet, a Get that waits, slots full) takes
// the socket: one request frame out, one reply frame in, read by the calling thread itself
// (client_connection.h), and a buffer pointing straight into the arena either way.
#include <algorithm>
#include <limits>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"

#include "client/client.h"
#include "client/client_connection.h"
#include "client/local_index.h"
#include "client/reply_body.h"
#include "protocol/base/status.h"

namespace rplasma {
namespace {

using client_internal::ExpectBody;

// absl::Duration -> the wire's timeout_ms (-1 forever, 0 no wait), rounded up to whole ms.
int64_t TimeoutMs(absl::Duration timeout) {
  if (timeout == absl::InfiniteDuration()) return -1;
  if (timeout <= absl::ZeroDuration()) return 0;
  return absl::ToInt64Milliseconds(absl::Ceil(timeout, absl::Milliseconds(1)));
}

// When a Get's exchange with the store must end: `get_deadline` (when the store answers what it
// has) plus the grace for the answer to arrive; a Get that does not wait has the I/O deadline.
absl::Time ExchangeDeadline(absl::Duration timeout, absl::Time get_deadline, const ClientOptions& options,
                            absl::Time io_deadline) {
  if (timeout == absl::InfiniteDuration()) return absl::InfiniteFuture();
  if (timeout <= absl::ZeroDuration()) return io_deadline;
  return get_deadline + options.reply_grace;
}

bool IsMissing(ErrorCode code) { return code == ErrorCode::kObjectNotFound || code == ErrorCode::kObjectNotSealed; }

}  // namespace

ObjectBuffer Client::ToBuffer(const ObjectID& expected, const ObjectInfo& info) {
  if (info.error != ErrorCode::kOk) {
    return ObjectBuffer(expected, client_internal::ObjectError(info.error, "get", expected.Hex()));
  }
  // The store holds a reference for us now: whatever is wrong, give it back.
  absl::string_view problem;
  if (info.id != expected) {
    problem = "store answered for another object";
  } else if (info.state != ObjectState::kSealed) {
    problem = "store returned an unsealed object";
  } else if (info.data_size > kMaxObjectBytes || !InArena(info.offset, info.data_size + info.metadata_size)) {
    problem = "store placed the object outside the arena";
  }
  if (!problem.empty()) {
    (void)ReleaseDetached(info.id);
    return ObjectBuffer(expected, ProtocolError(absl::StrCat("get(", expected.Hex(), "): ", problem)));
  }
  return ObjectBuffer(this, arena_base_ + info.offset, info);
}

bool Client::IndexedAsSealed(const ObjectID& id) const {
  return local_index_ != nullptr && local_index_->IndexedAsSealed(id);
}

ObjectBuffer Client::TryGetWithoutIpc(const ObjectID& id) {
  // A connection known broken means a store gone: its index is frozen, so the socket path answers
  // (Unavailable). A store that died unnoticed is noticed by the next call that uses the socket.
  if (local_index_ == nullptr || connection_->broken()) return ObjectBuffer();
  std::optional<LocalIndex::Hold> hold = local_index_->TryGet(id);
  if (!hold.has_value()) return ObjectBuffer();
  const shm::IndexedPlacement& p = hold->placement;
  if (p.data_size > kMaxObjectBytes || p.metadata_size > kMaxObjectBytes ||
      !InArena(p.offset, p.data_size + p.metadata_size)) {
    local_index_->Release(*hold);  // the socket path reports what is wrong with it
    return ObjectBuffer();
  }
  ObjectInfo info;
  info.id = id;
  info.state = ObjectState::kSealed;
  info.offset = p.offset;
  info.data_size = p.data_size;
  info.metadata_size = p.metadata_size;
  info.generation = p.generation;
  info.checksum = p.checksum;
  return ObjectBuffer(this, arena_base_ + p.offset, info, hold->entry, hold->slot);
}

void Client::ReleaseSlot(uint64_t index_entry, uint64_t slot, uint64_t generation) {
  local_index_->Release(index_entry, slot, generation);
}

absl::StatusOr<std::vector<ObjectBuffer>> Client::GetLocal(absl::Span<const ObjectID> ids, absl::Duration timeout) {
  if (local_index_ == nullptr) return GetFromStore(ids, timeout);
  std::vector<ObjectBuffer> out;
  out.reserve(ids.size());
  std::vector<size_t> missing;
  // Lookups are independent: the entries of the next few ids load while this one is served.
  constexpr size_t kPrefetchAhead = 8;
  for (size_t i = 0; i < std::min(kPrefetchAhead, ids.size()); ++i) local_index_->Prefetch(ids[i]);
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i + kPrefetchAhead < ids.size()) local_index_->Prefetch(ids[i + kPrefetchAhead]);
    out.push_back(TryGetWithoutIpc(ids[i]));
    if (!out.back().valid()) missing.push_back(i);
  }
  if (missing.empty()) return out;
  std::vector<ObjectID> missing_ids;
  missing_ids.reserve(missing.size());
  for (size_t i : missing) missing_ids.push_back(ids[i]);
  ASSIGN_OR_RETURN(std::vector<ObjectBuffer> from_store, GetFromStore(missing_ids, timeout));
  for (size_t k = 0; k < missing.size(); ++k) out[missing[k]] = std::move(from_store[k]);
  return out;
}

absl::StatusOr<std::vector<ObjectBuffer>> Client::GetFromStore(absl::Span<const ObjectID> ids, absl::Duration timeout) {
  std::vector<ObjectBuffer> out;
  out.reserve(ids.size());
  if (ids.empty()) return out;
  const bool forever = timeout == absl::InfiniteDuration();
  const absl::Time deadline = forever ? absl::InfiniteFuture() : absl::Now() + std::max(timeout, absl::ZeroDuration());
  const size_t batch = max_ids_per_request_;
  const size_t batches = (ids.size() + batch - 1) / batch;
  // One batch in flight at a time, and a thread never sends while a reply of its own is
  // outstanding. Otherwise replies could pile up past what the store queues before it stops
  // reading this connection, with every owner blocked in a send and nobody reading: a deadlock
  // (a single thread with a huge batch hit it). Later batches wait only for what is left of the
  // one timeout.
  constexpr size_t kWindow = 1;
  PendingReply pending[kWindow];
  size_t sent = 0;
  absl::Status status;
  const absl::Time exchange_deadline = ExchangeDeadline(timeout, deadline, options_, connection_->IoDeadline());
  auto send_next = [&]() -> bool {
    if (sent == batches || !status.ok()) return false;
    absl::Span<const ObjectID> part = ids.subspan(sent * batch, batch);
    const int64_t timeout_ms = forever ? -1 : TimeoutMs(deadline - absl::Now());
    status = connection_->Send(GetRequest{std::vector<ObjectID>(part.begin(), part.end()), timeout_ms},
                               &pending[sent % kWindow], exchange_deadline);
    if (!status.ok()) return false;
    ++sent;
    return true;
  };
  while (sent < kWindow && send_next()) {
  }
  for (size_t b = 0; b < sent; ++b) {
    absl::Span<const ObjectID> part = ids.subspan(b * batch, batch);
    absl::StatusOr<ObjectsReply> reply = ExpectBody<ObjectsReply>(
        connection_->Wait(&pending[b % kWindow], exchange_deadline), "get", part.size() == 1 ? part[0].Hex() : "");
    if (reply.ok() && reply->objects.size() != part.size()) {
      for (const ObjectInfo& info : reply->objects) {
        if (info.error == ErrorCode::kOk) (void)ReleaseDetached(info.id);
      }
      reply = ProtocolError(
          absl::StrCat("get: store answered ", reply->objects.size(), " entries for ", part.size(), " ids"));
    }
    if (!reply.ok()) {
      if (status.ok()) status = reply.status();
      continue;
    }
    // Entries of a failed call are still collected: their buffers release the references.
    for (size_t i = 0; i < part.size(); ++i) out.push_back(ToBuffer(part[i], reply->objects[i]));
    send_next();  // the slot just freed takes the next batch
  }
  if (!status.ok()) return status;
  return out;
}

absl::StatusOr<std::vector<ObjectBuffer>> Client::Get(absl::Span<const ObjectID> ids, absl::Duration timeout,
                                                      absl::string_view hint_node) {
  if (options_.get_fetches_remote) {
    const absl::Time deadline = timeout == absl::InfiniteDuration() ? absl::InfiniteFuture() : absl::Now() + timeout;
    ASSIGN_OR_RETURN(std::vector<ObjectBuffer> out, GetLocal(ids, absl::ZeroDuration()));
    std::vector<size_t> missing;
    std::vector<ObjectID> missing_ids;
    for (size_t i = 0; i < out.size(); ++i) {
      if (!out[i].valid() && IsMissing(ErrorCodeOf(out[i].status()))) {
        missing.push_back(i);
        missing_ids.push_back(ids[i]);
      }
    }
    if (missing.empty()) return out;
    absl::Status fetched = Fetch(missing_ids, timeout, hint_node);
    absl::Duration left = std::max(deadline - absl::Now(), absl::ZeroDuration());
    ASSIGN_OR_RETURN(std::vector<ObjectBuffer> second, GetLocal(missing_ids, left));
    for (size_t k = 0; k < missing.size(); ++k) {
      if (!second[k].valid() && !fetched.ok()) second[k] = ObjectBuffer(missing_ids[k], fetched);
      out[missing[k]] = std::move(second[k]);
    }
    return out;
  }
  return GetLocal(ids, timeout);
}

absl::StatusOr<ObjectBuffer> Client::GetOne(const ObjectID& id, absl::Duration timeout) {
  ObjectBuffer buffer = TryGetWithoutIpc(id);
  if (buffer.valid()) return buffer;
  if (options_.get_fetches_remote) {
    ASSIGN_OR_RETURN(std::vector<ObjectBuffer> entries, Get(absl::MakeConstSpan(&id, 1), timeout));
    buffer = std::move(entries[0]);
  } else {
    // The lean path: no batching machinery, no result vector.
    const absl::Time exchange_deadline = ExchangeDeadline(
        timeout, absl::Now() + std::max(timeout, absl::ZeroDuration()), options_, connection_->IoDeadline());
    ASSIGN_OR_RETURN(ObjectsReply reply,
                     ExpectBody<ObjectsReply>(
                         connection_->Call(GetRequest{{id}, TimeoutMs(timeout)}, exchange_deadline), "get", id));
    if (reply.objects.size() != 1) {
      for (const ObjectInfo& info : reply.objects) {
        if (info.error == ErrorCode::kOk) (void)ReleaseDetached(info.id);
      }
      return ProtocolError(absl::StrCat("get(", id.Hex(), "): store answered ", reply.objects.size(), " entries"));
    }
    buffer = ToBuffer(id, reply.objects[0]);
  }
  if (buffer.valid()) return buffer;
  const ErrorCode code = ErrorCodeOf(buffer.status());
  if (timeout > absl::ZeroDuration() && IsMissing(code)) {
    return MakeError(ErrorCode::kDeadlineExceeded,
                     absl::StrCat("get(", id.Hex(), "): not sealed within ", absl::FormatDuration(timeout), " (",
                                  ErrorCodeName(code), ")"));
  }
  return buffer.status();
}

}  // namespace rplasma
