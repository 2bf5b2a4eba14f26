// The transfer half of FetchEngine (fetch_engine.h, step 3): every id with a source is moved here
// from its sources, grouped by source, one round trip per batch, the outcomes kept in the location
// cache and taught to the threshold policy.
#include <algorithm>

#include "absl/strings/str_cat.h"

#include "manager/fetch/fetch_engine.h"
#include "manager/peer/peer_call.h"
#include "manager/peer/peer_messages.h"
#include "manager/transport/transport.h"
#include "protocol/base/byte_size.h"
#include "protocol/base/logging.h"
#include "protocol/base/status.h"

namespace rplasma::fetch {
namespace {

// The channel itself failed: reconnect next time.
bool TransportFailure(const absl::Status& status) {
  const ErrorCode code = ErrorCodeOf(status);
  return code == ErrorCode::kUnavailable || code == ErrorCode::kProtocolError || code == ErrorCode::kDeadlineExceeded;
}

// The inline limit that sends every object of a transfer by `protocol` (Get: all that fit the
// reply's budget; the owner pins the rest).
uint64_t InlineLimitFor(PeerProtocol protocol) { return protocol == PeerProtocol::kGet ? ~uint64_t{0} : 0; }

}  // namespace

void FetchEngine::TransferAll(std::vector<Transfer>& transfers, absl::Time deadline, absl::Duration lookup_time) {
  std::vector<size_t> todo(transfers.size());
  for (size_t i = 0; i < transfers.size(); ++i) todo[i] = i;
  while (!todo.empty()) {
    // Each id goes to its current source; the ids of one source travel together, and sources
    // are served side by side.
    std::vector<std::pair<std::string, std::vector<size_t>>> groups;
    absl::flat_hash_map<std::string, size_t> group_of;
    for (size_t i : todo) {
      const std::string& node = transfers[i].current().node_id;
      auto [it, inserted] = group_of.try_emplace(node, groups.size());
      if (inserted) groups.emplace_back(node, std::vector<size_t>{});
      groups[it->second].second.push_back(i);
    }
    pool_.RunShared(groups.size(), static_cast<size_t>(std::max(options_.sources_in_flight, 1)), [&](size_t g) {
      TransferFrom(groups[g].first, transfers, groups[g].second, deadline, lookup_time);
    });

    // Ids that failed move on to their next source, except where no other source can help.
    std::vector<size_t> again;
    std::vector<size_t> exists;
    for (size_t i : todo) {
      Transfer& t = transfers[i];
      if (t.status.ok()) continue;
      const ErrorCode code = ErrorCodeOf(t.status);
      if (code == ErrorCode::kObjectExists) {
        exists.push_back(i);
        continue;
      }
      stats_->transfer_failures.fetch_add(1, std::memory_order_relaxed);
      if (code == ErrorCode::kOutOfMemory) continue;  // no other source helps
      LOG(INFO) << "fetch " << t.id.Hex() << " from " << t.current().node_id << " failed: " << t.status;
      if (t.source + 1 < t.sources.size() && clock_->Now() < deadline) {
        ++t.source;
        again.push_back(i);
      }
    }
    if (!exists.empty()) {
      // Here already, though the directory did not say so (sealed here and not yet published, or
      // created meanwhile by an application): done if it is sealed. The only store round trip a
      // fetch of ids listed on other nodes only can cost, and only in this rare case.
      std::vector<ObjectID> exists_ids;
      for (size_t i : exists) exists_ids.push_back(transfers[i].id);
      const std::vector<absl::StatusOr<bool>> local = AskLocal(exists_ids);
      for (size_t k = 0; k < exists.size(); ++k) {
        if (local[k].ok() && *local[k]) {
          stats_->fetch_local.fetch_add(1, std::memory_order_relaxed);
          transfers[exists[k]].status = absl::OkStatus();
        } else {
          stats_->transfer_failures.fetch_add(1, std::memory_order_relaxed);
        }
      }
    }
    todo = std::move(again);
  }
}

void FetchEngine::TransferFrom(const std::string& node, std::vector<Transfer>& transfers,
                               const std::vector<size_t>& which, absl::Time deadline, absl::Duration lookup_time) {
  if (options_.expected_copies != nullptr) {
    std::vector<ObjectID> incoming;
    incoming.reserve(which.size());
    for (size_t i : which) incoming.push_back(transfers[i].id);
    options_.expected_copies->Add(incoming);
  }
  if (which.size() == 1) {
    // One object: by the protocol the policy chooses for its size (which may explore the other
    // one near the threshold); an unknown size (a hinted source) is left to the owner with the
    // peer's threshold.
    Transfer& t = transfers[which[0]];
    if (clock_->Now() >= deadline) {
      t.status = DeadlineError(t.id, absl::OkStatus());
      return;
    }
    if (t.forced.has_value()) {  // the caller's choice: nothing decided, nothing learnt
      TransferBatchFrom(node, transfers, InlineLimitFor(*t.forced), which, deadline, lookup_time,
                        absl::StrCat("the caller asked for ", PeerProtocolName(*t.forced)));
      return;
    }
    const uint64_t hinted = t.current().object.total_size();
    if (hinted == 0) {
      const uint64_t threshold = policy_->BatchThreshold(node, 1);
      const peer::BatchTransferResult result = TransferBatchFrom(
          node, transfers, threshold, which, deadline, lookup_time,
          absl::StrCat("size unknown here: the owner applied the threshold ", FormatByteSize(threshold)));
      LearnFrom(node, transfers, which, result.pinned_objects, result.total);
      return;
    }
    const ThresholdPolicy::Choice choice = policy_->Decide(node, hinted);
    std::string why = absl::StrCat(FormatByteSize(hinted), hinted <= choice.threshold ? " <= " : " > ",
                                   "the threshold ", FormatByteSize(choice.threshold));
    if (choice.explored) {
      absl::StrAppend(&why, ", but exploring the other protocol near the threshold");
      stats_->explored_transfers.fetch_add(1, std::memory_order_relaxed);
    }
    const peer::BatchTransferResult result = TransferBatchFrom(node, transfers, InlineLimitFor(choice.protocol), which,
                                                               deadline, lookup_time, std::move(why));
    LearnFrom(node, transfers, which, result.pinned_objects, result.total);
    return;
  }
  // Several: one decision for all of them, by their concurrency class (ThresholdPolicy::
  // DecideBatch: the class's threshold, or, exploring, the limit that sends all of them the other
  // way), then one round trip per batch whatever the sizes (the owner inlines those up to that
  // limit and pins the rest), in batches no larger than the peer protocol's id limit, with at most
  // get_batch_bytes expected inline (the owner pins what would not fit its reply) and
  // pin_batch_bytes expected pinned (created here at once), by hinted sizes. An unknown size (a
  // hinted source) counts as 0. They teach the policy together: the choice was for all of them
  // (the objects of several Get replies against those of one Pin batch). A protocol the caller
  // forced is all of them's limit (Get: every object inline that fits the reply's budget), and
  // teaches nothing.
  const std::optional<PeerProtocol> forced = transfers[which[0]].forced;
  ThresholdPolicy::Choice choice;
  if (forced.has_value()) {
    choice.protocol = *forced;
    choice.threshold = InlineLimitFor(*forced);
  } else {
    uint64_t min_size = ~uint64_t{0};
    uint64_t max_size = 0;
    for (size_t i : which) {
      const uint64_t hinted = transfers[i].current().object.total_size();
      min_size = std::min(min_size, hinted);
      max_size = std::max(max_size, hinted);
    }
    choice = policy_->DecideBatch(node, which.size(), min_size, max_size);
  }
  const uint64_t inline_max = choice.threshold;
  if (choice.explored) stats_->explored_transfers.fetch_add(1, std::memory_order_relaxed);
  std::vector<std::vector<size_t>> batches(1);
  uint64_t inline_bytes = 0;
  uint64_t pinned_bytes = 0;
  for (size_t i : which) {
    const uint64_t hinted = transfers[i].current().object.total_size();
    const bool inline_expected = hinted <= inline_max && hinted <= options_.get_batch_bytes;
    uint64_t& bytes = inline_expected ? inline_bytes : pinned_bytes;
    const uint64_t limit = inline_expected ? options_.get_batch_bytes : options_.pin_batch_bytes;
    if (!batches.back().empty() && (batches.back().size() == peer::kMaxBatchIds || bytes + hinted > limit)) {
      batches.emplace_back();
      inline_bytes = 0;
      pinned_bytes = 0;
    }
    batches.back().push_back(i);
    bytes += hinted;
  }
  uint64_t pinned_objects = 0;
  absl::Duration transfer_time;
  for (const std::vector<size_t>& at : batches) {
    if (clock_->Now() >= deadline) {
      for (size_t i : at) transfers[i].status = DeadlineError(transfers[i].id, absl::OkStatus());
      continue;
    }
    std::string why =
        forced.has_value()
            ? absl::StrCat("batch of ", at.size(), ": by ", PeerProtocolName(*forced), ", as the caller asked",
                           *forced == PeerProtocol::kGet ? " (pinned where the reply's budget ends)" : "")
            : absl::StrCat("batch of ", at.size(), ": inline up to the threshold ", FormatByteSize(choice.threshold),
                           " and within the reply's budget, pinned above, by each object's true size");
    if (batches.size() > 1) {
      absl::StrAppend(&why, " (", which.size(), " objects from this peer, in ", batches.size(), " batches)");
    }
    if (choice.explored) {
      absl::StrAppend(&why, "; exploring: the whole batch by ", PeerProtocolName(choice.protocol),
                      " instead, next to its class's threshold");
    }
    const peer::BatchTransferResult result =
        TransferBatchFrom(node, transfers, choice.threshold, at, deadline, lookup_time, std::move(why));
    pinned_objects += result.pinned_objects;
    transfer_time += result.total;
  }
  if (!forced.has_value()) LearnFrom(node, transfers, which, pinned_objects, transfer_time);
}

void FetchEngine::NoteOutcome(const std::string& node, Transfer& transfer) {
  const absl::Status& s = transfer.status;
  if (s.ok()) {
    const uint64_t expected = transfer.current().object.generation;  // 0: a hinted source, unknown
    if (expected != 0 && transfer.owner.generation != expected) {
      // The directory's (or the cache's) generation is a hint; the owner's reply is what we
      // copied and verified.
      stats_->generation_hint_mismatches.fetch_add(1, std::memory_order_relaxed);
    }
    return;  // cached by the caller, with the rest of its batch
  }
  if (peer::IsLeaseLapse(s)) {
    stats_->lease_lapses.fetch_add(1, std::memory_order_relaxed);
  } else if (ErrorCodeOf(s) == ErrorCode::kStaleObject) {
    stats_->checksum_mismatches.fetch_add(1, std::memory_order_relaxed);
  }
  if (ErrorCodeOf(s) != ErrorCode::kObjectExists && ErrorCodeOf(s) != ErrorCode::kOutOfMemory) {
    locations_.Forget(transfer.id);  // the owner's answer, or the channel, failed it
  }
}

void FetchEngine::Unreachable(const std::string& node, transport::Channel* channel) {
  // With no channel (the node is unknown, expired or refused us) or a broken one, nothing cached
  // for the node is worth trying until it proves alive again.
  if (channel != nullptr) {
    if (channel->healthy()) return;  // one call failed, the channel stands
    connector_->Forget(node);
  }
  locations_.ForgetNode(node);
  guess_.Forget(node);
}

peer::BatchTransferResult FetchEngine::TransferBatchFrom(const std::string& node, std::vector<Transfer>& transfers,
                                                         uint64_t inline_max, const std::vector<size_t>& at,
                                                         absl::Time deadline, absl::Duration lookup_time,
                                                         std::string why) {
  manager::FetchRecord record;
  record.why = std::move(why);
  record.forced = transfers[at[0]].forced.has_value();
  record.id = transfers[at[0]].id;
  record.peer = node;
  record.phases.lookup = lookup_time;
  const absl::Time t0 = clock_->Now();
  absl::StatusOr<std::shared_ptr<transport::Channel>> channel = connector_->ChannelTo(node, deadline);
  record.phases.connect = clock_->Now() - t0;
  if (!channel.ok()) {
    for (size_t i : at) transfers[i].status = channel.status();
    Unreachable(node, nullptr);
    return {};
  }
  std::vector<ObjectID> batch_ids;
  std::vector<ObjectDescription> expected;
  batch_ids.reserve(at.size());
  expected.reserve(at.size());
  for (size_t i : at) {
    batch_ids.push_back(transfers[i].id);
    expected.push_back(transfers[i].current().object);
  }
  peer::BatchTransferOptions batch_options = options_.batch;
  batch_options.pool = &pool_;
  batch_options.seal_detached = transfers[at[0]].seal_detached;  // the same for every id of a round
  // A single object may come inline up to the largest Call.
  if (at.size() == 1) batch_options.inline_budget_bytes = peer::kMaxInlineObjectBytes;
  batch_options.leave_leases = options_.lease_ender != nullptr;
  peer::BatchTransferResult result =
      peer::TransferBatch(**channel, *store_, batch_ids, inline_max, deadline, batch_options, *clock_, expected);
  if (!result.leases.empty()) options_.lease_ender->End(*channel, std::move(result.leases));
  if (at.size() > 1) stats_->batch_transfers.fetch_add(1, std::memory_order_relaxed);
  bool transport_failed = false;
  std::vector<std::pair<ObjectID, ObjectDescription>> served;
  served.reserve(at.size());
  for (size_t k = 0; k < at.size(); ++k) {
    Transfer& t = transfers[at[k]];
    t.status = result.statuses[k];
    t.owner = result.objects[k];
    transport_failed = transport_failed || TransportFailure(t.status);
    NoteOutcome(node, t);
    if (t.status.ok()) served.emplace_back(t.id, t.owner);
  }
  locations_.PutMany(node, served);
  if (transport_failed) Unreachable(node, channel->get());
  record.phases.transfer = result.transfer;
  record.phases.verify = result.verify;
  record.phases.seal = result.seal;
  // A mixed batch counts once under each protocol that moved some of it.
  const uint64_t sealed = static_cast<uint64_t>(
      std::count_if(result.statuses.begin(), result.statuses.end(), [](const absl::Status& s) { return s.ok(); }));
  const struct {
    PeerProtocol protocol;
    uint64_t objects;
    uint64_t bytes;
  } parts[2] = {{PeerProtocol::kGet, sealed - result.pinned_objects, result.bytes - result.pinned_bytes},
                {PeerProtocol::kPin, result.pinned_objects, result.pinned_bytes}};
  for (const auto& part : parts) {
    if (part.objects == 0) continue;
    if (at.size() == 1 && inline_max != 0 && part.protocol == PeerProtocol::kPin) {
      absl::StrAppend(&record.why, "; the owner pinned it: too large to send inline");
    }
    record.protocol = part.protocol;
    record.objects = part.objects;
    record.bytes = part.bytes;
    stats_->RecordFetch(record);
  }
  return result;
}

void FetchEngine::LearnFrom(const std::string& node, const std::vector<Transfer>& transfers,
                            const std::vector<size_t>& at, uint64_t pinned_objects, absl::Duration transfer_time) {
  // Objects moved on one decision teach the policy the cost of one protocol at one size only when
  // all of them arrived, by that protocol, in one size bucket: their time per object is then that
  // cost at their concurrency (a mixed batch's objects overlap, and their times cannot be told
  // apart).
  const size_t n = at.size();
  if (pinned_objects != 0 && pinned_objects != n) return;
  uint64_t min_size = ~uint64_t{0};
  uint64_t max_size = 0;
  uint64_t total = 0;
  for (size_t i : at) {
    if (!transfers[i].status.ok()) return;
    const uint64_t size = transfers[i].owner.total_size();
    min_size = std::min(min_size, size);
    max_size = std::max(max_size, size);
    total += size;
  }
  if (ThresholdPolicy::BucketOf(min_size) != ThresholdPolicy::BucketOf(max_size)) return;
  const PeerProtocol protocol = pinned_objects == n ? PeerProtocol::kPin : PeerProtocol::kGet;
  policy_->Observe(node, protocol, total / n, transfer_time / static_cast<int64_t>(n), n);
}

}  // namespace rplasma::fetch
