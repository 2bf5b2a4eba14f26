#include "manager/peer/batch_landing.h"

#include <algorithm>
#include <cstring>
#include <variant>

#include "client/checksum.h"
#include "manager/peer/peer_call.h"
#include "manager/peer/read_and_hash.h"
#include "protocol/base/logging.h"
#include "protocol/base/status.h"
#include "protocol/base/worker_pool.h"
#include "protocol/store_messages.h"

namespace rplasma::peer {
namespace {

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

// The largest inline object stored by a put (its bytes in the store request) in a batch whose
// inline objects total `inline_total` bytes: all of them while the total is small, else only the
// smallest; never above the store's one-request put limit (a single object may come inline far
// larger).
uint64_t PutUpTo(uint64_t inline_total, const BatchTransferOptions& options) {
  return std::min<uint64_t>(
      inline_total <= options.inline_store_total_bytes ? inline_total : options.inline_store_bytes, kMaxInlinePutBytes);
}

// The positions worth creating while the request is on its way (none in a batch of more than
// early_create_max_bytes expected): those whose size the caller expects (a zero size is unknown),
// unless the reply would have them stored by a put (Sort's rule, applied to the expected sizes:
// inline, and the batch's inline bytes within inline_store_total_bytes or the object within
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
  const uint64_t put_up_to = PutUpTo(inline_total, options);
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

}  // namespace

Outcomes::Outcomes(absl::Span<const ObjectID> ids) : ids_(ids) {
  result_.statuses.assign(ids.size(), MakeError(ErrorCode::kInternal, "batch transfer: not attempted"));
  result_.objects.resize(ids.size());
}

void Outcomes::FailAll(const absl::Status& status) {
  for (absl::Status& s : result_.statuses) s = status;
}

void BatchLanding::StartEarlyCreates(absl::Span<const ObjectDescription> expected) {
  early_at_ = EarlyCreates(expected, inline_max_, options_);
  if (early_at_.empty()) return;
  std::vector<ObjectDescription> objects;
  early_ids_.reserve(early_at_.size());
  objects.reserve(early_at_.size());
  for (size_t i : early_at_) {
    early_ids_.push_back(out_.id(i));
    objects.push_back(expected[i]);
  }
  creating_ = store_.StartCreateMany(early_ids_, objects);
}

void BatchLanding::TakeEarlyCreates() {
  if (creating_ == nullptr) return;
  std::vector<absl::StatusOr<CreatedObject>> made = creating_->Finish();
  creating_.reset();
  // (One that could not be created, or an answer of the wrong length, goes the usual way after the
  // reply, which meets the same refusal.)
  for (size_t k = 0; k < made.size(); ++k) {
    if (!made[k].ok()) continue;
    if (k < early_at_.size() && made[k]->id == early_ids_[k]) {
      early_[early_at_[k]] = *made[k];
    } else {
      (void)store_.Abort(made[k]->id);
    }
  }
}

void BatchLanding::DropEarly(size_t i) {
  if (early_[i].has_value()) dropped_.push_back(i);
  early_[i].reset();
}

void BatchLanding::AbortDropped() {
  AbortAll(store_, out_, dropped_);
  dropped_.clear();
}

void BatchLanding::FailAll(const absl::Status& status) {
  for (size_t i : early_at_) DropEarly(i);
  AbortDropped();
  out_.FailAll(status);
}

void BatchLanding::Place(size_t i, const CreatedObject& created, const PinReply* pin, absl::string_view bytes,
                         uint64_t checksum) {
  Placed p;
  p.i = i;
  p.created = created;
  p.pin = pin;
  p.checksum = checksum;
  if (pin != nullptr) {
    reading_.push_back(placed_.size());
  } else if (!bytes.empty()) {
    std::memcpy(created.base(), bytes.data(), bytes.size());
  }
  placed_.push_back(p);
}

void BatchLanding::Sort(const FetchBatchReplyView& reply) {
  reply_ = &reply;
  checksum_of_.assign(out_.size(), 0);
  BatchTransferResult& result = out_.result();
  uint64_t inline_total = 0;
  for (const absl::StatusOr<FetchedEntryView>& entry : reply.objects) {
    if (entry.ok() && std::holds_alternative<GetReplyView>(*entry)) {
      inline_total += std::get<GetReplyView>(*entry).payload.size();
    }
  }
  const uint64_t put_up_to = PutUpTo(inline_total, options_);
  for (size_t i = 0; i < out_.size(); ++i) {
    const absl::StatusOr<FetchedEntryView>& entry = reply.objects[i];
    if (!entry.ok()) {
      out_.Set(i, entry.status());
      DropEarly(i);
      continue;
    }
    if (const auto* pin = std::get_if<PinReply>(&*entry)) {
      result.objects[i] = pin->object;
      leases_.push_back(pin->lease_id);
      if (early_[i].has_value() && SameShape(*early_[i], pin->object)) {
        Place(i, *early_[i], pin, {}, 0);
      } else {
        DropEarly(i);
        create_at_.push_back(i);
      }
      continue;
    }
    // Inline bytes are verified against the owner's checksum before anything is stored.
    const GetReplyView& got = std::get<GetReplyView>(*entry);
    result.objects[i] = got.object;
    const absl::Span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(got.payload.data()), got.payload.size());
    const uint64_t checksum = ObjectChecksum(bytes.first(got.object.data_size), bytes.subspan(got.object.data_size));
    absl::Status verified = VerifyChecksum(out_.id(i), checksum, got.object);
    if (!verified.ok()) {
      out_.Set(i, std::move(verified));
      DropEarly(i);
    } else if (early_[i].has_value() && SameShape(*early_[i], got.object)) {
      Place(i, *early_[i], nullptr, got.payload, checksum);
    } else {
      DropEarly(i);
      if (bytes.size() <= put_up_to) {
        small_.push_back(SealedBytes{out_.id(i), bytes, got.object.data_size, checksum});
        small_at_.push_back(i);
      } else {
        create_at_.push_back(i);
        checksum_of_[i] = checksum;
      }
    }
  }
  // An early object that the reply does not fill as it is (the owner's error, another size) goes
  // before anything else is created.
  AbortDropped();
}

