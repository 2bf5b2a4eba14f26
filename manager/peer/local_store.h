// LocalStore: what the manager needs from its node's rplasma-store, as an interface so that the
// peer service and the fetch engine can be unit-tested over an in-memory fake.
// Production implementation: manager/client_local_store.h (over rplasma::Client).
//
// All byte pointers point into the store's arena as this process maps it (the arena the transport
// registered), so a Read can land directly in a created object.
//
// Thread-safety: implementations are thread-safe.
#ifndef RPLASMA_MANAGER_PEER_LOCAL_STORE_H_
#define RPLASMA_MANAGER_PEER_LOCAL_STORE_H_

#include <cstdint>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"

#include "client/created_object.h"
#include "protocol/base/object_id.h"
#include "protocol/base/status.h"
#include "protocol/object_description.h"
#include "protocol/store_messages.h"

namespace rplasma::peer {

// A sealed object held by one store reference; the reference is dropped on destruction.
class PinnedObject {
 public:
  virtual ~PinnedObject() = default;
  virtual const ObjectInfo& info() const = 0;  // offset, sizes, generation, checksum
  virtual const uint8_t* base() const = 0;     // data, then metadata right after it
};

// A fetched object's verified bytes, to be stored sealed (LocalStore::PutSealedMany).
struct SealedBytes {
  ObjectID id;
  absl::Span<const uint8_t> bytes;  // data_size bytes of data, then the metadata
  uint64_t data_size = 0;
  uint64_t checksum = 0;  // ObjectChecksum of `bytes`, already verified
};

// A CreateMany under way (LocalStore::StartCreateMany).
class PendingCreates {
 public:
  virtual ~PendingCreates() = default;
  // CreateMany's answers, one per id, in order. Call once. An implementation destroyed before it
  // aborts whatever it created.
  virtual std::vector<absl::StatusOr<CreatedObject>> Finish() = 0;
};

// The batch calls (…Many) answer one entry per input, in order; a store that cannot be asked
// fails every entry with that error. Their defaults loop over the single calls; a store that
// takes batches overrides them with one request per batch.
class LocalStore {
 public:
  virtual ~LocalStore() = default;

