// StoreServer's request handlers: decoded requests in, replies (and events) queued out.
#include <algorithm>
#include <cstring>
#include <type_traits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

#include "protocol/base/logging.h"
#include "protocol/frame.h"
#include "store/store_server.h"

namespace rplasma {
namespace {

// Existing objects sent per backfill step; the step repeats while the queue is short.
constexpr uint32_t kBackfillPage = 1024;

Reply OkReply(uint64_t rid, ReplyBody body) {
  Reply r;
  r.request_id = rid;
  r.body = std::move(body);
  return r;
}

// Objects ahead of the one handled whose table row and index entry a batch loads early: each is a
// cache miss (the index's entries are read by other processes), and the misses of a few objects
// in flight together cost about as much as one.
constexpr size_t kPrefetchAhead = 8;

// visit(item) for each item of a batch, in order, with the ids of the items kPrefetchAhead on
// prefetched first.
template <typename Item, typename IdOf, typename Visit>
void ForEachPrefetched(const ObjectTable& table, const std::vector<Item>& items, IdOf id_of, Visit visit) {
  for (size_t i = 0; i < std::min(kPrefetchAhead, items.size()); ++i) table.Prefetch(id_of(items[i]));
  for (size_t i = 0; i < items.size(); ++i) {
    if (i + kPrefetchAhead < items.size()) table.Prefetch(id_of(items[i + kPrefetchAhead]));
    visit(items[i]);
  }
}

}  // namespace

void StoreServer::HandleRequest(ClientSession& s, Request request) {
  const uint64_t rid = request.request_id;
  metrics_.CountRequest(request.body.index());
  if (!s.connected && !std::holds_alternative<ConnectRequest>(request.body)) {
    absl::Status error = ProtocolError("the first request on a connection must be Connect");
    SendReply(s, ErrorReply(rid, error));
    Doom(s, std::string(error.message()));
    return;
  }
  std::visit(
      [&](auto& m) {
        using T = std::decay_t<decltype(m)>;
        if constexpr (std::is_same_v<T, ConnectRequest>) {
          HandleConnect(s, rid, m);
        } else if constexpr (std::is_same_v<T, CreateRequest>) {
          HandleCreate(s, rid, m);
        } else if constexpr (std::is_same_v<T, SealRequest>) {
          HandleSeal(s, rid, m);
        } else if constexpr (std::is_same_v<T, AbortRequest>) {
          absl::Status st = table_.Abort(s.id(), m.id);
          SendReply(s, st.ok() ? OkReply(rid, EmptyReply{}) : ErrorReply(rid, st));
        } else if constexpr (std::is_same_v<T, GetRequest>) {
          HandleGet(s, rid, m);
        } else if constexpr (std::is_same_v<T, ReleaseRequest>) {
          CodesReply codes;
          for (const ObjectID& id : m.ids) codes.codes.push_back(ErrorCodeOf(table_.Release(s.id(), id)));
          if (!m.no_reply) SendReply(s, OkReply(rid, std::move(codes)));
        } else if constexpr (std::is_same_v<T, ContainsRequest>) {
          CodesReply codes;
          for (const ObjectID& id : m.ids) codes.codes.push_back(table_.Contains(id));
          SendReply(s, OkReply(rid, std::move(codes)));
        } else if constexpr (std::is_same_v<T, DeleteRequest>) {
          CodesReply codes;
          ForEachPrefetched(
              table_, m.ids, [](const ObjectID& id) { return id; },
              [&](const ObjectID& id) { codes.codes.push_back(table_.Delete(id)); });
          SendReply(s, OkReply(rid, std::move(codes)));
        } else if constexpr (std::is_same_v<T, EvictRequest>) {
          EvictResult r = table_.Evict(m.bytes);
          SendReply(s, OkReply(rid, EvictReply{r.bytes, r.objects}));
        } else if constexpr (std::is_same_v<T, ListRequest>) {
          ObjectsReply page;
          page.objects = table_.List(m.start_after, m.limit, &page.more);
          if (index_ != nullptr) {
            // A user sees every reference, whichever way it was taken.
            for (ObjectInfo& o : page.objects) {
              if (o.state == ObjectState::kSealed) o.ref_count += static_cast<int32_t>(index_->HoldsOf(o.generation));
            }
          }
          SendReply(s, OkReply(rid, std::move(page)));
        } else if constexpr (std::is_same_v<T, StatsRequest>) {
          SendReply(s, OkReply(rid, StatsWithSlots(index_ != nullptr ? index_->SlotReferences() : 0)));
        } else if constexpr (std::is_same_v<T, SlotsReleasedRequest>) {
          if (index_ != nullptr) table_.RetryReclaims();  // no reply
        } else if constexpr (std::is_same_v<T, SubscribeRequest>) {
          HandleSubscribe(s, rid, m);
        } else if constexpr (std::is_same_v<T, PutRequest>) {
          HandlePut(s, rid, m);
        } else if constexpr (std::is_same_v<T, CreateBatchRequest>) {
          HandleCreateBatch(s, rid, m);
        } else if constexpr (std::is_same_v<T, SealBatchRequest>) {
          HandleSealBatch(s, rid, m);
        } else {
          static_assert(std::is_same_v<T, PutBatchRequest>);
          HandlePutBatch(s, rid, m);
        }
      },
      request.body);
}

void StoreServer::HandleConnect(ClientSession& s, uint64_t rid, const ConnectRequest& m) {
  if (s.connected) {
    SendReply(s, ErrorReply(rid, MakeError(ErrorCode::kInvalidArgument, "connect: already connected")));
    return;
  }
  s.connected = true;
  s.name = m.client_name;
  ConnectReply reply;
  reply.arena_size = arena_->size();
  reply.store_name = options_.name;
  reply.max_ids_per_request = kMaxIdsPerRequest;
  std::vector<int> fds = {arena_->fd()};
  if (index_ != nullptr && m.shared_index) {
    // Without slots the client simply has no get without IPC: it keeps the socket path.
    absl::StatusOr<int> slots_fd = index_->AddClient(s.id());
    if (slots_fd.ok()) {
      reply.index_entries = index_->entries();
      reply.slots = index_->slots_per_client();
      fds.push_back(index_->index_fd());
      fds.push_back(*slots_fd);
    } else {
      LOG(WARNING) << "client " << s.id() << ": no reference slots: " << slots_fd.status();
    }
  }
  SendReply(s, OkReply(rid, std::move(reply)), std::move(fds));
  LOG(INFO) << "client " << s.id() << " (" << s.name << ", pid " << s.pid() << ") connected";
}

void StoreServer::HandleCreate(ClientSession& s, uint64_t rid, const CreateRequest& m) {
  absl::StatusOr<ObjectInfo> info = table_.Create(s.id(), m.id, m.data_size, m.metadata_size, m.evict_if_full);
  if (!info.ok()) {
    SendReply(s, ErrorReply(rid, info.status()));
    return;
  }
  SendReply(s, OkReply(rid, CreateReply{info->offset, info->generation}));
}

void StoreServer::HandleSeal(ClientSession& s, uint64_t rid, const SealRequest& m) {
  bool sealed = false;
  absl::Status st = SealObject(s, m, &sealed);
  SendReply(s, st.ok() ? OkReply(rid, EmptyReply{}) : ErrorReply(rid, st));
  if (sealed) WakeGetsFor(m.id);
}

absl::Status StoreServer::SealObject(ClientSession& s, const SealRequest& m, bool* sealed) {
  const absl::Status seal = table_.Seal(s.id(), m.id, m.checksum);
  *sealed = seal.ok();
  // The creator's reference goes only once the seal took: a failed seal leaves the object to Abort.
  if (seal.ok() && m.release) return table_.Release(s.id(), m.id);
  return seal;
}

void StoreServer::HandlePut(ClientSession& s, uint64_t rid, const PutRequest& m) {
  absl::StatusOr<ObjectInfo> info = PutObject(s, m);
  if (!info.ok()) {
    SendReply(s, ErrorReply(rid, info.status()));
    return;
  }
  SendReply(s, OkReply(rid, CreateReply{info->offset, info->generation}));
  WakeGetsFor(m.id);
}

absl::StatusOr<ObjectInfo> StoreServer::PutObject(ClientSession& s, const PutRequest& m) {
  const uint64_t data_size = m.data.size();
  ASSIGN_OR_RETURN(ObjectInfo info, table_.Create(s.id(), m.id, data_size, m.metadata.size(), m.evict_if_full));
  uint8_t* at = arena_->base() + info.offset;
  if (data_size > 0) std::memcpy(at, m.data.data(), data_size);
  if (!m.metadata.empty()) std::memcpy(at + data_size, m.metadata.data(), m.metadata.size());
  // Neither can fail on an object this client has just created and still references.
  absl::Status st = table_.Seal(s.id(), m.id, m.checksum);
  if (st.ok()) st = table_.Release(s.id(), m.id);
  if (!st.ok()) {
    (void)table_.Abort(s.id(), m.id);
    return st;
  }
  return info;
}

// Batches: each object exactly as its single request, in order; the reply goes once, before the
// Gets its seals complete (as for a single Seal or Put).
void StoreServer::HandleCreateBatch(ClientSession& s, uint64_t rid, const CreateBatchRequest& m) {
  ObjectsReply reply;
  reply.objects.reserve(m.objects.size());
  ForEachPrefetched(
      table_, m.objects, [](const CreateRequest& c) { return c.id; },
      [&](const CreateRequest& c) {
        absl::StatusOr<ObjectInfo> info = table_.Create(s.id(), c.id, c.data_size, c.metadata_size, c.evict_if_full);
        if (info.ok()) {
          reply.objects.push_back(*info);
        } else {
          ObjectInfo failed;
          failed.id = c.id;
          failed.error = ErrorCodeOf(info.status());
          reply.objects.push_back(failed);
        }
      });
  SendReply(s, OkReply(rid, std::move(reply)));
}

void StoreServer::HandleSealBatch(ClientSession& s, uint64_t rid, const SealBatchRequest& m) {
  CodesReply reply;
  reply.codes.reserve(m.objects.size());
  std::vector<ObjectID> sealed_ids;
  ForEachPrefetched(
      table_, m.objects, [](const SealRequest& seal) { return seal.id; },
      [&](const SealRequest& seal) {
        bool sealed = false;
        reply.codes.push_back(ErrorCodeOf(SealObject(s, seal, &sealed)));
        if (sealed) sealed_ids.push_back(seal.id);
      });
  SendReply(s, OkReply(rid, std::move(reply)));
  for (const ObjectID& id : sealed_ids) WakeGetsFor(id);
}

void StoreServer::HandlePutBatch(ClientSession& s, uint64_t rid, const PutBatchRequest& m) {
  CodesReply reply;
  reply.codes.reserve(m.objects.size());
  std::vector<ObjectID> sealed_ids;
  ForEachPrefetched(
      table_, m.objects, [](const PutRequest& put) { return put.id; },
      [&](const PutRequest& put) {
        absl::StatusOr<ObjectInfo> info = PutObject(s, put);
        reply.codes.push_back(ErrorCodeOf(info.status()));
        if (info.ok()) sealed_ids.push_back(put.id);
      });
  SendReply(s, OkReply(rid, std::move(reply)));
  for (const ObjectID& id : sealed_ids) WakeGetsFor(id);
}

void StoreServer::WakeGetsFor(const ObjectID& id) {
  std::vector<PendingGet> done = waiters_.OnSealed(id, [&](ClientId client) { return table_.Get(client, id); });
  for (PendingGet& get : done) CompleteGet(std::move(get));
}

void StoreServer::HandleGet(ClientSession& s, uint64_t rid, const GetRequest& m) {
  PendingGet get;
  get.client = s.id();
  get.request_id = rid;
  get.objects.resize(m.ids.size());
  get.served.resize(m.ids.size(), false);
  bool all_served = true;
  for (size_t i = 0; i < m.ids.size(); ++i) {
    absl::StatusOr<ObjectInfo> info = table_.Get(s.id(), m.ids[i]);
    if (info.ok()) {
      get.objects[i] = *info;
      get.served[i] = true;
    } else {
      get.objects[i].id = m.ids[i];
      all_served = false;
    }
  }
  if (all_served || m.timeout_ms == 0) {
    CompleteGet(std::move(get));
    return;
  }
  if (m.timeout_ms > 0) get.deadline = absl::Now() + absl::Milliseconds(m.timeout_ms);
  waiters_.Add(std::move(get));
}

void StoreServer::CompleteGet(PendingGet get) {
  ClientSession* s = FindSession(get.client);
  if (s == nullptr) return;  // cannot happen: a leaving client's waits are removed first
  ObjectsReply reply;
  reply.objects = std::move(get.objects);
  for (size_t i = 0; i < reply.objects.size(); ++i) {
    if (get.served[i]) continue;
    ObjectInfo& o = reply.objects[i];
    ObjectID id = o.id;
    ErrorCode code = table_.Contains(id);
    o = ObjectInfo{};
    o.id = id;
    o.error = code == ErrorCode::kObjectNotSealed ? ErrorCode::kObjectNotSealed : ErrorCode::kObjectNotFound;
  }
  SendReply(*s, OkReply(get.request_id, std::move(reply)));
}

void StoreServer::ExpireGets() {
  for (PendingGet& get : waiters_.Expire(absl::Now())) CompleteGet(std::move(get));
}

void StoreServer::HandleSubscribe(ClientSession& s, uint64_t rid, const SubscribeRequest& m) {
  if (s.subscribed) {
    SendReply(s, ErrorReply(rid, MakeError(ErrorCode::kInvalidArgument, "subscribe: already subscribed")));
    return;
  }
  s.subscribed = true;
  s.backfilling = m.include_existing;
  s.backfill_cursor.reset();
  subscribers_.insert(s.id());
  SendReply(s, OkReply(rid, EmptyReply{}));
  if (s.backfilling) PumpBackfill(s);
}

void StoreServer::PumpBackfill(ClientSession& s) {
  // Only marks the session dirty when it queued something, so FlushDirty settles once the
  // socket is full (the queue then stays above the threshold until EPOLLOUT).
  bool queued = false;
  while (s.backfilling && !s.doomed && s.queued_bytes() < options_.pause_input_bytes) {
    bool more = false;
    std::vector<ObjectInfo> page = table_.List(s.backfill_cursor, kBackfillPage, &more);
    for (const ObjectInfo& info : page) {
      if (info.state != ObjectState::kSealed) continue;
      s.QueueEvent(ObjectEvent{EventKind::kSealed, info});
      queued = true;
    }
    if (!page.empty()) s.backfill_cursor = page.back().id;
    if (!more) s.backfilling = false;
  }
  if (queued) MarkDirty(s);
}

void StoreServer::OnEvent(EventKind kind, const ObjectInfo& info) {
  metrics_.CountEvent(kind, info.data_size + info.metadata_size);
  if (subscribers_.empty()) return;
  const ObjectEvent event{kind, info};
  for (ClientId id : subscribers_) {
    ClientSession* s = FindSession(id);
    if (s == nullptr || s->doomed) continue;
    // Ids the backfill has not reached yet are reported by the backfill itself (if still there).
    if (s->backfilling && (!s->backfill_cursor || info.id > *s->backfill_cursor)) continue;
    s->QueueEvent(event);
    MarkDirty(*s);
    if (s->queued_bytes() > options_.max_output_bytes) {
      LOG(WARNING) << "subscriber " << id << " (" << s->name << ") fell behind by " << s->queued_bytes()
                   << " bytes; disconnecting it";
      Doom(*s, "subscriber too slow");
    }
  }
}

StatsReply StoreServer::StatsWithSlots(uint64_t slot_references) const {
  StatsReply stats = Stats();
  stats.slot_references = slot_references;
  stats.ref_count += slot_references;
  return stats;
}

StatsReply StoreServer::Stats() const {
  const Allocator& a = table_.allocator();
  const TableStats& t = table_.stats();
  StatsReply r;
  r.capacity = a.capacity();
  r.used_bytes = a.used_bytes();
  r.objects_created = t.objects_created;
  r.objects_sealed = t.objects_sealed;
  r.ref_count = t.ref_count;
  r.clients = sessions_.size();
  r.evictions = t.evictions;
  r.evicted_bytes = t.evicted_bytes;
  r.free_blocks = a.free_blocks();
  r.largest_free_block = a.largest_free_block();
  r.fragmentation = a.fragmentation();
  r.waiting_gets = waiters_.size();
  r.subscribers = subscribers_.size();
  r.indexed_objects = index_ == nullptr ? 0 : index_->indexed();
  r.reclaims_waiting = table_.reclaims_waiting();
  return r;
}

}  // namespace rplasma
