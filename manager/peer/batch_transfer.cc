#include "manager/peer/batch_transfer.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <variant>

#include "absl/strings/str_cat.h"

#include "client/checksum.h"
#include "manager/peer/peer_call.h"
#include "manager/peer/peer_messages.h"
#include "manager/peer/read_and_hash.h"
#include "protocol/base/logging.h"
#include "protocol/base/status.h"
#include "protocol/store_messages.h"

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
// request (`detached`: not waited for); aborts those the store refused.
void SealCreated(LocalStore& store, Outcomes& out, const std::vector<size_t>& which,
                 const std::vector<uint64_t>& checksums, bool detached) {
  if (which.empty()) return;
  std::vector<ObjectID> ids;
  ids.reserve(which.size());
  for (size_t i : which) ids.push_back(out.id(i));
  const std::vector<absl::Status> sealed =
      detached ? store.SealAndReleaseManyDetached(ids, checksums) : store.SealAndReleaseMany(ids, checksums);
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

// The positions worth creating while the request is on its way (none in a batch of more than
// early_create_max_bytes expected): those whose size the caller expects (a zero size is unknown),
// unless the reply would have them stored by a put (ByFetchBatch's rule, applied to the expected
// sizes: inline, and the batch's inline bytes within inline_store_total_bytes or the object within
// inline_store_bytes).
std::vector<size_t> EarlyCreates(absl::Span<const ObjectDescription> expected, uint64_t inline_max,
                                 const BatchTransferOptions& options) {
  uint64_t inline_total = 0;
  uint64_t total = 0;
  for (const ObjectDescription& object : expected) {
    if (object.total_size() <= inline_max) inline_total += object.total_size();
    total += object.total_size();
  }
  if (total > options.early_create_max_bytes) return {};
  const uint64_t put_up_to = std::min<uint64_t>(
      inline_total <= options.inline_store_total_bytes ? inline_total : options.inline_store_bytes, kMaxInlinePutBytes);
  std::vector<size_t> early;
  for (size_t i = 0; i < expected.size(); ++i) {
    const uint64_t size = expected[i].total_size();
    if (size != 0 && (size > inline_max || size > put_up_to)) early.push_back(i);
  }
  return early;
}

// Whether `created` has the shape the owner described (else it was created for an old guess).
bool SameShape(const CreatedObject& created, const ObjectDescription& object) {
  return created.data.size() == object.data_size && created.metadata.size() == object.metadata_size;
}

// What one FetchBatch reply entry needs here, after the Call: its object created locally and the
// entry's bytes copied (inline) or read (pinned) into it, then checked against `checksum`.
struct Placed {
  size_t i = 0;  // position in the batch
  CreatedObject created;
  const PinReply* pin = nullptr;  // pinned: read from here; else the bytes were inline (copied in)
  uint64_t checksum = 0;          // inline: verified already; pinned: of the bytes read
  absl::Status status;
  absl::Time reads_done;
  absl::Duration hash_tail;
};

// One Call for the whole batch; every object then lands by the way the owner chose for it: the
// inline ones verified in the reply buffer (the smallest stored sealed with one request), the rest
// created with one request, the inline ones copied and the pinned ones read into place
// `reads_in_flight` at a time, all sealed with one request, and every lease ended with one Unpin.
void ByFetchBatch(transport::Channel& channel, LocalStore& store, Outcomes& out, uint64_t inline_max,
                  absl::Span<const ObjectDescription> expected, absl::Time deadline,
                  const BatchTransferOptions& options, const Clock& clock) {
  BatchTransferResult& result = out.result();
  const absl::Time t0 = clock.Now();
  std::string wire;
  FetchBatchRequest request{std::vector<ObjectID>(out.ids().begin(), out.ids().end()), inline_max,
                            options.inline_budget_bytes};
  // The objects of expected sizes are created here while the request is on its way: their store
  // request is sent first and its answer read after the Call (on this thread; no helper thread to
  // wake), so the reply lands in place.
  const std::vector<size_t> early_at = EarlyCreates(expected, inline_max, options);
  std::vector<std::optional<CreatedObject>> early(out.size());
  std::unique_ptr<PendingCreates> creating;
  std::vector<ObjectID> early_ids;
  if (!early_at.empty()) {
    std::vector<ObjectDescription> objects;
    early_ids.reserve(early_at.size());
    objects.reserve(early_at.size());
    for (size_t i : early_at) {
      early_ids.push_back(out.id(i));
      objects.push_back(expected[i]);
    }
    creating = store.StartCreateMany(early_ids, objects);
  }
  absl::StatusOr<PeerReplyView> reply = CallPeer(channel, request, deadline, wire);
  if (creating != nullptr) {
    std::vector<absl::StatusOr<CreatedObject>> made = creating->Finish();
    // (One that could not be created, or an answer of the wrong length, goes the usual way after
    // the reply, which meets the same refusal.)
    for (size_t k = 0; k < made.size(); ++k) {
      if (!made[k].ok()) continue;
      if (k < early_at.size() && made[k]->id == early_ids[k]) {
        early[early_at[k]] = *made[k];
      } else {
        (void)store.Abort(made[k]->id);
      }
    }
  }
  // An early object that the reply does not fill as it is (the owner's error, another size) is
  // aborted before anything else is created.
  std::vector<size_t> early_abort;
  auto abort_early = [&](size_t i) {
    if (early[i].has_value()) early_abort.push_back(i);
    early[i].reset();
  };
  if (!reply.ok()) {
    for (size_t i : early_at) abort_early(i);
    AbortAll(store, out, early_abort);
    out.FailAll(reply.status());
    return;
  }
  const auto* batch = std::get_if<FetchBatchReplyView>(&*reply);
  if (batch == nullptr || batch->objects.size() != out.size()) {
    for (size_t i : early_at) abort_early(i);
    AbortAll(store, out, early_abort);
    out.FailAll(ProtocolError("peer answered fetch-batch with another reply kind or count"));
    return;
  }
  const absl::Time t1 = clock.Now();

  // Inline bytes are verified against the owner's checksum before anything is stored.
  uint64_t inline_total = 0;
  for (const absl::StatusOr<FetchedEntryView>& entry : batch->objects) {
    if (entry.ok() && std::holds_alternative<GetReplyView>(*entry)) {
      inline_total += std::get<GetReplyView>(*entry).payload.size();
    }
  }
  // Never above the store's one-request put limit: a single object may come inline far larger.
  const uint64_t put_up_to = std::min<uint64_t>(
      inline_total <= options.inline_store_total_bytes ? inline_total : options.inline_store_bytes, kMaxInlinePutBytes);
  std::vector<SealedBytes> small;
  std::vector<size_t> small_at;
  std::vector<size_t> create_at;
  std::vector<uint64_t> leases;
  std::vector<uint64_t> checksum_of(out.size());
  std::vector<Placed> placed;
  std::vector<size_t> reading;  // positions in `placed` of the pinned ones
  // An object created early and described alike by the owner is placed at once.
  auto place_early = [&](size_t i, const PinReply* pin, absl::string_view bytes, uint64_t checksum) {
    Placed p;
    p.i = i;
    p.created = *early[i];
    p.pin = pin;
    p.checksum = checksum;
    if (pin != nullptr) {
      reading.push_back(placed.size());
    } else if (!bytes.empty()) {
      std::memcpy(p.created.base(), bytes.data(), bytes.size());
    }
    placed.push_back(p);
  };
  for (size_t i = 0; i < out.size(); ++i) {
    const absl::StatusOr<FetchedEntryView>& entry = batch->objects[i];
    if (!entry.ok()) {
      out.Set(i, entry.status());
      abort_early(i);
      continue;
    }
    if (const auto* pin = std::get_if<PinReply>(&*entry)) {
      result.objects[i] = pin->object;
      leases.push_back(pin->lease_id);
      if (early[i].has_value() && SameShape(*early[i], pin->object)) {
        place_early(i, pin, {}, 0);
      } else {
        abort_early(i);
        create_at.push_back(i);
      }
      continue;
    }
    const GetReplyView& got = std::get<GetReplyView>(*entry);
    result.objects[i] = got.object;
    const absl::Span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(got.payload.data()), got.payload.size());
    const uint64_t checksum = ObjectChecksum(bytes.first(got.object.data_size), bytes.subspan(got.object.data_size));
    absl::Status verified = VerifyChecksum(out.id(i), checksum, got.object);
    if (!verified.ok()) {
      out.Set(i, std::move(verified));
      abort_early(i);
    } else if (early[i].has_value() && SameShape(*early[i], got.object)) {
      place_early(i, nullptr, got.payload, checksum);
    } else {
      abort_early(i);
      if (bytes.size() <= put_up_to) {
        small.push_back(SealedBytes{out.id(i), bytes, got.object.data_size, checksum});
        small_at.push_back(i);
      } else {
        create_at.push_back(i);
        checksum_of[i] = checksum;
      }
    }
  }
  AbortAll(store, out, early_abort);
  const absl::Time t2 = clock.Now();
  result.verify = t2 - t1;

  if (!small.empty()) {
    const std::vector<absl::Status> put =
        options.seal_detached ? store.PutSealedManyDetached(small) : store.PutSealedMany(small);
    if (Answered(put, small.size(), out, small_at)) {
      for (size_t k = 0; k < small.size(); ++k) {
        out.Set(small_at[k], put[k]);
        if (put[k].ok()) result.bytes += small[k].bytes.size();
      }
    }
  }
  for (const auto& [i, created] : CreateAll(store, out, create_at)) {
    Placed p;
    p.i = i;
    p.created = created;
    const FetchedEntryView& entry = *batch->objects[i];
    if (const auto* pin = std::get_if<PinReply>(&entry)) {
      p.pin = pin;
      reading.push_back(placed.size());
    } else {
      const absl::string_view bytes = std::get<GetReplyView>(entry).payload;
      p.checksum = checksum_of[i];
      if (!bytes.empty()) std::memcpy(created.base(), bytes.data(), bytes.size());
    }
    placed.push_back(p);
  }
  const absl::Time t3 = clock.Now();

  // Each pinned object is read chunk by chunk, checksummed behind its reads. The owner's lease on
  // it started when it received the request, after t0: a read completed before t0 + TTL was done
  // while it held the object.
  RunSharedOn(options.pool, reading.size(), static_cast<size_t>(std::max(options.reads_in_flight, 1)), [&](size_t k) {
    Placed& p = placed[reading[k]];
    const PinReply& pin = *p.pin;
    const absl::Time lease_end = t0 + absl::Milliseconds(pin.lease_ttl_ms);
    auto lapsed = [&] { return LeaseLapseError(out.id(p.i), pin.lease_id, pin.lease_ttl_ms); };
    auto lease_live = [&] { return clock.Now() >= lease_end ? lapsed() : absl::OkStatus(); };
    absl::StatusOr<ReadAndHashResult> read =
        ReadAndHash(channel, pin.region, p.created.base(), options.read_chunk_bytes, deadline, lease_live, clock);
    if (read.ok() && read->reads_done >= lease_end) read = lapsed();
    if (!read.ok()) {
      p.status = read.status();
      return;
    }
    p.checksum = read->checksum;
    p.reads_done = read->reads_done;
    p.hash_tail = read->hash_tail;
    p.status = VerifyChecksum(out.id(p.i), read->checksum, pin.object);
  });

  std::vector<size_t> sealing;
  std::vector<uint64_t> checksums;
  std::vector<size_t> abort;
  absl::Time reads_done = t1;
  absl::Duration hash_tail;
  for (const Placed& p : placed) {
    if (!p.status.ok()) {
      out.Set(p.i, p.status);
      abort.push_back(p.i);
      continue;
    }
    sealing.push_back(p.i);
    checksums.push_back(p.checksum);
    if (p.pin != nullptr) {
      reads_done = std::max(reads_done, p.reads_done);
      hash_tail = std::max(hash_tail, p.hash_tail);
    }
  }
  AbortAll(store, out, abort);
  result.transfer = reads_done - t0;
  result.verify += hash_tail;
  const absl::Time t4 = clock.Now();
  SealCreated(store, out, sealing, checksums, options.seal_detached);
  result.seal = (t3 - t2) + (clock.Now() - t4);
  for (const Placed& p : placed) {
    if (p.pin == nullptr || !result.statuses[p.i].ok()) continue;
    ++result.pinned_objects;
    result.pinned_bytes += p.pin->object.total_size();
  }

  // Every lease ends now, sealed or not; the seal did not wait for this. Within the fetch's
  // deadline: one lost or too late only costs the owner leases until
  // their TTL.
  if (!leases.empty()) {
    const size_t count = leases.size();
    std::string unpin_wire;
    absl::StatusOr<PeerReplyView> unpinned =
        CallPeer(channel, UnpinBatchRequest{std::move(leases)}, deadline, unpin_wire);
    if (!unpinned.ok()) LOG(INFO) << "unpin of " << count << " leases: " << unpinned.status();
  }
  result.total = clock.Now() - t0;
}

}  // namespace

BatchTransferResult TransferBatch(transport::Channel& channel, LocalStore& store, absl::Span<const ObjectID> ids,
                                  uint64_t inline_max, absl::Time deadline, const BatchTransferOptions& options,
                                  const Clock& clock, absl::Span<const ObjectDescription> expected) {
  Outcomes out(ids);
  if (ids.empty() || ids.size() > kMaxBatchIds) {
    out.FailAll(MakeError(ErrorCode::kInvalidArgument, absl::StrCat("batch transfer: need 1..", kMaxBatchIds, " ids")));
    return std::move(out.result());
  }
  if (!expected.empty() && expected.size() != ids.size()) {
    out.FailAll(MakeError(ErrorCode::kInvalidArgument, "batch transfer: one expected description per id, or none"));
    return std::move(out.result());
  }
  BatchTransferOptions adjusted = options;
  if (adjusted.read_chunk_bytes == 0) adjusted.read_chunk_bytes = ~uint64_t{0};
  ByFetchBatch(channel, store, out, inline_max, expected, deadline, adjusted, clock);
  return std::move(out.result());
}

}  // namespace rplasma::peer
