// ClientLocalStore: peer::LocalStore over an rplasma::Client connected to this node's store
// (the manager's production store access). Thread-safety: thread-safe (Client is).
#ifndef RPLASMA_MANAGER_CLIENT_LOCAL_STORE_H_
#define RPLASMA_MANAGER_CLIENT_LOCAL_STORE_H_

#include "client/client.h"
#include "manager/peer/local_store.h"

namespace rplasma::manager {

class ClientLocalStore : public peer::LocalStore {
 public:
  explicit ClientLocalStore(Client* client) : client_(client) {}

  absl::StatusOr<std::unique_ptr<peer::PinnedObject>> Pin(const ObjectID& id) override;
  bool KnownSealedHere(const ObjectID& id) override { return client_->IndexedAsSealed(id); }
  absl::StatusOr<CreatedObject> Create(const ObjectID& id, uint64_t data_size, uint64_t metadata_size) override;
  absl::Status SealAndRelease(const ObjectID& id, uint64_t checksum) override;
  // One store round trip (Client::PutInline) up to kMaxInlinePutBytes; the default above that.
  absl::Status PutSealed(const ObjectID& id, absl::Span<const uint8_t> bytes, uint64_t data_size,
                         uint64_t checksum) override;
  // The batch calls: one store request per batch (Client's …Many calls split above the store's
  // per-request limits).
  std::vector<absl::StatusOr<std::unique_ptr<peer::PinnedObject>>> PinMany(absl::Span<const ObjectID> ids) override;
  void ReleaseMany(std::vector<std::unique_ptr<peer::PinnedObject>> objects) override;
  std::vector<absl::StatusOr<CreatedObject>> CreateMany(absl::Span<const ObjectID> ids,
                                                        absl::Span<const ObjectDescription> objects) override;
  std::unique_ptr<peer::PendingCreates> StartCreateMany(absl::Span<const ObjectID> ids,
                                                        absl::Span<const ObjectDescription> objects) override;
  std::vector<absl::Status> SealAndReleaseMany(absl::Span<const ObjectID> ids,
                                               absl::Span<const uint64_t> checksums) override;
  std::vector<absl::Status> PutSealedMany(absl::Span<const peer::SealedBytes> objects) override;
  // Client::SealAndReleaseManyDetached / PutInlineManyDetached.
  std::vector<absl::Status> SealAndReleaseManyDetached(absl::Span<const ObjectID> ids,
                                                       absl::Span<const uint64_t> checksums) override;
  std::vector<absl::Status> PutSealedManyDetached(absl::Span<const peer::SealedBytes> objects) override;
  absl::Status Abort(const ObjectID& id) override;
  absl::StatusOr<bool> Contains(const ObjectID& id) override;
  absl::StatusOr<std::vector<bool>> ContainsAll(absl::Span<const ObjectID> ids) override;
  absl::StatusOr<std::vector<ObjectInfo>> ListSealed() override;
  uint8_t* arena_base() const override { return client_->arena_base(); }
  uint64_t arena_size() const override { return client_->arena_size(); }

 private:
  std::vector<absl::Status> SealMany(absl::Span<const ObjectID> ids, absl::Span<const uint64_t> checksums,
                                     bool detached);
  std::vector<absl::Status> PutMany(absl::Span<const peer::SealedBytes> objects, bool detached);

  Client* const client_;
};

}  // namespace rplasma::manager

#endif  // RPLASMA_MANAGER_CLIENT_LOCAL_STORE_H_