void BatchLanding::PutSmall() {
  if (small_.empty()) return;
  const std::vector<absl::Status> put =
      options_.seal_detached ? store_.PutSealedManyDetached(small_) : store_.PutSealedMany(small_);
  if (!Answered(put, small_.size(), out_, small_at_)) return;
  for (size_t k = 0; k < small_.size(); ++k) {
    out_.Set(small_at_[k], put[k]);
    if (put[k].ok()) out_.result().bytes += small_[k].bytes.size();
  }
}

void BatchLanding::CreateRest() {
  if (create_at_.empty()) return;
  std::vector<ObjectID> ids;
  std::vector<ObjectDescription> objects;
  for (size_t i : create_at_) {
    ids.push_back(out_.id(i));
    objects.push_back(out_.result().objects[i]);
  }
  std::vector<absl::StatusOr<CreatedObject>> made = store_.CreateMany(ids, objects);
  if (!Answered(made, create_at_.size(), out_, create_at_)) {
    for (size_t k = 0; k < made.size(); ++k) {
      if (made[k].ok()) (void)store_.Abort(made[k]->id);
    }
    return;
  }
  for (size_t k = 0; k < create_at_.size(); ++k) {
    const size_t i = create_at_[k];
    if (!made[k].ok()) {
      out_.Set(i, made[k].status());
      continue;
    }
    const FetchedEntryView& entry = *reply_->objects[i];
    if (const auto* pin = std::get_if<PinReply>(&entry)) {
      Place(i, *made[k], pin, {}, 0);
    } else {
      Place(i, *made[k], nullptr, std::get<GetReplyView>(entry).payload, checksum_of_[i]);
    }
  }
}

void BatchLanding::ReadPinned(transport::Channel& channel, absl::Time sent, absl::Time received, absl::Time deadline) {
  reads_done_ = received;
  // Each pinned object is read chunk by chunk, checksummed behind its reads. The owner's lease on
  // it started when it received the request, after `sent`: a read completed before sent + TTL was
  // done while it held the object.
  RunSharedOn(
      options_.pool, reading_.size(), static_cast<size_t>(std::max(options_.reads_in_flight, 1)), [&](size_t k) {
        Placed& p = placed_[reading_[k]];
        const PinReply& pin = *p.pin;
        const absl::Time lease_end = sent + absl::Milliseconds(pin.lease_ttl_ms);
        auto lapsed = [&] { return LeaseLapseError(out_.id(p.i), pin.lease_id, pin.lease_ttl_ms); };
        auto lease_live = [&] { return clock_.Now() >= lease_end ? lapsed() : absl::OkStatus(); };
        absl::StatusOr<ReadAndHashResult> read =
            ReadAndHash(channel, pin.region, p.created.base(), options_.read_chunk_bytes, deadline, lease_live, clock_);
        if (read.ok() && read->reads_done >= lease_end) read = lapsed();
        if (!read.ok()) {
          p.status = read.status();
          return;
        }
        p.checksum = read->checksum;
        p.reads_done = read->reads_done;
        p.hash_tail = read->hash_tail;
        p.status = VerifyChecksum(out_.id(p.i), read->checksum, pin.object);
      });
  // A failed read or checksum gives its object up here; the others wait for SealPlaced.
  std::vector<size_t> failed;
  for (const Placed& p : placed_) {
    if (!p.status.ok()) {
      out_.Set(p.i, p.status);
      failed.push_back(p.i);
    } else if (p.pin != nullptr) {
      reads_done_ = std::max(reads_done_, p.reads_done);
      hash_tail_ = std::max(hash_tail_, p.hash_tail);
    }
  }
  AbortAll(store_, out_, failed);
}

void BatchLanding::SealPlaced() {
  BatchTransferResult& result = out_.result();
  std::vector<size_t> sealing;
  std::vector<ObjectID> ids;
  std::vector<uint64_t> checksums;
  for (const Placed& p : placed_) {
    if (!p.status.ok()) continue;  // given up by ReadPinned
    sealing.push_back(p.i);
    ids.push_back(out_.id(p.i));
    checksums.push_back(p.checksum);
  }
  if (!sealing.empty()) {
    const std::vector<absl::Status> sealed = options_.seal_detached ? store_.SealAndReleaseManyDetached(ids, checksums)
                                                                    : store_.SealAndReleaseMany(ids, checksums);
    std::vector<size_t> abort;
    if (!Answered(sealed, sealing.size(), out_, sealing)) {
      abort = sealing;
    } else {
      for (size_t k = 0; k < sealing.size(); ++k) {
        out_.Set(sealing[k], sealed[k]);
        if (sealed[k].ok()) {
          result.bytes += result.objects[sealing[k]].total_size();
        } else {
          abort.push_back(sealing[k]);
        }
      }
    }
    AbortAll(store_, out_, abort);
  }
  for (const Placed& p : placed_) {
    if (p.pin == nullptr || !result.statuses[p.i].ok()) continue;
    ++result.pinned_objects;
    result.pinned_bytes += p.pin->object.total_size();
  }
}

}  // namespace rplasma::peer
