// BatchLanding: the store side of one TransferBatch (batch_transfer.h) — where the objects of a
// FetchBatch reply land in the local store, and what becomes of each. TransferBatch drives it:
//
//   StartEarlyCreates(expected)    before the Call: the objects of expected sizes, one store request
//   TakeEarlyCreates()             after the Call: their answers
//   Sort(reply) | FailAll(status)  each entry failed, or verified (inline: its checksum in the reply
//                                  buffer) and headed for one of: an early object of its shape, a
//                                  put (small inline ones), or a create
//   PutSmall()                     the small ones stored sealed with one request
//   CreateRest()                   the rest created with one request, inline bytes copied in
//   ReadPinned(channel, ...)       the pinned ones read into place, reads_in_flight at a time
//   SealPlaced()                   the verified ones sealed with one request, the others aborted
//   TakeLeases()                   every lease of the reply, for one Unpin
//
// Invariant: an object created here is sealed by SealPlaced or aborted by the step that gives up
// on it (a failed Call, an owner's error, another shape, a failed read or checksum): nothing
// partial is ever visible. Every position gets its own outcome in `out`.
// Not thread-safe: one batch, one thread (ReadPinned spreads its reads over options.pool).
#ifndef RPLASMA_MANAGER_PEER_BATCH_LANDING_H_
#define RPLASMA_MANAGER_PEER_BATCH_LANDING_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "absl/types/span.h"

#include "manager/peer/batch_transfer.h"
#include "manager/peer/local_store.h"
#include "manager/peer/peer_messages.h"
#include "manager/transport/transport.h"
#include "protocol/base/clock.h"
#include "protocol/base/object_id.h"

namespace rplasma::peer {

// The results of a batch under way: every id starts unanswered (kInternal) and ends with its own
// status.
class Outcomes {
 public:
  explicit Outcomes(absl::Span<const ObjectID> ids);
  const ObjectID& id(size_t i) const { return ids_[i]; }
  absl::Span<const ObjectID> ids() const { return ids_; }
  size_t size() const { return ids_.size(); }
  void Set(size_t i, absl::Status status) { result_.statuses[i] = std::move(status); }
  void FailAll(const absl::Status& status);
  BatchTransferResult& result() { return result_; }

 private:
  absl::Span<const ObjectID> ids_;
  BatchTransferResult result_;
};

class BatchLanding {
 public:
  // All borrowed; they outlive the landing. `inline_max`: the batch's Get threshold (see
  // TransferBatch), which decides which expected objects come inline.
  BatchLanding(LocalStore& store, Outcomes& out, uint64_t inline_max, const BatchTransferOptions& options,
               const Clock& clock)
      : store_(store), out_(out), inline_max_(inline_max), options_(options), clock_(clock), early_(out.size()) {}

  // `expected`: one description per id, or none (see TransferBatch).
  void StartEarlyCreates(absl::Span<const ObjectDescription> expected);
  void TakeEarlyCreates();
  // The Call failed, or its reply is not one entry per id: every id fails with `status`.
  void FailAll(const absl::Status& status);
  // REQUIRES: reply.objects has one entry per id. The reply (and the bytes it views) must outlive
  // the landing's remaining steps.
  void Sort(const FetchBatchReplyView& reply);
  void PutSmall();
  void CreateRest();
  // Reads each pinned object within its lease (which began after `sent`, when the request went
  // out) and by `deadline`; `received`: when the reply came.
  void ReadPinned(transport::Channel& channel, absl::Time sent, absl::Time received, absl::Time deadline);
  void SealPlaced();
  std::vector<uint64_t> TakeLeases() { return std::move(leases_); }

  // When the last pinned object's last byte landed (the reply's arrival if none was pinned).
  absl::Time reads_done() const { return reads_done_; }
  // The checksumming not overlapped with the reads (the longest tail of one pinned object).
  absl::Duration hash_tail() const { return hash_tail_; }

 private:
  // One entry on its way into the store: its object created here and its bytes copied (inline) or
  // read (pinned) into it, then checked against `checksum`.
  struct Placed {
    size_t i = 0;  // position in the batch
    CreatedObject created;
    const PinReply* pin = nullptr;  // pinned: read from here; else the bytes were inline (copied in)
    uint64_t checksum = 0;          // inline: verified already; pinned: of the bytes read
    absl::Status status;
    absl::Time reads_done;
    absl::Duration hash_tail;
  };

  // Gives up the early object at `i`, if any (aborted by the step that called this).
  void DropEarly(size_t i);
  void AbortDropped();
  // Places entry `i` into `created` (its bytes copied now if inline; read later if pinned).
  void Place(size_t i, const CreatedObject& created, const PinReply* pin, absl::string_view bytes, uint64_t checksum);

  LocalStore& store_;
  Outcomes& out_;
  const uint64_t inline_max_;
  const BatchTransferOptions& options_;
  const Clock& clock_;

  std::vector<size_t> early_at_;  // positions created early, in request order
  std::vector<ObjectID> early_ids_;
  std::unique_ptr<PendingCreates> creating_;
  std::vector<std::optional<CreatedObject>> early_;  // per position
  std::vector<size_t> dropped_;                      // early objects to abort

  const FetchBatchReplyView* reply_ = nullptr;
  std::vector<SealedBytes> small_;
  std::vector<size_t> small_at_;
  std::vector<size_t> create_at_;
  std::vector<uint64_t> checksum_of_;  // per position: the verified checksum of an inline entry
  std::vector<uint64_t> leases_;
  std::vector<Placed> placed_;
  std::vector<size_t> reading_;  // positions in placed_ of the pinned ones
  absl::Time reads_done_;
  absl::Duration hash_tail_;
};

}  // namespace rplasma::peer

#endif  // RPLASMA_MANAGER_PEER_BATCH_LANDING_H_
