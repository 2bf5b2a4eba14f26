// In-process fakes of the layers below the peer protocol, for unit tests of the peer side and of
// the layers above it:
//   FakeLocalStore — an in-memory arena whose objects the store's own ObjectTable keeps
//   FakeChannel    — a transport::Channel that calls a peer's RequestHandler directly and serves
//                    Reads from the peer's FakeLocalStore arena (tcp-like: AllowRead is asked)
#ifndef RPLASMA_TESTS_UNIT_PEER_PEER_FAKES_H_
#define RPLASMA_TESTS_UNIT_PEER_PEER_FAKES_H_

#include <atomic>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include <gtest/gtest.h>

#include "client/checksum.h"
#include "manager/peer/local_store.h"
#include "manager/transport/transport.h"
#include "protocol/base/mutex_lock.h"
#include "protocol/base/status.h"
#include "protocol/object_description.h"
#include "protocol/store_messages.h"
#include "store/object_table.h"
#include "tests/support/test_arena.h"

namespace rplasma::testing {

// A PeerService's RegionFor for FakeChannel, which reads the arena at the offset itself.
inline transport::RemoteRegion ArenaRegion(uint64_t offset, uint64_t length) { return {offset, length, 0}; }

class FakeLocalStore : public peer::LocalStore {
 public:
  // `capacity` bytes of arena, their objects kept by the store's own ObjectTable (lifecycle,
  // references, allocation, LRU eviction when full): only the socket and the processes are missing.
  explicit FakeLocalStore(uint64_t capacity)
      : arena_(capacity), table_(capacity, /*generation_seed=*/1, [](EventKind, const ObjectInfo&) {}) {}

  // An object as the tests look at it.
  struct Entry {
    uint64_t offset = 0, data_size = 0, metadata_size = 0, generation = 0, checksum = 0;
    bool sealed = false;
    int refs = 0;

    ObjectDescription description() const { return {data_size, metadata_size, generation, checksum}; }
  };

  class Pinned : public peer::PinnedObject {
   public:
    Pinned(FakeLocalStore* store, ObjectInfo info) : store_(store), info_(info) {}
    ~Pinned() override {
      MutexLock lock(&store_->mu_);
      (void)store_->table_.Release(kClient, info_.id);
    }
    const ObjectInfo& info() const override { return info_; }
    const uint8_t* base() const override { return store_->arena_.base() + info_.offset; }

   private:
    FakeLocalStore* store_;
    ObjectInfo info_;
  };

  absl::StatusOr<std::unique_ptr<peer::PinnedObject>> Pin(const ObjectID& id) override {
    MutexLock lock(&mu_);
    ASSIGN_OR_RETURN(ObjectInfo info, table_.Get(kClient, id));
    return std::unique_ptr<peer::PinnedObject>(new Pinned(this, info));
  }
  absl::StatusOr<CreatedObject> Create(const ObjectID& id, uint64_t data_size, uint64_t metadata_size) override {
    MutexLock lock(&mu_);
    ASSIGN_OR_RETURN(ObjectInfo info, table_.Create(kClient, id, data_size, metadata_size, /*evict_if_full=*/true));
    uint8_t* base = arena_.base() + info.offset;
    std::memset(base, 0, data_size + metadata_size);
    return CreatedObject{id, absl::MakeSpan(base, data_size), absl::MakeSpan(base + data_size, metadata_size),
                         info.offset, info.generation};
  }
  // As the store's one-request put (ClientLocalStore): at most kMaxInlinePutBytes.
  absl::Status PutSealed(const ObjectID& id, absl::Span<const uint8_t> bytes, uint64_t data_size,
                         uint64_t checksum) override {
    if (bytes.size() > kMaxInlinePutBytes) {
      return MakeError(ErrorCode::kInvalidArgument, "put: above the store's inline put limit");
    }
    return peer::LocalStore::PutSealed(id, bytes, data_size, checksum);
  }
  absl::Status SealAndRelease(const ObjectID& id, uint64_t checksum) override {
    MutexLock lock(&mu_);
    RETURN_IF_ERROR(table_.Seal(kClient, id, checksum));  // the checksum is trusted, as the store does
    return table_.Release(kClient, id);
  }
  absl::Status Abort(const ObjectID& id) override {
    MutexLock lock(&mu_);
    RETURN_IF_ERROR(table_.Abort(kClient, id));
    ++aborts_;
    return absl::OkStatus();
  }
  // As a shared index that holds every object: sealed here is known without a round trip.
  bool KnownSealedHere(const ObjectID& id) override {
    MutexLock lock(&mu_);
    return table_.Contains(id) == ErrorCode::kOk;
  }
  absl::StatusOr<std::vector<bool>> ContainsAll(absl::Span<const ObjectID> ids) override {
    contains_batches_++;
    if (fail_contains) return MakeError(ErrorCode::kUnavailable, "fake store: contains failed");
    std::vector<bool> present;
    MutexLock lock(&mu_);
    for (const ObjectID& id : ids) present.push_back(table_.Contains(id) == ErrorCode::kOk);
    return present;
  }
  absl::StatusOr<bool> Contains(const ObjectID& id) override {
    contains_singles_++;
    if (fail_contains) return MakeError(ErrorCode::kUnavailable, "fake store: contains failed");
    MutexLock lock(&mu_);
    return table_.Contains(id) == ErrorCode::kOk;
  }
  // Store round trips spent on Contains: ContainsAll batches, and single-id Contains calls.
  int contains_batches() const { return contains_batches_.load(); }
  int contains_singles() const { return contains_singles_.load(); }
  int contains_round_trips() const { return contains_batches() + contains_singles(); }
  std::atomic<bool> fail_contains{false};  // Contains and ContainsAll fail with kUnavailable
  absl::StatusOr<std::vector<ObjectInfo>> ListSealed() override {
    std::vector<ObjectInfo> sealed;
    for (const ObjectInfo& info : All()) {
      if (info.state == ObjectState::kSealed) sealed.push_back(info);
    }
    return sealed;
  }
  uint8_t* arena_base() const override { return arena_.base(); }
  uint64_t arena_size() const override { return arena_.size(); }

