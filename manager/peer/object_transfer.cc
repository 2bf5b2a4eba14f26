#include "manager/peer/object_transfer.h"

#include <algorithm>
#include <cstring>
#include <variant>

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

#include "client/checksum.h"
#include "manager/peer/peer_messages.h"
#include "manager/peer/read_and_hash.h"
#include "protocol/base/logging.h"
#include "protocol/base/status.h"

namespace rplasma::peer {
namespace {

constexpr char kLeaseLapsePayload[] = "rplasma/lease-lapsed";

// A created local object that is aborted unless Commit() sealed it.
class LocalObject {
 public:
  LocalObject(peer::LocalStore& store, const ObjectID& id, CreatedObject created)
      : store_(store), id_(id), created_(created) {}
  LocalObject(LocalObject&& other) noexcept
      : store_(other.store_), id_(other.id_), created_(other.created_), committed_(other.committed_) {
    other.committed_ = true;  // the moved-from handle no longer owns the object
  }
  LocalObject& operator=(LocalObject&&) = delete;
  ~LocalObject() {
    if (!committed_) {
      absl::Status s = store_.Abort(id_);
      if (!s.ok()) LOG(WARNING) << "abort of partial fetch " << id_.Hex() << ": " << s;
    }
  }
  const CreatedObject& created() const { return created_; }

  // `checksum` is ObjectChecksum of the local bytes, computed by the caller.
  absl::Status SealIfMatches(const ObjectDescription& owner, uint64_t checksum, const Clock& clock,
                             TransferResult& result) {
    const absl::Time t1 = clock.Now();
    RETURN_IF_ERROR(VerifyChecksum(id_, checksum, owner));
    RETURN_IF_ERROR(store_.SealAndRelease(id_, checksum));
    committed_ = true;
    result.seal = clock.Now() - t1;
    return absl::OkStatus();
  }

 private:
  peer::LocalStore& store_;
  ObjectID id_;
  CreatedObject created_;
  bool committed_ = false;
};

absl::StatusOr<LocalObject> CreateLocal(peer::LocalStore& store, const ObjectID& id, const ObjectDescription& owner) {
  ASSIGN_OR_RETURN(CreatedObject created, store.Create(id, owner.data_size, owner.metadata_size));
  return LocalObject(store, id, created);
}

absl::StatusOr<TransferResult> ByGet(transport::Channel& channel, peer::LocalStore& store, const ObjectID& id,
                                     absl::Time deadline, const Clock& clock) {
  TransferResult result;
  const absl::Time t0 = clock.Now();
  std::string wire;
  ASSIGN_OR_RETURN(peer::PeerReplyView reply, CallPeer(channel, peer::GetRequest{id}, deadline, wire));
  const auto* get = std::get_if<peer::GetReplyView>(&reply);
  if (get == nullptr) return ProtocolError("peer answered Get with another reply kind");
  result.transfer = clock.Now() - t0;
  result.bytes = get->object.total_size();
  result.owner = get->object;
  // Verify the reply's bytes, then create the local object from them already sealed: for a small
  // object that is one store request (an inline Put), not Create + copy + Seal.
  const absl::Span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(get->payload.data()), get->payload.size());
  const uint64_t data_size = get->object.data_size;
  const absl::Time t1 = clock.Now();
  const uint64_t checksum = ObjectChecksum(bytes.first(data_size), bytes.subspan(data_size));
  const absl::Time t2 = clock.Now();
  result.verify = t2 - t1;
  RETURN_IF_ERROR(VerifyChecksum(id, checksum, get->object));
  RETURN_IF_ERROR(store.PutSealed(id, bytes, data_size, checksum));
  result.seal = clock.Now() - t2;
  return result;
}

absl::StatusOr<TransferResult> ByPin(transport::Channel& channel, peer::LocalStore& store, const ObjectID& id,
                                     absl::Time deadline, uint64_t chunk, const Clock& clock) {
  TransferResult result;
  const absl::Time t0 = clock.Now();
  std::string wire;
  ASSIGN_OR_RETURN(peer::PeerReplyView reply, CallPeer(channel, peer::PinRequest{id}, deadline, wire));
  const auto* pin = std::get_if<peer::PinReply>(&reply);
  if (pin == nullptr) return ProtocolError("peer answered Pin with another reply kind");
  const peer::PinReply lease = *pin;
  // The owner starts the lease's TTL when it receives the Pin, after t0: a read completed before
  // t0 + TTL was done while the owner still held the object for us. After that, the owner may
  // have released it and reused its bytes; one-sided READs cannot notice, so we check the clock.
  const absl::Time lease_end = t0 + absl::Milliseconds(lease.lease_ttl_ms);
  // Unpin whatever happens next, within the fetch's deadline (the fetch never ends past it): an
  // Unpin lost, or not sent because the deadline has passed, only costs the owner a lease until its TTL.
  auto unpin = [&] {
    std::string unpin_wire;
    absl::StatusOr<peer::PeerReplyView> r = CallPeer(channel, peer::UnpinRequest{lease.lease_id}, deadline, unpin_wire);
    if (!r.ok()) LOG(INFO) << "unpin of lease " << lease.lease_id << " for " << id.Hex() << ": " << r.status();
  };
  absl::StatusOr<LocalObject> local = CreateLocal(store, id, lease.object);
  if (!local.ok()) {
    unpin();
    return local.status();
  }
  const uint64_t total = lease.object.total_size();
  auto lapsed = [&] { return LeaseLapseError(id, lease.lease_id, lease.lease_ttl_ms); };
  // The owner would refuse a chunk read after the lease (TCP) or may have reused its bytes (READ).
  auto lease_live = [&] { return clock.Now() >= lease_end ? lapsed() : absl::OkStatus(); };
  absl::StatusOr<ReadAndHashResult> read =
      ReadAndHash(channel, transport::RemoteRegion{lease.region.addr, total, lease.region.rkey},
                  local->created().base(), chunk, deadline, lease_live, clock);
  if (read.ok() && read->reads_done >= lease_end) read = lapsed();
  unpin();
  RETURN_IF_ERROR(read.status());
  result.transfer = read->reads_done - t0;
  result.bytes = total;
  result.owner = lease.object;
  result.verify = read->hash_tail;  // the hashing not overlapped with the reads
  RETURN_IF_ERROR(local->SealIfMatches(lease.object, read->checksum, clock, result));
  return result;
}

}  // namespace