  // A reference on sealed `id`, without waiting (ObjectNotFound / ObjectNotSealed otherwise).
  virtual absl::StatusOr<std::unique_ptr<PinnedObject>> Pin(const ObjectID& id) = 0;
  // True if `id` is known sealed here without asking the store (the shared index); false means
  // "ask": ContainsAll is the answer.
  virtual bool KnownSealedHere(const ObjectID& id) { return false; }
  // Creates `id` (evicting unreferenced objects if the arena is full) with metadata_size bytes of
  // metadata space, zero-filled; the caller then writes data and metadata in place.
  virtual absl::StatusOr<CreatedObject> Create(const ObjectID& id, uint64_t data_size, uint64_t metadata_size) = 0;
  // Seal + release the creator's reference. `checksum` is the verified checksum of the bytes
  // (client/checksum.h), so sealing does not read the object again.
  virtual absl::Status SealAndRelease(const ObjectID& id, uint64_t checksum) = 0;
  // Creates `id` sealed from `bytes` — data_size bytes of data, then the metadata — with their
  // verified `checksum`, holding no reference afterwards. This default creates, copies and seals
  // (two store round trips); a store that takes small objects in one request overrides it, and
  // may refuse more than kMaxInlinePutBytes (the store's one-request put limit) as the real one
  // does: callers put no larger object this way.
  virtual absl::Status PutSealed(const ObjectID& id, absl::Span<const uint8_t> bytes, uint64_t data_size,
                                 uint64_t checksum) {
    if (data_size > bytes.size()) return MakeError(ErrorCode::kInvalidArgument, "put: data size exceeds the bytes");
    ASSIGN_OR_RETURN(CreatedObject created, Create(id, data_size, bytes.size() - data_size));
    if (!bytes.empty()) std::memcpy(created.base(), bytes.data(), bytes.size());
    absl::Status sealed = SealAndRelease(id, checksum);
    if (!sealed.ok()) (void)Abort(id);
    return sealed;
  }
  // Pin for each id.
  virtual std::vector<absl::StatusOr<std::unique_ptr<PinnedObject>>> PinMany(absl::Span<const ObjectID> ids) {
    std::vector<absl::StatusOr<std::unique_ptr<PinnedObject>>> out;
    out.reserve(ids.size());
    for (const ObjectID& id : ids) out.push_back(Pin(id));
    return out;
  }
  // Drops the references of `objects` (all pinned by this store) together.
  virtual void ReleaseMany(std::vector<std::unique_ptr<PinnedObject>> objects) { objects.clear(); }
  // Create for each id, sized as objects[i] says (data_size, metadata_size).
  virtual std::vector<absl::StatusOr<CreatedObject>> CreateMany(absl::Span<const ObjectID> ids,
                                                                absl::Span<const ObjectDescription> objects) {
    std::vector<absl::StatusOr<CreatedObject>> out;
    out.reserve(ids.size());
    for (size_t i = 0; i < ids.size(); ++i)
      out.push_back(Create(ids[i], objects[i].data_size, objects[i].metadata_size));
    return out;
  }
  // CreateMany begun now and answered by the result's Finish(): what the caller does in between
  // (a call to a peer) overlaps the store's work, on the caller's thread. This default creates at
  // once (and aborts them if the result goes unfinished); a store reached through a socket sends
  // the request and reads the answer in Finish.
  virtual std::unique_ptr<PendingCreates> StartCreateMany(absl::Span<const ObjectID> ids,
                                                          absl::Span<const ObjectDescription> objects) {
    class Answered final : public PendingCreates {
     public:
      Answered(LocalStore* store, std::vector<absl::StatusOr<CreatedObject>> answers)
          : store_(store), answers_(std::move(answers)) {}
      ~Answered() override {
        for (const absl::StatusOr<CreatedObject>& answer : answers_) {
          if (answer.ok()) (void)store_->Abort(answer->id);
        }
      }
      std::vector<absl::StatusOr<CreatedObject>> Finish() override { return std::exchange(answers_, {}); }

     private:
      LocalStore* const store_;
      std::vector<absl::StatusOr<CreatedObject>> answers_;  // empty once taken
    };
    return std::make_unique<Answered>(this, CreateMany(ids, objects));
  }
  // SealAndRelease for each id with checksums[i].
  virtual std::vector<absl::Status> SealAndReleaseMany(absl::Span<const ObjectID> ids,
                                                       absl::Span<const uint64_t> checksums) {
    std::vector<absl::Status> out;
    out.reserve(ids.size());
    for (size_t i = 0; i < ids.size(); ++i) out.push_back(SealAndRelease(ids[i], checksums[i]));
    return out;
  }
  // PutSealed for each object.
  virtual std::vector<absl::Status> PutSealedMany(absl::Span<const SealedBytes> objects) {
    std::vector<absl::Status> out;
    out.reserve(objects.size());
    for (const SealedBytes& o : objects) out.push_back(PutSealed(o.id, o.bytes, o.data_size, o.checksum));
    return out;
  }
  // SealAndReleaseMany and PutSealedMany without waiting for the store: every request this
  // process sends the store afterwards finds them done. What the store refuses then (a put finding
  // the arena full, a seal of an object deleted meanwhile) goes unreported: each answer is OK (or
  // the error of sending); the caller learns of a refusal by not finding the object sealed. These
  // defaults wait (and report each outcome).
  virtual std::vector<absl::Status> SealAndReleaseManyDetached(absl::Span<const ObjectID> ids,
                                                               absl::Span<const uint64_t> checksums) {
    return SealAndReleaseMany(ids, checksums);
  }
  virtual std::vector<absl::Status> PutSealedManyDetached(absl::Span<const SealedBytes> objects) {
    return PutSealedMany(objects);
  }
  // Discards an object this process created and has not sealed.
  virtual absl::Status Abort(const ObjectID& id) = 0;
  virtual absl::StatusOr<bool> Contains(const ObjectID& id) = 0;
  // Contains for each id, in order (one store round trip for a batch).
  virtual absl::StatusOr<std::vector<bool>> ContainsAll(absl::Span<const ObjectID> ids) = 0;
  // Every sealed object (for republishing).
  virtual absl::StatusOr<std::vector<ObjectInfo>> ListSealed() = 0;

  virtual uint8_t* arena_base() const = 0;
  virtual uint64_t arena_size() const = 0;
};

}  // namespace rplasma::peer

#endif  // RPLASMA_MANAGER_PEER_LOCAL_STORE_H_