  // Create + write + seal. Returns the entry.
  Entry Put(const ObjectID& id, const std::string& data, const std::string& metadata = "") {
    absl::StatusOr<CreatedObject> created = Create(id, data.size(), metadata.size());
    if (!created.ok()) {
      ADD_FAILURE() << "fake store: put " << id.Hex() << ": " << created.status();
      return Entry{};
    }
    std::memcpy(created->data.data(), data.data(), data.size());
    std::memcpy(created->metadata.data(), metadata.data(), metadata.size());
    (void)SealAndRelease(id, ObjectChecksum(created->data, created->metadata));
    return Get(id);
  }
  // The visible object `id` (a default Entry if there is none).
  Entry Get(const ObjectID& id) {
    MutexLock lock(&mu_);
    std::optional<ObjectInfo> info = table_.Find(id);
    if (!info.has_value()) return Entry{};
    Entry e;
    e.offset = info->offset;
    e.data_size = info->data_size;
    e.metadata_size = info->metadata_size;
    e.generation = info->generation;
    e.checksum = info->checksum;
    e.sealed = info->state == ObjectState::kSealed;
    e.refs = static_cast<int>(table_.ClientRefs(kClient, id));
    return e;
  }
  // Deleted as the store deletes: freed now, or hidden until its last reference is released.
  void Erase(const ObjectID& id) {
    MutexLock lock(&mu_);
    (void)table_.Delete(id);
  }
  // The bytes (data + metadata) of the visible object `id`; "" if there is none.
  std::string Bytes(const ObjectID& id) {
    const Entry e = Get(id);
    return std::string(reinterpret_cast<const char*>(arena_.base() + e.offset), e.data_size + e.metadata_size);
  }
  int unsealed() {
    int n = 0;
    for (const ObjectInfo& info : All()) n += info.state != ObjectState::kSealed;
    return n;
  }
  // Every reference held, hidden (deleted) objects' included.
  int total_refs() {
    MutexLock lock(&mu_);
    return static_cast<int>(table_.stats().ref_count);
  }
  int aborts() {
    MutexLock lock(&mu_);
    return aborts_;
  }

 private:
  // The one client the table sees: every pin, create and seal of this "manager".
  static constexpr ClientId kClient = 1;

  std::vector<ObjectInfo> All() {
    MutexLock lock(&mu_);
    bool more = false;
    return table_.List(std::nullopt, ~uint32_t{0}, &more);
  }

  absl::Mutex mu_;
  TestArena arena_;  // zero, its pages touched only when written
  ObjectTable table_ ABSL_GUARDED_BY(mu_);
  int aborts_ ABSL_GUARDED_BY(mu_) = 0;
  std::atomic<int> contains_batches_{0};
  std::atomic<int> contains_singles_{0};
};

// Calls `handler` in-process; Reads copy from `owner`'s arena at region.addr (an arena offset).
class FakeChannel : public transport::Channel {
 public:
  FakeChannel(transport::RequestHandler* handler, FakeLocalStore* owner, uint64_t conn_id)
      : handler_(handler), owner_(owner), conn_id_(conn_id), address_("fake:" + std::to_string(conn_id)) {}
  ~FakeChannel() override { handler_->OnDisconnect(conn_id_); }

  absl::StatusOr<std::string> Call(absl::string_view request, absl::Time deadline) override {
    calls++;
    if (before_call) before_call();
    if (fail_calls) return MakeError(ErrorCode::kUnavailable, "fake channel: call failed");
    return handler_->HandleCall(conn_id_, request).Flatten();
  }
  absl::Status Read(const transport::RemoteRegion& region, uint8_t* dst, absl::Time deadline) override {
    reads++;
    if (fail_reads) return MakeError(ErrorCode::kUnavailable, "fake channel: read failed");
    if (!handler_->AllowRead(conn_id_, region)) return MakeError(ErrorCode::kPermissionDenied, "fake: read refused");
    std::memcpy(dst, owner_->arena_base() + region.addr, region.length);
    if (corrupt_reads && region.length > 0) dst[region.length / 2] ^= 0xff;
    if (after_read) after_read();
    return absl::OkStatus();
  }
  bool healthy() const override { return true; }
  const std::string& peer_address() const override { return address_; }

  std::atomic<int> calls{0};
  std::atomic<int> reads{0};
  std::atomic<bool> fail_reads{false};
  std::atomic<bool> fail_calls{false};
  std::atomic<bool> corrupt_reads{false};
  std::function<void()> before_call;  // set before use; called on every Call
  std::function<void()> after_read;   // set before use; called after every successful Read

 private:
  transport::RequestHandler* handler_;
  FakeLocalStore* owner_;
  uint64_t conn_id_;
  std::string address_;
};

}  // namespace rplasma::testing

#endif  // RPLASMA_TESTS_UNIT_PEER_PEER_FAKES_H_
