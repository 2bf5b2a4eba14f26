#include "manager/peer/batch_transfer.h"

#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"

#include "manager/peer/batch_landing.h"
#include "manager/peer/peer_call.h"
#include "manager/peer/peer_messages.h"
#include "protocol/base/logging.h"
#include "protocol/base/status.h"

namespace rplasma::peer {
namespace {

// One Call for the whole batch, and the landing of its objects around it (batch_landing.h has
// the steps), then one Unpin for every lease (or the leases left to the caller).
void ByFetchBatch(transport::Channel& channel, LocalStore& store, Outcomes& out, uint64_t inline_max,
                  absl::Span<const ObjectDescription> expected, absl::Time deadline,
                  const BatchTransferOptions& options, const Clock& clock) {
  BatchTransferResult& result = out.result();
  const absl::Time t0 = clock.Now();
  BatchLanding landing(store, out, inline_max, options, clock);
  // The objects of expected sizes are created while the request is on its way: their store request
  // is sent first and its answer read after the Call (on this thread; no helper thread to wake),
  // so the reply lands in place.
  landing.StartEarlyCreates(expected);
  std::string wire;
  const FetchBatchRequest request{std::vector<ObjectID>(out.ids().begin(), out.ids().end()), inline_max,
                                  options.inline_budget_bytes};
  absl::StatusOr<PeerReplyView> reply = CallPeer(channel, request, deadline, wire);
  landing.TakeEarlyCreates();
  if (!reply.ok()) {
    landing.FailAll(reply.status());
    return;
  }
  const auto* batch = std::get_if<FetchBatchReplyView>(&*reply);
  if (batch == nullptr || batch->objects.size() != out.size()) {
    landing.FailAll(ProtocolError("peer answered fetch-batch with another reply kind or count"));
    return;
  }
  const absl::Time t1 = clock.Now();
  landing.Sort(*batch);
  const absl::Time t2 = clock.Now();
  result.verify = t2 - t1;
  landing.PutSmall();
  landing.CreateRest();
  const absl::Time t3 = clock.Now();
  landing.ReadPinned(channel, t0, t1, deadline);
  result.transfer = landing.reads_done() - t0;
  result.verify += landing.hash_tail();
  const absl::Time t4 = clock.Now();
  landing.SealPlaced();
  result.seal = (t3 - t2) + (clock.Now() - t4);

  // Every lease ends now, sealed or not; the seal did not wait for this. Within the fetch's
  // deadline: one lost or too late only costs the owner leases until their TTL.
  std::vector<uint64_t> leases = landing.TakeLeases();
  if (options.leave_leases) {
    result.total = clock.Now() - t0;
    result.leases = std::move(leases);
    return;
  }
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
