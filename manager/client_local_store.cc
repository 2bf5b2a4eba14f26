#include "manager/client_local_store.h"

#include <vector>

namespace rplasma::manager {
namespace {

class BufferPin : public peer::PinnedObject {
 public:
  BufferPin(ObjectBuffer buffer, const uint8_t* base) : buffer_(std::move(buffer)), base_(base) {}
  const ObjectInfo& info() const override { return buffer_.info(); }
  const uint8_t* base() const override { return base_; }

 private:
  ObjectBuffer buffer_;  // releases the store reference on destruction
  const uint8_t* base_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<peer::PinnedObject>> ClientLocalStore::Pin(const ObjectID& id) {
  ASSIGN_OR_RETURN(ObjectBuffer buffer, client_->GetOne(id, absl::ZeroDuration()));
  const uint8_t* base = client_->arena_base() + buffer.info().offset;
  return std::unique_ptr<peer::PinnedObject>(new BufferPin(std::move(buffer), base));
}

absl::StatusOr<CreatedObject> ClientLocalStore::Create(const ObjectID& id, uint64_t data_size,
                                                       uint64_t metadata_size) {
  // The metadata is written in place after the data by the caller; reserve zeros for it.
  const std::vector<uint8_t> metadata(metadata_size, 0);
  return client_->Create(id, data_size, metadata, /*evict_if_full=*/true);
}

absl::Status ClientLocalStore::SealAndRelease(const ObjectID& id, uint64_t checksum) {
  return client_->SealAndRelease(id, checksum);  // one round trip
}

absl::Status ClientLocalStore::PutSealed(const ObjectID& id, absl::Span<const uint8_t> bytes, uint64_t data_size,
                                        uint64_t checksum) {
  if (bytes.size() > kMaxInlinePutBytes || data_size > bytes.size()) {
    return LocalStore::PutSealed(id, bytes, data_size, checksum);
  }
  return client_->PutInline(id, bytes.first(data_size), bytes.subspan(data_size), checksum);
}

absl::Status ClientLocalStore::Abort(const ObjectID& id) { return client_->Abort(id); }

absl::StatusOr<bool> ClientLocalStore::Contains(const ObjectID& id) { return client_->Contains(id); }

absl::StatusOr<std::vector<bool>> ClientLocalStore::ContainsAll(absl::Span<const ObjectID> ids) {
  return client_->Contains(ids);
}

absl::StatusOr<std::vector<ObjectInfo>> ClientLocalStore::ListSealed() {
  ASSIGN_OR_RETURN(std::vector<ObjectInfo> all, client_->List());
  std::vector<ObjectInfo> sealed;
  for (const ObjectInfo& info : all) {
    if (info.state == ObjectState::kSealed) sealed.push_back(info);
  }
  return sealed;
}

}  // namespace rplasma::manager
