#include "manager/peer/batch_transfer.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <variant>

#include "absl/strings/str_cat.h"

#include "client/checksum.h"
#include "manager/peer/object_transfer.h"
#include "manager/peer/peer_messages.h"
#include "manager/peer/read_and_hash.h"
#include "protocol/base/logging.h"
#include "protocol/base/status.h"

namespace rplasma::peer {
namespace {

// The results of a batch under way: every id starts unanswered (kInternal) and ends with its own
// status.
class Outcomes {
 public:
  explicit Outcomes(absl::Span<const ObjectID> ids) : ids_(ids) {
    result_.statuses.assign(ids.size(), MakeError(ErrorCode::kInternal, "batch transfer: not attempted"));
    result_.objects.resize(ids.size());
  }
  const ObjectID& id(size_t i) const { return ids_[i]; }
  absl::Span<const ObjectID> ids() const { return ids_; }
  size_t size() const { return ids_.size(); }
  void Set(size_t i, absl::Status status) { result_.statuses[i] = std::move(status); }
  void FailAll(const absl::Status& status) {
    for (absl::Status& s : result_.statuses) s = status;
  }
  BatchTransferResult& result() { return result_; }

 private:
  absl::Span<const ObjectID> ids_;
  BatchTransferResult result_;
};

// A store answer of the wrong length is a bug of the store access, never a crash here.
template <typename T>
bool Answered(const std::vector<T>& answers, size_t asked, Outcomes& out, absl::Span<const size_t> which) {
  if (answers.size() == asked) return true;
  for (size_t i : which) out.Set(i, MakeError(ErrorCode::kInternal, "local store: wrong number of answers"));
  return false;
}

// Aborts objects created here and not sealed: nothing partial stays in the store.
void AbortAll(LocalStore& store, Outcomes& out, absl::Span<const size_t> which) {
  for (size_t i : which) {
    absl::Status s = store.Abort(out.id(i));
    if (!s.ok()) LOG(WARNING) << "abort of partial fetch " << out.id(i).Hex() << ": " << s;
  }
}

// Seals the objects at `which` (created here, their bytes in place and verified) in one store
// request; aborts those the store refused.
void SealCreated(LocalStore& store, Outcomes& out, const std::vector<size_t>& which,
                 const std::vector<uint64_t>& checksums) {
  if (which.empty()) return;
  std::vector<ObjectID> ids;
  ids.reserve(which.size());
  for (size_t i : which) ids.push_back(out.id(i));
  const std::vector<absl::Status> sealed = store.SealAndReleaseMany(ids, checksums);
  std::vector<size_t> abort;
  if (!Answered(sealed, which.size(), out, which)) {
    AbortAll(store, out, which);
    return;
  }
  for (size_t k = 0; k < which.size(); ++k) {
    out.Set(which[k], sealed[k]);
    if (sealed[k].ok()) {
      out.result().bytes += out.result().objects[which[k]].total_size();
    } else {
      abort.push_back(which[k]);
    }
  }
  AbortAll(store, out, abort);
}

// Creates the objects at `which`, sized as the owner described them, in one store request.
// Returns the created ones' positions (in `which` order) and their objects.
std::vector<std::pair<size_t, CreatedObject>> CreateAll(LocalStore& store, Outcomes& out,
                                                        const std::vector<size_t>& which) {
  std::vector<std::pair<size_t, CreatedObject>> created;
  if (which.empty()) return created;
  std::vector<ObjectID> ids;
  std::vector<ObjectDescription> objects;
  for (size_t i : which) {
    ids.push_back(out.id(i));
    objects.push_back(out.result().objects[i]);
  }
  std::vector<absl::StatusOr<CreatedObject>> made = store.CreateMany(ids, objects);
  if (!Answered(made, which.size(), out, which)) {
    for (size_t k = 0; k < made.size(); ++k) {
      if (made[k].ok()) (void)store.Abort(ids[k]);
    }
    return created;
  }
  for (size_t k = 0; k < which.size(); ++k) {
    if (made[k].ok()) {
      created.emplace_back(which[k], *made[k]);
    } else {
      out.Set(which[k], made[k].status());
    }
  }
  return created;
}

// One batch Call of `out`'s ids as a Request. The reply, of kind Reply with one entry per id, lives
// in `reply` (its bytes in `wire`); null after failing every id (the Call failed, or the peer
// answered another kind or count).
template <typename Request, typename Reply>
Reply* CallBatch(transport::Channel& channel, Outcomes& out, absl::Time deadline, std::string& wire,
                 absl::StatusOr<PeerReplyView>& reply) {
  Request request;
  request.ids.assign(out.ids().begin(), out.ids().end());
  reply = CallPeer(channel, request, deadline, wire);
  if (!reply.ok()) {
    out.FailAll(reply.status());
    return nullptr;
  }
  Reply* batch = std::get_if<Reply>(&*reply);
  if (batch == nullptr || batch->objects.size() != out.size()) {
    out.FailAll(ProtocolError(absl::StrCat("peer answered ", RequestName(PeerRequest(std::move(request))),
                                           " with another reply kind or count")));
    return nullptr;
  }
  return batch;
}

void ByGetBatch(transport::Channel& channel, LocalStore& store, Outcomes& out, absl::Time deadline,
                const BatchTransferOptions& options, const Clock& clock) {
  BatchTransferResult& result = out.result();
  const absl::Time t0 = clock.Now();
  std::string wire;
  absl::StatusOr<PeerReplyView> reply;
  const auto* batch = CallBatch<GetBatchRequest, GetBatchReplyView>(channel, out, deadline, wire, reply);
  if (batch == nullptr) return;
  const absl::Time t1 = clock.Now();
  result.transfer = t1 - t0;

  // Verify every object's bytes against the owner's checksum before any is stored.
  std::vector<SealedBytes> small;
  std::vector<size_t> small_at;
  std::vector<size_t> large_at;
  std::vector<uint64_t> checksum_of(out.size());
  for (size_t i = 0; i < out.size(); ++i) {
    const absl::StatusOr<GetReplyView>& entry = batch->objects[i];
    if (!entry.ok()) {
      out.Set(i, entry.status());
      continue;
    }
    result.objects[i] = entry->object;
    const absl::Span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(entry->payload.data()),
                                          entry->payload.size());
    const uint64_t data_size = entry->object.data_size;
    const uint64_t checksum = ObjectChecksum(bytes.first(data_size), bytes.subspan(data_size));
    absl::Status verified = VerifyChecksum(out.id(i), checksum, entry->object);
    if (!verified.ok()) {
      out.Set(i, std::move(verified));
    } else if (bytes.size() <= options.inline_store_bytes) {
      small.push_back(SealedBytes{out.id(i), bytes, data_size, checksum});
      small_at.push_back(i);
    } else {
      large_at.push_back(i);
      checksum_of[i] = checksum;
    }
  }
  const absl::Time t2 = clock.Now();
  result.verify = t2 - t1;

