// LeaseTable: the pins a serving manager holds for its peers (peer protocol `Pin`).
//
// A lease keeps one store reference on an object (a PinnedObject) so that its bytes cannot be
// freed or reused while a peer reads them, and records the region disclosed to that peer. A lease
// belongs to one transport connection and ends on the first of: Unpin from that connection, the
// connection dropping (DropConnection), or its TTL passing (Expire). Ending a lease destroys the
// PinnedObject, which releases the store reference — always outside the table's lock.
//
// Invariants: lease ids are unique and never 0; AllowRead is true only for a region inside a live
// (unexpired) lease of the asking connection. Time is passed in, so tests need no clock.
//
// Thread-safety: thread-safe.
#ifndef RPLASMA_MANAGER_PEER_LEASE_TABLE_H_
#define RPLASMA_MANAGER_PEER_LEASE_TABLE_H_

#include <cstdint>
#include <memory>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

#include "manager/peer/local_store.h"
#include "manager/transport/transport.h"

namespace rplasma::peer {

struct LeaseTableOptions {
  absl::Duration ttl = absl::Seconds(30);     // how long a lease lives without Unpin
  uint64_t max_leases_per_connection = 4096;  // a peer cannot pin the whole store one id at a time

  absl::Status Validate() const;
};

class LeaseTable {
 public:
  explicit LeaseTable(LeaseTableOptions options) : options_(options) {}

  // Records a lease of `conn_id` on `region`, holding `pinned` (may be null for probe regions).
  // kOutOfMemory ("too many leases") past max_leases_per_connection.
  absl::StatusOr<uint64_t> Add(uint64_t conn_id, const transport::RemoteRegion& region,
                               std::unique_ptr<PinnedObject> pinned, absl::Time now);
  // Ends lease `lease_id` if it belongs to `conn_id`; false if there is no such lease.
  bool Remove(uint64_t conn_id, uint64_t lease_id);
  // Ends every lease of `conn_id`; returns how many.
  size_t DropConnection(uint64_t conn_id);
  // Ends every lease whose TTL passed by `now`; returns how many.
  size_t Expire(absl::Time now);
  // True if `region` lies inside one live lease of `conn_id` at `now`.
  bool AllowRead(uint64_t conn_id, const transport::RemoteRegion& region, absl::Time now) const;

  size_t size() const;
  absl::Duration ttl() const { return options_.ttl; }
  uint64_t expired_total() const;

 private:
  struct Lease {
    uint64_t conn_id;
    transport::RemoteRegion region;
    absl::Time expiry;
    std::unique_ptr<PinnedObject> pinned;
  };

  const LeaseTableOptions options_;
  mutable absl::Mutex mu_;
  uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
  uint64_t expired_total_ ABSL_GUARDED_BY(mu_) = 0;
  absl::flat_hash_map<uint64_t, Lease> leases_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<uint64_t, uint64_t> per_connection_ ABSL_GUARDED_BY(mu_);  // conn -> count
};

}  // namespace rplasma::peer

#endif  // RPLASMA_MANAGER_PEER_LEASE_TABLE_H_
