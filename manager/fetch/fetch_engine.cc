#include "protocol/base/mutex_lock.h"
#include "manager/fetch/fetch_engine.h"

#include <algorithm>
#include <optional>

#include "absl/strings/str_cat.h"
#include "manager/peer/object_transfer.h"
#include "manager/transport/transport.h"
#include "protocol/base/logging.h"
#include "protocol/base/status.h"

namespace rplasma::fetch {
namespace {

// The object may still appear (or re-appear) somewhere: look it up again rather than report.
bool WorthWaiting(const absl::Status& status) {
  const ErrorCode code = ErrorCodeOf(status);
  return code == ErrorCode::kObjectNotFound || code == ErrorCode::kObjectNotSealed || code == ErrorCode::kStaleObject;
}

// The channel itself failed: reconnect next time.
bool TransportFailure(const absl::Status& status) {
  const ErrorCode code = ErrorCodeOf(status);
  return code == ErrorCode::kUnavailable || code == ErrorCode::kProtocolError || code == ErrorCode::kDeadlineExceeded;
}

absl::Status DeadlineError(const ObjectID& id, const absl::Status& last) {
  return MakeError(ErrorCode::kDeadlineExceeded,
                   last.ok() ? absl::StrCat("fetch ", id.Hex(), ": not sealed on any live node before the deadline")
                             : absl::StrCat("fetch ", id.Hex(), ": deadline passed; last error: ", last.message()));
}

}  // namespace

absl::Status FetchEngineOptions::Validate() const {
  if (self_node_id.empty()) return MakeError(ErrorCode::kInvalidArgument, "fetch engine: no node id");
  if (poll_initial <= absl::ZeroDuration() || poll_max < poll_initial) {
    return MakeError(ErrorCode::kInvalidArgument, "fetch engine: need 0 < poll_initial <= poll_max");
  }
  return absl::OkStatus();
}

FetchEngine::FetchEngine(FetchEngineOptions options, Directory* directory, peer::LocalStore* store,
                         PeerConnector* connector, ThresholdPolicy* policy, manager::ManagerStats* stats,
                         Clock* clock)
    : options_(std::move(options)),
      directory_(directory),
      store_(store),
      connector_(connector),
      policy_(policy),
      stats_(stats),
      clock_(clock) {}

std::vector<absl::Status> FetchEngine::Fetch(absl::Span<const ObjectID> ids, absl::Duration timeout) {
  const absl::Time deadline = clock_->Now() + std::max(timeout, absl::ZeroDuration());
  stats_->fetch_requests.fetch_add(ids.size(), std::memory_order_relaxed);
  absl::flat_hash_map<ObjectID, absl::Status> outcome;
  std::vector<ObjectID> led;
  std::vector<std::pair<ObjectID, std::shared_ptr<InFlight>>> joined;
  absl::flat_hash_map<ObjectID, std::shared_ptr<InFlight>> led_flights;
  // No store round trip here: whether an id is already local is asked only where the directory's
  // answer makes it possible (FetchLed), so the common case — the id lives on other nodes only —
  // goes straight from the lookup to the transfer.
  for (const ObjectID& id : ids) {
    if (outcome.contains(id)) continue;  // a duplicate shares the outcome
    outcome[id] = absl::OkStatus();      // placeholder, filled below
    MutexLock lock(&mu_);
    auto [it, inserted] = in_flight_.try_emplace(id);
    if (inserted) {
      it->second = std::make_shared<InFlight>();
      led.push_back(id);
      led_flights[id] = it->second;
    } else {
      stats_->fetch_merged.fetch_add(1, std::memory_order_relaxed);
      joined.emplace_back(id, it->second);
    }
  }

  if (!led.empty()) {
    std::vector<absl::Status> statuses = FetchLed(led, deadline);
    for (size_t i = 0; i < led.size(); ++i) {
      Finish(led[i], led_flights[led[i]], statuses[i]);
      outcome[led[i]] = statuses[i];
    }
  }

  std::vector<ObjectID> retry;  // the leader gave up earlier than we would have
  for (auto& [id, flight] : joined) {
    MutexLock lock(&flight->mu);
    if (!lock.AwaitWithTimeout(absl::Condition(&flight->done), deadline - clock_->Now())) {
      outcome[id] = DeadlineError(id, absl::OkStatus());
    } else {
      outcome[id] = flight->status;
      if (ErrorCodeOf(flight->status) == ErrorCode::kDeadlineExceeded && clock_->Now() < deadline) retry.push_back(id);
    }
  }
  if (!retry.empty()) {
    std::vector<absl::Status> again = Fetch(retry, deadline - clock_->Now());
    for (size_t i = 0; i < retry.size(); ++i) outcome[retry[i]] = again[i];
  }

  std::vector<absl::Status> result;
  result.reserve(ids.size());
  for (const ObjectID& id : ids) result.push_back(outcome[id]);
  for (const absl::Status& s : result) {
    if (!s.ok()) stats_->fetch_failures.fetch_add(1, std::memory_order_relaxed);
  }
  return result;
}

void FetchEngine::Finish(const ObjectID& id, const std::shared_ptr<InFlight>& flight, const absl::Status& status) {
  {
    MutexLock lock(&mu_);
    in_flight_.erase(id);
  }
  MutexLock lock(&flight->mu);
  flight->status = status;
  flight->done = true;
}

std::vector<absl::Status> FetchEngine::FetchLed(const std::vector<ObjectID>& ids, absl::Time deadline) {
  std::vector<absl::Status> result(ids.size(), absl::OkStatus());
  std::vector<absl::Status> last_error(ids.size(), absl::OkStatus());
  std::vector<size_t> pending(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) pending[i] = i;
  absl::Duration backoff = options_.poll_initial;
  while (true) {
    std::vector<ObjectID> batch;
    batch.reserve(pending.size());
    for (size_t i : pending) batch.push_back(ids[i]);
    const absl::Time t0 = clock_->Now();
    absl::StatusOr<std::vector<std::vector<ObjectLocation>>> locations = directory_->Lookup(batch);
    const absl::Duration lookup_time = clock_->Now() - t0;
    if (!locations.ok() || locations->size() != batch.size()) {
      stats_->directory_errors.fetch_add(1, std::memory_order_relaxed);
      const absl::Status error = locations.ok() ? MakeError(ErrorCode::kInternal, "directory lookup: wrong reply count")
                                                : locations.status();
      // Ids sealed here need no directory: this failure path is the only one that asks the store
      // about every pending id.
      const std::vector<absl::StatusOr<bool>> local = AskLocal(batch);
      for (size_t k = 0; k < pending.size(); ++k) {
        const size_t i = pending[k];
        if (local[k].ok() && *local[k]) {
          stats_->fetch_local.fetch_add(1, std::memory_order_relaxed);
          result[i] = absl::OkStatus();
          continue;
        }
        result[i] = MakeError(ErrorCodeOf(error) == ErrorCode::kOk ? ErrorCode::kUnavailable : ErrorCodeOf(error),
                              absl::StrCat("fetch ", ids[i].Hex(), ": directory lookup failed: ", error.message()));
      }
      return result;
    }
    // Sources are the other nodes. The store is asked (in one batch) only about ids that may be
    // here already: listed on this node, or listed nowhere (sealed here but not yet published).
    std::vector<std::vector<ObjectLocation>> sources(pending.size());
    std::vector<size_t> ask;  // positions in `pending`
    std::vector<ObjectID> ask_ids;
    for (size_t k = 0; k < pending.size(); ++k) {
      bool listed_here = false;
      for (const ObjectLocation& loc : (*locations)[k]) {
        if (loc.node_id == options_.self_node_id) {
          listed_here = true;
        } else {
          sources[k].push_back(loc);
        }
      }
      if (listed_here || (*locations)[k].empty()) {
        ask.push_back(k);
        ask_ids.push_back(batch[k]);
      }
    }
    std::vector<std::optional<absl::Status>> settled(pending.size());
    if (!ask.empty()) {
      const std::vector<absl::StatusOr<bool>> local = AskLocal(ask_ids);
      for (size_t j = 0; j < ask.size(); ++j) {
        if (!local[j].ok()) {
          settled[ask[j]] = local[j].status();
        } else if (*local[j]) {
          stats_->fetch_local.fetch_add(1, std::memory_order_relaxed);
          settled[ask[j]] = absl::OkStatus();
        }
      }
    }
    std::vector<size_t> still_pending;
    for (size_t k = 0; k < pending.size(); ++k) {
      const size_t i = pending[k];
      if (settled[k].has_value()) {
        result[i] = *settled[k];
        continue;
      }
      if (sources[k].empty()) {
        still_pending.push_back(i);
        continue;
      }
      absl::Status status = FetchFromAny(ids[i], sources[k], deadline, lookup_time);
      if (status.ok() || !WorthWaiting(status)) {
        result[i] = status;
      } else if (clock_->Now() >= deadline) {
        // Still worth waiting for, but out of time: the deadline is what failed, whatever the
        // last attempt said (it stays in the message).
        result[i] = DeadlineError(ids[i], status);
      } else {
        last_error[i] = status;
        still_pending.push_back(i);
      }
    }
    pending = std::move(still_pending);
    if (pending.empty()) return result;
    if (stopping_.load()) {
      for (size_t i : pending) result[i] = MakeError(ErrorCode::kUnavailable, "fetch: the manager is shutting down");
      return result;
    }
    if (clock_->Now() + backoff >= deadline) {
      for (size_t i : pending) result[i] = DeadlineError(ids[i], last_error[i]);
      return result;
    }
    stats_->directory_polls.fetch_add(pending.size(), std::memory_order_relaxed);
    clock_->SleepFor(backoff);
    backoff = std::min(backoff * 2, options_.poll_max);
  }
}

std::vector<absl::StatusOr<bool>> FetchEngine::AskLocal(absl::Span<const ObjectID> ids) {
  absl::StatusOr<std::vector<bool>> local = store_->ContainsAll(ids);
  if (local.ok() && local->size() != ids.size()) {
    local = MakeError(ErrorCode::kInternal, "local store: wrong number of Contains answers");
  }
  std::vector<absl::StatusOr<bool>> out;
  out.reserve(ids.size());
  for (size_t k = 0; k < ids.size(); ++k) {
    if (local.ok()) {
      out.emplace_back(static_cast<bool>((*local)[k]));
    } else {
      out.emplace_back(local.status());
    }
  }
  return out;
}

absl::Status FetchEngine::FetchFromAny(const ObjectID& id, const std::vector<ObjectLocation>& sources,
                                       absl::Time deadline, absl::Duration lookup_time) {
  absl::Status last;
  for (const ObjectLocation& source : sources) {
    if (clock_->Now() >= deadline) break;
    last = FetchFrom(id, source, deadline, lookup_time);
    if (last.ok()) return last;
    if (ErrorCodeOf(last) == ErrorCode::kObjectExists) {
      // Here already, though the directory did not say so (sealed here and not yet published, or
      // created meanwhile by an application): done if it is sealed. The only store round trip a
      // fetch of an id listed on other nodes only can cost, and only in this rare case.
      absl::StatusOr<bool> local = store_->Contains(id);
      if (local.ok() && *local) {
        stats_->fetch_local.fetch_add(1, std::memory_order_relaxed);
        return absl::OkStatus();
      }
      stats_->transfer_failures.fetch_add(1, std::memory_order_relaxed);
      return last;
    }
    stats_->transfer_failures.fetch_add(1, std::memory_order_relaxed);
    if (ErrorCodeOf(last) == ErrorCode::kOutOfMemory) return last;  // no other source helps
    LOG(INFO) << "fetch " << id.Hex() << " from " << source.node_id << " failed: " << last;
  }
  if (last.ok()) return DeadlineError(id, last);
  return last;
}

absl::Status FetchEngine::FetchFrom(const ObjectID& id, const ObjectLocation& source, absl::Time deadline,
                                    absl::Duration lookup_time) {
  manager::FetchRecord record;
  record.id = id;
  record.peer = source.node_id;
  record.phases.lookup = lookup_time;
  const absl::Time t0 = clock_->Now();
  absl::StatusOr<std::shared_ptr<transport::Channel>> channel = connector_->ChannelTo(source.node_id, deadline);
  record.phases.connect = clock_->Now() - t0;
  if (!channel.ok()) return channel.status();
  const uint64_t hinted = source.object.total_size();
  record.protocol = policy_->Choose(source.node_id, hinted);
  if (hinted > transport::kMaxCallBytes - 4096) record.protocol = PeerProtocol::kPin;
  absl::StatusOr<peer::TransferResult> transfer =
      peer::TransferObject(**channel, *store_, id, record.protocol, deadline, options_.read_chunk_bytes, *clock_);
  if (!transfer.ok()) {
    if (peer::IsLeaseLapse(transfer.status())) {
      stats_->lease_lapses.fetch_add(1, std::memory_order_relaxed);
    } else if (ErrorCodeOf(transfer.status()) == ErrorCode::kStaleObject) {
      stats_->checksum_mismatches.fetch_add(1, std::memory_order_relaxed);
    }
    if (TransportFailure(transfer.status()) && !(*channel)->healthy()) connector_->Forget(source.node_id);
    return transfer.status();
  }
  if (transfer->owner_generation != source.object.generation) {
    // The directory's generation is a hint; the owner's reply is what we copied and verified.
    stats_->generation_hint_mismatches.fetch_add(1, std::memory_order_relaxed);
  }
  record.bytes = transfer->bytes;
  record.phases.transfer = transfer->transfer;
  record.phases.verify = transfer->verify;
  record.phases.seal = transfer->seal;
  policy_->Observe(source.node_id, record.protocol, record.bytes, transfer->transfer);
  stats_->RecordFetch(record);
  return absl::OkStatus();
}

}  // namespace rplasma::fetch
