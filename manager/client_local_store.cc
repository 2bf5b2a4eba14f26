#include "manager/client_local_store.h"

#include <algorithm>
#include <vector>

#include "protocol/base/logging.h"

namespace rplasma::manager {
namespace {

class BufferPin : public peer::PinnedObject {
 public:
  BufferPin(ObjectBuffer buffer, const uint8_t* base) : buffer_(std::move(buffer)), base_(base) {}
  const ObjectInfo& info() const override { return buffer_.info(); }
  const uint8_t* base() const override { return base_; }
  // The reference, for a release together with others.
  ObjectBuffer Take() { return std::move(buffer_); }

 private:
  ObjectBuffer buffer_;  // releases the store reference on destruction
  const uint8_t* base_;
};

// `n` copies of a failed batch call's status (the store could not be asked).
template <typename T>
std::vector<T> AllFailed(size_t n, const absl::Status& status) {
  return std::vector<T>(n, T(status));
}

std::vector<CreateSpec> CreateSpecs(absl::Span<const ObjectID> ids, absl::Span<const ObjectDescription> objects) {
  std::vector<CreateSpec> specs;
  specs.reserve(ids.size());
  for (size_t i = 0; i < ids.size(); ++i)
    specs.push_back(CreateSpec{ids[i], objects[i].data_size, objects[i].metadata_size});
  return specs;
}

// The client's outer error as every entry's.
std::vector<absl::StatusOr<CreatedObject>> PerObject(
    size_t count, absl::StatusOr<std::vector<absl::StatusOr<CreatedObject>>> created) {
  if (!created.ok()) return AllFailed<absl::StatusOr<CreatedObject>>(count, created.status());
  return *std::move(created);
}

class ClientPendingCreates final : public peer::PendingCreates {
 public:
  ClientPendingCreates(size_t count, std::unique_ptr<PendingCreateMany> pending)
      : count_(count), pending_(std::move(pending)) {}
  std::vector<absl::StatusOr<CreatedObject>> Finish() override { return PerObject(count_, pending_->Finish()); }

 private:
  const size_t count_;
  const std::unique_ptr<PendingCreateMany> pending_;  // aborts what it created if never finished
};

}  // namespace

std::vector<absl::StatusOr<std::unique_ptr<peer::PinnedObject>>> ClientLocalStore::PinMany(
    absl::Span<const ObjectID> ids) {
  std::vector<absl::StatusOr<std::unique_ptr<peer::PinnedObject>>> out;
  out.reserve(ids.size());
  absl::StatusOr<std::vector<ObjectBuffer>> buffers = client_->Get(ids, absl::ZeroDuration());
  if (!buffers.ok()) {
    for (size_t i = 0; i < ids.size(); ++i) out.emplace_back(buffers.status());
    return out;
  }
  for (ObjectBuffer& buffer : *buffers) {
    if (!buffer.valid()) {
      out.emplace_back(buffer.status());
      continue;
    }
    const uint8_t* base = client_->arena_base() + buffer.info().offset;
    out.emplace_back(std::unique_ptr<peer::PinnedObject>(new BufferPin(std::move(buffer), base)));
  }
  return out;
}

void ClientLocalStore::ReleaseMany(std::vector<std::unique_ptr<peer::PinnedObject>> objects) {
  std::vector<ObjectBuffer> buffers;
  buffers.reserve(objects.size());
  for (std::unique_ptr<peer::PinnedObject>& object : objects) {
    // Every PinnedObject this store hands out is a BufferPin.
    if (auto* pin = dynamic_cast<BufferPin*>(object.get())) buffers.push_back(pin->Take());
  }
  absl::Status released = client_->Release(absl::MakeSpan(buffers));
  if (!released.ok()) LOG(WARNING) << "release of " << buffers.size() << " objects: " << released;
}

std::vector<absl::StatusOr<CreatedObject>> ClientLocalStore::CreateMany(absl::Span<const ObjectID> ids,
                                                                        absl::Span<const ObjectDescription> objects) {
  return PerObject(ids.size(), client_->CreateMany(CreateSpecs(ids, objects), /*evict_if_full=*/true));
}

std::unique_ptr<peer::PendingCreates> ClientLocalStore::StartCreateMany(absl::Span<const ObjectID> ids,
                                                                        absl::Span<const ObjectDescription> objects) {
  return std::make_unique<ClientPendingCreates>(
      ids.size(), client_->StartCreateMany(CreateSpecs(ids, objects), /*evict_if_full=*/true));
}

std::vector<absl::Status> ClientLocalStore::SealAndReleaseMany(absl::Span<const ObjectID> ids,
                                                               absl::Span<const uint64_t> checksums) {
  return SealMany(ids, checksums, /*detached=*/false);
}

std::vector<absl::Status> ClientLocalStore::SealAndReleaseManyDetached(absl::Span<const ObjectID> ids,
                                                                       absl::Span<const uint64_t> checksums) {
  return SealMany(ids, checksums, /*detached=*/true);
}

std::vector<absl::Status> ClientLocalStore::SealMany(absl::Span<const ObjectID> ids,
                                                     absl::Span<const uint64_t> checksums, bool detached) {
  std::vector<SealSpec> specs;
  specs.reserve(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) specs.push_back(SealSpec{ids[i], checksums[i]});
  absl::StatusOr<std::vector<absl::Status>> sealed =
      detached ? client_->SealAndReleaseManyDetached(specs) : client_->SealAndReleaseMany(specs);
  if (!sealed.ok()) return AllFailed<absl::Status>(ids.size(), sealed.status());
  return *std::move(sealed);
}

std::vector<absl::Status> ClientLocalStore::PutSealedMany(absl::Span<const peer::SealedBytes> objects) {
  return PutMany(objects, /*detached=*/false);
}

std::vector<absl::Status> ClientLocalStore::PutSealedManyDetached(absl::Span<const peer::SealedBytes> objects) {
  return PutMany(objects, /*detached=*/true);
}

std::vector<absl::Status> ClientLocalStore::PutMany(absl::Span<const peer::SealedBytes> objects, bool detached) {
  std::vector<InlineObject> inline_objects;
  inline_objects.reserve(objects.size());
  for (const peer::SealedBytes& o : objects) {
    const uint64_t data_size = std::min<uint64_t>(o.data_size, o.bytes.size());
    inline_objects.push_back(InlineObject{o.id, o.bytes.first(data_size), o.bytes.subspan(data_size), o.checksum});
  }
  absl::StatusOr<std::vector<absl::Status>> put =
      detached ? client_->PutInlineManyDetached(inline_objects) : client_->PutInlineMany(inline_objects);
  if (!put.ok()) return AllFailed<absl::Status>(objects.size(), put.status());
  return *std::move(put);
}

absl::StatusOr<std::unique_ptr<peer::PinnedObject>> ClientLocalStore::Pin(const ObjectID& id) {
  ASSIGN_OR_RETURN(ObjectBuffer buffer, client_->GetOne(id, absl::ZeroDuration()));
  const uint8_t* base = client_->arena_base() + buffer.info().offset;
  return std::unique_ptr<peer::PinnedObject>(new BufferPin(std::move(buffer), base));
}

absl::StatusOr<CreatedObject> ClientLocalStore::Create(const ObjectID& id, uint64_t data_size, uint64_t metadata_size) {
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
