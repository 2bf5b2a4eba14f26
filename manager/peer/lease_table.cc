#include "manager/peer/lease_table.h"

#include <vector>

#include "absl/strings/str_cat.h"

#include "protocol/base/mutex_lock.h"
#include "protocol/base/status.h"

namespace rplasma::peer {

absl::Status LeaseTableOptions::Validate() const {
  if (ttl <= absl::ZeroDuration()) return MakeError(ErrorCode::kInvalidArgument, "lease ttl must be positive");
  if (max_leases_per_connection == 0) {
    return MakeError(ErrorCode::kInvalidArgument, "max_leases_per_connection must be positive");
  }
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> LeaseTable::Add(uint64_t conn_id, const transport::RemoteRegion& region,
                                         std::unique_ptr<PinnedObject> pinned, absl::Time now) {
  MutexLock lock(&mu_);
  uint64_t& count = per_connection_[conn_id];
  if (count >= options_.max_leases_per_connection) {
    if (count == 0) per_connection_.erase(conn_id);
    // `pinned` is released by its destructor after the lock is dropped (declared outside it).
    return MakeError(ErrorCode::kOutOfMemory, absl::StrCat("too many leases for one peer connection (", count, ")"));
  }
  const uint64_t id = next_id_++;
  ++count;
  leases_.emplace(id, Lease{conn_id, region, now + options_.ttl, std::move(pinned)});
  return id;
}

bool LeaseTable::Remove(uint64_t conn_id, uint64_t lease_id) {
  std::unique_ptr<PinnedObject> released;  // destroyed after the lock: Release is store IPC
  {
    MutexLock lock(&mu_);
    auto it = leases_.find(lease_id);
    if (it == leases_.end() || it->second.conn_id != conn_id) return false;
    released = std::move(it->second.pinned);
    leases_.erase(it);
    if (--per_connection_[conn_id] == 0) per_connection_.erase(conn_id);
  }
  return true;
}

size_t LeaseTable::DropConnection(uint64_t conn_id) {
  std::vector<std::unique_ptr<PinnedObject>> released;
  {
    MutexLock lock(&mu_);
    for (auto it = leases_.begin(); it != leases_.end();) {
      if (it->second.conn_id == conn_id) {
        released.push_back(std::move(it->second.pinned));
        leases_.erase(it++);
      } else {
        ++it;
      }
    }
    per_connection_.erase(conn_id);
  }
  return released.size();
}

size_t LeaseTable::Expire(absl::Time now) {
  std::vector<std::unique_ptr<PinnedObject>> released;
  {
    MutexLock lock(&mu_);
    for (auto it = leases_.begin(); it != leases_.end();) {
      if (it->second.expiry <= now) {
        if (--per_connection_[it->second.conn_id] == 0) per_connection_.erase(it->second.conn_id);
        released.push_back(std::move(it->second.pinned));
        leases_.erase(it++);
      } else {
        ++it;
      }
    }
    expired_total_ += released.size();
  }
  return released.size();
}

bool LeaseTable::AllowRead(uint64_t conn_id, const transport::RemoteRegion& region, absl::Time now) const {
  MutexLock lock(&mu_);
  for (const auto& [id, lease] : leases_) {
    if (lease.conn_id != conn_id || lease.expiry <= now || lease.region.rkey != region.rkey) continue;
    const transport::RemoteRegion& l = lease.region;
    // Overflow-safe containment: region.addr >= l.addr and region end <= lease end.
    if (region.addr < l.addr) continue;
    const uint64_t skip = region.addr - l.addr;
    if (skip > l.length || region.length > l.length - skip) continue;
    return true;
  }
  return false;
}

size_t LeaseTable::size() const {
  MutexLock lock(&mu_);
  return leases_.size();
}

uint64_t LeaseTable::expired_total() const {
  MutexLock lock(&mu_);
  return expired_total_;
}

}  // namespace rplasma::peer