  if (!small.empty()) {
    const std::vector<absl::Status> put = store.PutSealedMany(small);
    if (Answered(put, small.size(), out, small_at)) {
      for (size_t k = 0; k < small.size(); ++k) {
        out.Set(small_at[k], put[k]);
        if (put[k].ok()) result.bytes += small[k].bytes.size();
      }
    }
  }
  // Larger objects: created in place with one request, one copy each, sealed with one request.
  std::vector<size_t> sealing;
  std::vector<uint64_t> checksums;
  for (const auto& [i, created] : CreateAll(store, out, large_at)) {
    const absl::string_view bytes = batch->objects[i]->payload;
    if (!bytes.empty()) std::memcpy(created.base(), bytes.data(), bytes.size());
    sealing.push_back(i);
    checksums.push_back(checksum_of[i]);
  }
  SealCreated(store, out, sealing, checksums);
  result.seal = clock.Now() - t2;
}

void ByPinBatch(transport::Channel& channel, LocalStore& store, Outcomes& out, absl::Time deadline,
                const BatchTransferOptions& options, const Clock& clock) {
  BatchTransferResult& result = out.result();
  const absl::Time t0 = clock.Now();
  std::string wire;
  absl::StatusOr<PeerReplyView> reply;
  const auto* batch = CallBatch<PinBatchRequest, PinBatchReply>(channel, out, deadline, wire, reply);
  if (batch == nullptr) return;
  std::vector<uint64_t> leases;
  std::vector<size_t> pinned_at;
  for (size_t i = 0; i < out.size(); ++i) {
    if (!batch->objects[i].ok()) {
      out.Set(i, batch->objects[i].status());
      continue;
    }
    result.objects[i] = batch->objects[i]->object;
    leases.push_back(batch->objects[i]->lease_id);
    pinned_at.push_back(i);
  }
  const std::vector<std::pair<size_t, CreatedObject>> created = CreateAll(store, out, pinned_at);

  // Read `reads_in_flight` objects at a time: each worker takes the next object and reads it chunk
  // by chunk, checksumming behind its reads. The owner's lease on each started when it received
  // the PinBatch, after t0: a read completed before t0 + TTL was done while it held the object.
  struct Landed {
    absl::Status status;
    uint64_t checksum = 0;
    absl::Time reads_done;
    absl::Duration hash_tail;
  };
  std::vector<Landed> landed(created.size());
  RunSharedOn(options.pool, created.size(), static_cast<size_t>(std::max(options.reads_in_flight, 1)), [&](size_t k) {
    const size_t i = created[k].first;
    const PinReply& pin = *batch->objects[i];
    const absl::Time lease_end = t0 + absl::Milliseconds(pin.lease_ttl_ms);
    auto lapsed = [&] { return LeaseLapseError(out.id(i), pin.lease_id, pin.lease_ttl_ms); };
    auto lease_live = [&] { return clock.Now() >= lease_end ? lapsed() : absl::OkStatus(); };
    absl::StatusOr<ReadAndHashResult> read = ReadAndHash(channel, pin.region, created[k].second.base(),
                                                         options.read_chunk_bytes, deadline, lease_live, clock);
    if (read.ok() && read->reads_done >= lease_end) read = lapsed();
    Landed& l = landed[k];
    if (!read.ok()) {
      l.status = read.status();
      return;
    }
    l.checksum = read->checksum;
    l.reads_done = read->reads_done;
    l.hash_tail = read->hash_tail;
    l.status = VerifyChecksum(out.id(i), read->checksum, pin.object);
  });

  std::vector<size_t> sealing;
  std::vector<uint64_t> checksums;
  std::vector<size_t> abort;
  absl::Time reads_done = t0;
  for (size_t k = 0; k < created.size(); ++k) {
    const size_t i = created[k].first;
    if (!landed[k].status.ok()) {
      out.Set(i, landed[k].status);
      abort.push_back(i);
      continue;
    }
    sealing.push_back(i);
    checksums.push_back(landed[k].checksum);
    reads_done = std::max(reads_done, landed[k].reads_done);
    result.verify = std::max(result.verify, landed[k].hash_tail);
  }
  AbortAll(store, out, abort);
  result.transfer = reads_done - t0;
  const absl::Time t1 = clock.Now();
  SealCreated(store, out, sealing, checksums);
  result.seal = clock.Now() - t1;

  // Every lease ends now, sealed or not; the seal did not wait for this. Within the fetch's
  // deadline, like ByPin's Unpin: one lost or too late only costs the owner leases until their TTL.
  if (!leases.empty()) {
    std::string unpin_wire;
    absl::StatusOr<PeerReplyView> unpinned =
        CallPeer(channel, UnpinBatchRequest{std::move(leases)}, deadline, unpin_wire);
    if (!unpinned.ok()) LOG(INFO) << "unpin of " << pinned_at.size() << " leases: " << unpinned.status();
  }
}

}  // namespace

BatchTransferResult TransferBatch(transport::Channel& channel, LocalStore& store, absl::Span<const ObjectID> ids,
                                  PeerProtocol protocol, absl::Time deadline, const BatchTransferOptions& options,
                                  const Clock& clock) {
  Outcomes out(ids);
  if (ids.empty() || ids.size() > kMaxBatchIds) {
    out.FailAll(MakeError(ErrorCode::kInvalidArgument, absl::StrCat("batch transfer: need 1..", kMaxBatchIds, " ids")));
  } else if (protocol == PeerProtocol::kGet) {
    ByGetBatch(channel, store, out, deadline, options, clock);
  } else {
    BatchTransferOptions pin_options = options;
    if (pin_options.read_chunk_bytes == 0) pin_options.read_chunk_bytes = ~uint64_t{0};
    ByPinBatch(channel, store, out, deadline, pin_options, clock);
  }
  return std::move(out.result());
}

}  // namespace rplasma::peer
