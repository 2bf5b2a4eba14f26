// ObjectBuffer: a reference on a sealed object, given back to the store when the buffer goes.
#include <utility>

#include "client/client.h"

namespace rplasma {

ObjectBuffer::ObjectBuffer(ObjectBuffer&& other) noexcept
    : client_(std::exchange(other.client_, nullptr)),
      base_(std::exchange(other.base_, nullptr)),
      info_(other.info_),
      status_(std::move(other.status_)),
      index_entry_(other.index_entry_),
      slot_(std::exchange(other.slot_, kNoSlot)) {}

ObjectBuffer& ObjectBuffer::operator=(ObjectBuffer&& other) noexcept {
  if (this != &other) {
    (void)Release();
    client_ = std::exchange(other.client_, nullptr);
    base_ = std::exchange(other.base_, nullptr);
    info_ = other.info_;
    status_ = std::move(other.status_);
    index_entry_ = other.index_entry_;
    slot_ = std::exchange(other.slot_, kNoSlot);
  }
  return *this;
}

ObjectBuffer::~ObjectBuffer() { (void)Release(); }

absl::Status ObjectBuffer::Release() {
  if (client_ == nullptr) return absl::OkStatus();
  Client* client = std::exchange(client_, nullptr);
  base_ = nullptr;
  if (slot_ != kNoSlot) {  // held through a slot: given back with no message
    client->ReleaseSlot(index_entry_, std::exchange(slot_, kNoSlot), info_.generation);
    return absl::OkStatus();
  }
  // Detached: the store answers in order, so any later request on this Client already sees the
  // reference gone, and the caller does not pay a round trip.
  return client->ReleaseDetached(info_.id);
}

}  // namespace rplasma