absl::Status VerifyChecksum(const ObjectID& id, uint64_t checksum, const ObjectDescription& owner) {
  if (checksum == owner.checksum) return absl::OkStatus();
  return MakeError(ErrorCode::kStaleObject,
                   absl::StrFormat("fetch %s: checksum %016x of the received bytes differs from the owner's %016x",
                                   id.Hex(), checksum, owner.checksum));
}

absl::Status LeaseLapseError(const ObjectID& id, uint64_t lease_id, uint64_t lease_ttl_ms) {
  absl::Status status =
      MakeError(ErrorCode::kStaleObject,
                absl::StrFormat("fetch %s: lease %d (TTL %d ms) expired before the reads completed; discarded",
                                id.Hex(), lease_id, lease_ttl_ms));
  status.SetPayload(kLeaseLapsePayload, absl::Cord("1"));
  return status;
}

absl::StatusOr<PeerReplyView> CallPeer(transport::Channel& channel, const PeerRequest& request, absl::Time deadline,
                                       std::string& wire) {
  ASSIGN_OR_RETURN(wire, channel.Call(EncodeRequest(request), deadline));
  return DecodeReply(wire);
}

bool IsLeaseLapse(const absl::Status& status) {
  return ErrorCodeOf(status) == ErrorCode::kStaleObject && status.GetPayload(kLeaseLapsePayload).has_value();
}

absl::StatusOr<TransferResult> TransferObject(transport::Channel& channel, peer::LocalStore& store, const ObjectID& id,
                                              PeerProtocol protocol, absl::Time deadline, uint64_t read_chunk_bytes,
                                              Clock& clock) {
  if (read_chunk_bytes == 0) read_chunk_bytes = ~uint64_t{0};
  return protocol == PeerProtocol::kGet ? ByGet(channel, store, id, deadline, clock)
                                        : ByPin(channel, store, id, deadline, read_chunk_bytes, clock);
}

}  // namespace rplasma::peer
