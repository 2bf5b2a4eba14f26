#include "store/object_table.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"

#include "protocol/base/logging.h"

namespace rplasma {

ObjectTable::ObjectTable(uint64_t capacity, uint64_t generation_seed, EventSink sink, SharedIndex* index)
    : allocator_(capacity), next_generation_(generation_seed), sink_(std::move(sink)), index_(index) {}

ObjectInfo ObjectTable::Info(const ObjectID& id, const ObjectEntry& e) {
  ObjectInfo info;
  info.id = id;
  info.state = e.state;
  info.offset = e.offset;
  info.data_size = e.data_size;
  info.metadata_size = e.metadata_size;
  info.generation = e.generation;
  info.checksum = e.checksum;
  info.ref_count = e.ref_count;
  return info;
}

absl::StatusOr<ObjectInfo> ObjectTable::Create(ClientId client, const ObjectID& id, uint64_t data_size,
                                               uint64_t metadata_size, bool evict_if_full) {
  if (objects_.contains(id)) return ObjectExistsError(absl::StrCat("create(", id.Hex(), "): object exists"));
  uint64_t total = data_size + metadata_size;  // both <= kMaxObjectBytes (checked by the decoder)
  if (total > allocator_.capacity()) {
    return OutOfMemoryError(
        absl::StrCat("create(", id.Hex(), "): ", total, " bytes exceed the arena of ", allocator_.capacity()));
  }
  std::optional<uint64_t> offset = allocator_.Allocate(total);
  bool evicted_some = true;
  if (!offset && evict_if_full) DrainAccesses();  // reads through the index count before victims are picked
  while (!offset && evict_if_full && evicted_some) {
    // Free what is missing in one batch, then retry; if fragmentation still leaves no block large
    // enough, keep evicting (oldest first) until it fits or nothing is left to evict.
    uint64_t need = Allocator::BlockSize(total);
    uint64_t missing = need > allocator_.free_bytes() ? need - allocator_.free_bytes() : 1;
    uint64_t freed = 0;
    EvictResult evicted;
    while (freed < missing) {
      uint64_t before = allocator_.free_bytes();
      if (!EvictOne(&evicted)) break;
      freed += allocator_.free_bytes() - before;
    }
    evicted_some = evicted.objects > 0;
    offset = allocator_.Allocate(total);
  }
  if (!offset) {
    return OutOfMemoryError(absl::StrCat("create(", id.Hex(), "): no room for ", total, " bytes (",
                                         allocator_.free_bytes(), " free, largest block ",
                                         allocator_.largest_free_block(), ")"));
  }
  ObjectEntry e;
  e.offset = *offset;
  e.data_size = data_size;
  e.metadata_size = metadata_size;
  e.generation = next_generation_++;
  e.creator = client;
  auto it = objects_.emplace(id, e).first;
  order_.insert(id);
  ++stats_.objects_created;
  AddRef(client, it);
  return Info(id, it->second);
}

absl::Status ObjectTable::Seal(ClientId client, const ObjectID& id, uint64_t checksum) {
  auto it = objects_.find(id);
  if (it == objects_.end() || it->second.delete_pending) {
    return ObjectNotFoundError(absl::StrCat("seal(", id.Hex(), "): no such object"));
  }
  ObjectEntry& e = it->second;
  if (e.state == ObjectState::kSealed) {
    return MakeError(ErrorCode::kObjectAlreadySealed, absl::StrCat("seal(", id.Hex(), "): already sealed"));
  }
  if (e.creator != client) {
    return MakeError(ErrorCode::kNotCreator, absl::StrCat("seal(", id.Hex(), "): not the creator"));
  }
  e.state = ObjectState::kSealed;
  e.checksum = checksum;
  if (index_ != nullptr) {
    e.index_entry = index_->Publish(id, {e.offset, e.data_size, e.metadata_size, e.generation, e.checksum});
  }
  --stats_.objects_created;
  ++stats_.objects_sealed;
  if (sink_) sink_(EventKind::kSealed, Info(id, e));
  return absl::OkStatus();
}

absl::Status ObjectTable::Abort(ClientId client, const ObjectID& id) {
  auto it = objects_.find(id);
  if (it == objects_.end() || it->second.delete_pending) {
    return ObjectNotFoundError(absl::StrCat("abort(", id.Hex(), "): no such object"));
  }
  if (it->second.state == ObjectState::kSealed) {
    return MakeError(ErrorCode::kObjectAlreadySealed, absl::StrCat("abort(", id.Hex(), "): already sealed"));
  }
  if (it->second.creator != client) {
    return MakeError(ErrorCode::kNotCreator, absl::StrCat("abort(", id.Hex(), "): not the creator"));
  }
  Erase(it);
  return absl::OkStatus();
}

absl::StatusOr<ObjectInfo> ObjectTable::Get(ClientId client, const ObjectID& id) {
  auto it = objects_.find(id);
  if (it == objects_.end() || it->second.delete_pending) {
    return ObjectNotFoundError(absl::StrCat("get(", id.Hex(), "): no such object"));
  }
  if (it->second.state != ObjectState::kSealed) {
    return ObjectNotSealedError(absl::StrCat("get(", id.Hex(), "): not sealed"));
  }
  AddRef(client, it);
  return Info(id, it->second);
}

absl::Status ObjectTable::Release(ClientId client, const ObjectID& id) {
  auto it = objects_.find(id);
  if (it == objects_.end()) return ObjectNotFoundError(absl::StrCat("release(", id.Hex(), "): no such object"));
  if (it->second.state != ObjectState::kSealed) {
    return ObjectNotSealedError(absl::StrCat("release(", id.Hex(), "): not sealed; abort it instead"));
  }
  if (ClientRefs(client, id) == 0) {
    return MakeError(ErrorCode::kInvalidArgument, absl::StrCat("release(", id.Hex(), "): no reference held"));
  }
  DropRef(client, it);
  return absl::OkStatus();
}

ErrorCode ObjectTable::Contains(const ObjectID& id) const {
  auto it = objects_.find(id);
  if (it == objects_.end() || it->second.delete_pending) return ErrorCode::kObjectNotFound;
  return it->second.state == ObjectState::kSealed ? ErrorCode::kOk : ErrorCode::kObjectNotSealed;
}

ErrorCode ObjectTable::Delete(const ObjectID& id) {
  auto it = objects_.find(id);
  if (it == objects_.end() || it->second.delete_pending) return ErrorCode::kObjectNotFound;
  if (it->second.state != ObjectState::kSealed) return ErrorCode::kObjectNotSealed;
  if (sink_) sink_(EventKind::kDeleted, Info(id, it->second));
  ObjectEntry& e = it->second;
  e.delete_pending = true;
  // Out of the index now, so no new get finds it; freed once no reference (table or slot) is left.
  if (e.index_entry != SharedIndex::kNotIndexed && index_->Hide(e.index_entry, e.generation)) {
    if (e.ref_count == 0) {
      LruErase(e);
      reclaim_waiting_.insert(id);
    }
    return ErrorCode::kOk;
  }
  if (e.ref_count == 0) Erase(it);
  return ErrorCode::kOk;
}

EvictResult ObjectTable::Evict(uint64_t bytes) {
  DrainAccesses();  // reads through the index count before victims are picked
  EvictResult result;
  while (result.bytes < bytes && EvictOne(&result)) {
  }
  return result;
}

bool ObjectTable::MayEvict(ObjectEntry& e) {
  if (e.index_entry == SharedIndex::kNotIndexed || !index_->Hide(e.index_entry, e.generation)) return true;
  index_->Unhide(e.index_entry);
  return false;
}

bool ObjectTable::EvictOne(EvictResult* result) {
  // A candidate a slot holds goes to the young end; each object is looked at once per call.
  Map::iterator it = objects_.end();
  for (size_t candidates = lru_.size(); candidates > 0; --candidates) {
    auto candidate = objects_.find(lru_.begin()->second);
    CHECK(candidate != objects_.end()) << "LRU entry without object";
    ObjectEntry& e = candidate->second;
    CHECK(e.ref_count == 0 && e.state == ObjectState::kSealed) << "LRU holds a referenced or unsealed object";
    if (MayEvict(e)) {
      it = candidate;
      break;
    }
    ++stats_.evictions_skipped;
    LruErase(e);
    LruInsert(candidate->first, e);
  }
  if (it == objects_.end()) return false;
  const ObjectEntry& e = it->second;
  uint64_t bytes = e.data_size + e.metadata_size;
  result->bytes += bytes;
  ++result->objects;
  ++stats_.evictions;
  stats_.evicted_bytes += bytes;
  if (sink_) sink_(EventKind::kEvicted, Info(it->first, e));
  Erase(it);
  return true;
}

void ObjectTable::RemoveClient(ClientId client) {
  auto node = client_refs_.extract(client);
  if (node.empty()) return;
  for (const auto& [id, count] : node.mapped()) {
    auto it = objects_.find(id);
    CHECK(it != objects_.end()) << "client reference to a missing object";
    if (it->second.state == ObjectState::kCreated) {
      CHECK(it->second.creator == client) << "reference to an unsealed object by a non-creator";
      Erase(it);
      continue;
    }
    for (uint32_t i = 0; i < count; ++i) {
      ObjectEntry& e = it->second;
      --e.ref_count;
      --stats_.ref_count;
      if (e.ref_count == 0) {
        if (e.delete_pending) {
          ReclaimDeleted(it);
          break;
        }
        LruInsert(it->first, e);
      }
    }
  }
}

std::vector<ObjectInfo> ObjectTable::List(const std::optional<ObjectID>& start_after, uint32_t limit,
                                          bool* more) const {
  std::vector<ObjectInfo> out;
  auto next = start_after ? order_.upper_bound(*start_after) : order_.begin();
  *more = false;
  for (; next != order_.end(); ++next) {
    const ObjectEntry& e = objects_.at(*next);
    if (e.delete_pending) continue;
    if (out.size() == limit) {
      *more = true;
      break;
    }
    out.push_back(Info(*next, e));
  }
  return out;
}

std::optional<ObjectInfo> ObjectTable::Find(const ObjectID& id) const {
  auto it = objects_.find(id);
  if (it == objects_.end() || it->second.delete_pending) return std::nullopt;
  return Info(id, it->second);
}

uint32_t ObjectTable::ClientRefs(ClientId client, const ObjectID& id) const {
  auto c = client_refs_.find(client);
  if (c == client_refs_.end()) return 0;
  auto r = c->second.find(id);
  return r == c->second.end() ? 0 : r->second;
}

void ObjectTable::AddRef(ClientId client, Map::iterator it) {
  ObjectEntry& e = it->second;
  if (e.ref_count == 0) LruErase(e);
  ++e.ref_count;
  ++stats_.ref_count;
  ++client_refs_[client][it->first];
}

void ObjectTable::DropRef(ClientId client, Map::iterator it) {
  auto& refs = client_refs_[client];
  auto r = refs.find(it->first);
  if (--r->second == 0) refs.erase(r);
  ObjectEntry& e = it->second;
  --e.ref_count;
  --stats_.ref_count;
  if (e.ref_count > 0) return;
  if (e.delete_pending) {
    ReclaimDeleted(it);
  } else {
    LruInsert(it->first, e);
  }
}

void ObjectTable::ReclaimDeleted(Map::iterator it) {
  const ObjectEntry& e = it->second;
  // Hidden by Delete already: a slot that holds it now claimed it before that, and stays visible.
  if (e.index_entry != SharedIndex::kNotIndexed && index_->Held(e.generation)) {
    reclaim_waiting_.insert(it->first);
    return;
  }
  reclaim_waiting_.erase(it->first);
  Erase(it);
}

void ObjectTable::RetryReclaims() {
  for (auto waiting = reclaim_waiting_.begin(); waiting != reclaim_waiting_.end();) {
    auto it = objects_.find(*waiting);
    CHECK(it != objects_.end()) << "a waiting reclaim without object";
    if (index_->Held(it->second.generation)) {
      ++waiting;
      continue;
    }
    waiting = reclaim_waiting_.erase(waiting);
    Erase(it);
  }
}

void ObjectTable::DrainAccesses() {
  if (index_ == nullptr) return;
  index_->DrainAccesses([this](const ObjectID& id, uint64_t entry) {
    auto it = objects_.find(id);
    if (it == objects_.end()) return;
    ObjectEntry& e = it->second;
    // Only an evictable object has a place in the LRU; a used one moves to its young end.
    if (e.index_entry != entry || e.lru_tick == 0) return;
    LruErase(e);
    LruInsert(id, e);
  });
}

void ObjectTable::LruInsert(const ObjectID& id, ObjectEntry& e) {
  e.lru_tick = next_tick_++;
  lru_.emplace(e.lru_tick, id);
}

void ObjectTable::LruErase(ObjectEntry& e) {
  if (e.lru_tick == 0) return;
  lru_.erase(e.lru_tick);
  e.lru_tick = 0;
}

void ObjectTable::Erase(Map::iterator it) {
  ObjectEntry& e = it->second;
  LruErase(e);
  if (e.ref_count > 0) {
    // Only an unsealed object is erased with references: its creator's, dropped by the abort.
    stats_.ref_count -= e.ref_count;
    auto c = client_refs_.find(e.creator);
    if (c != client_refs_.end()) c->second.erase(it->first);
  }
  // Hidden, and no slot held it, when the caller looked.
  if (e.index_entry != SharedIndex::kNotIndexed) index_->Remove(e.index_entry);
  allocator_.Free(e.offset, e.data_size + e.metadata_size);
  if (e.state == ObjectState::kSealed) {
    --stats_.objects_sealed;
  } else {
    --stats_.objects_created;
  }
  order_.erase(it->first);
  objects_.erase(it);
}

}  // namespace rplasma
