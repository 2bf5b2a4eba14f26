#include "manager/fetch/fetch_engine.h"

#include <algorithm>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"

#include "manager/transport/transport.h"
#include "protocol/base/mutex_lock.h"
#include "protocol/base/status.h"

namespace rplasma::fetch {
namespace {

// The object may still appear (or re-appear) somewhere: look it up again rather than report.
bool WorthWaiting(const absl::Status& status) {
  const ErrorCode code = ErrorCodeOf(status);
  return code == ErrorCode::kObjectNotFound || code == ErrorCode::kObjectNotSealed || code == ErrorCode::kStaleObject;
}

FetchEngineOptions WithBatchLimits(FetchEngineOptions options) {
  options.batch.read_chunk_bytes = options.read_chunk_bytes;
  options.batch.inline_budget_bytes = options.get_batch_bytes;
  return options;
}

}  // namespace

absl::Status FetchEngine::DeadlineError(const ObjectID& id, const absl::Status& last) {
  return MakeError(ErrorCode::kDeadlineExceeded,
                   last.ok() ? absl::StrCat("fetch ", id.Hex(), ": not sealed on any live node before the deadline")
                             : absl::StrCat("fetch ", id.Hex(), ": deadline passed; last error: ", last.message()));
}

const absl::Status& FetchEngine::NotAttempted() {
  static const absl::Status* const kNotAttempted =
      new absl::Status(MakeError(ErrorCode::kInternal, "fetch: not attempted"));
  return *kNotAttempted;
}

absl::Status FetchEngineOptions::Validate() const {
  if (self_node_id.empty()) return MakeError(ErrorCode::kInvalidArgument, "fetch engine: no node id");
  if (get_batch_bytes == 0 || get_batch_bytes > transport::kMaxCallBytes / 2 || pin_batch_bytes == 0) {
    return MakeError(ErrorCode::kInvalidArgument, "fetch engine: batch byte limits out of range");
  }
  if (poll_initial <= absl::ZeroDuration() || poll_max < poll_initial) {
    return MakeError(ErrorCode::kInvalidArgument, "fetch engine: need 0 < poll_initial <= poll_max");
  }
  return absl::OkStatus();
}

FetchEngine::FetchEngine(FetchEngineOptions options, Directory* directory, peer::LocalStore* store,
                         PeerConnector* connector, ThresholdPolicy* policy, manager::ManagerStats* stats, Clock* clock)
    : options_(WithBatchLimits(std::move(options))),
      directory_(directory),
      store_(store),
      connector_(connector),
      policy_(policy),
      stats_(stats),
      clock_(clock),
      locations_(options_.location_cache, clock),
      guess_(options_.guess_owner, options_.location_cache.node_ttl, clock),
      pool_(options_.worker_threads) {}

std::vector<absl::Status> FetchEngine::Fetch(absl::Span<const ObjectID> ids, absl::Duration timeout,
                                             const FetchCall& call) {
  const absl::Time deadline = clock_->Now() + std::max(timeout, absl::ZeroDuration());
  stats_->fetch_requests.fetch_add(ids.size(), std::memory_order_relaxed);
  // Each distinct id has a slot in `distinct` and `statuses`; a duplicate shares its first
  // occurrence's slot (and outcome).
  absl::flat_hash_map<ObjectID, size_t> slot_of;
  slot_of.reserve(ids.size());
  std::vector<ObjectID> distinct;
  distinct.reserve(ids.size());
  for (const ObjectID& id : ids) {
    if (slot_of.try_emplace(id, distinct.size()).second) distinct.push_back(id);
  }
  std::vector<absl::Status> statuses(distinct.size());
  // No store round trip here: whether an id is already local is asked only where the directory's
  // answer makes it possible (FetchLed), so the common case — the id lives on other nodes only —
  // goes straight from the lookup to the transfer.
  const auto flight = std::make_shared<Flight>();
  std::vector<size_t> led;  // slots
  std::vector<std::pair<size_t, std::shared_ptr<Flight>>> joined;
  {
    MutexLock lock(&mu_);
    for (size_t slot = 0; slot < distinct.size(); ++slot) {
      auto [it, inserted] = in_flight_.try_emplace(distinct[slot], flight);
      if (inserted) {
        led.push_back(slot);
      } else {
        ++it->second->joiners;
        joined.emplace_back(slot, it->second);
      }
    }
  }
  stats_->fetch_merged.fetch_add(joined.size(), std::memory_order_relaxed);

  if (!led.empty()) {
    // A long list goes in chunks, several at once, so that the lookup of one chunk, the transfer
    // of another and the local store's work on a third overlap instead of following each other.
    const size_t chunk = std::max<size_t>(options_.pipeline_ids, 1);
    const size_t chunks = (led.size() + chunk - 1) / chunk;
    pool_.RunShared(chunks, static_cast<size_t>(std::max(options_.pipeline_depth, 1)), [&](size_t c) {
      const size_t begin = c * chunk;
      const size_t end = std::min(led.size(), begin + chunk);
      std::vector<ObjectID> part;
      part.reserve(end - begin);
      for (size_t k = begin; k < end; ++k) part.push_back(distinct[led[k]]);
      std::vector<absl::Status> done = FetchLed(part, deadline, call);
      Finish(*flight, part, done);
      for (size_t k = begin; k < end; ++k) statuses[led[k]] = std::move(done[k - begin]);
    });
  }

  std::vector<ObjectID> retry;  // the leader gave up earlier than we would have
  std::vector<size_t> retry_slots;
  for (auto& [slot, other] : joined) {
    const ObjectID& id = distinct[slot];
    MutexLock lock(&other->mu);
    while (!other->done.contains(id)) {
      const absl::Duration left = deadline - clock_->Now();
      if (left <= absl::ZeroDuration() || lock.WaitWithTimeout(&other->finished, left)) break;
    }
    const auto found = other->done.find(id);
    if (found == other->done.end()) {
      statuses[slot] = DeadlineError(id, absl::OkStatus());
    } else {
      statuses[slot] = found->second;
      if (ErrorCodeOf(found->second) == ErrorCode::kDeadlineExceeded && clock_->Now() < deadline) {
        retry.push_back(id);
        retry_slots.push_back(slot);
      }
    }
  }
  if (!retry.empty()) {
    FetchCall waiting = call;
    waiting.caller_waits_for_seal = true;
    std::vector<absl::Status> again = Fetch(retry, deadline - clock_->Now(), waiting);
    for (size_t i = 0; i < retry.size(); ++i) statuses[retry_slots[i]] = std::move(again[i]);
  }
  if (options_.batch.seal_detached && !call.caller_waits_for_seal) ConfirmSealed(distinct, statuses);

  for (const absl::Status& s : statuses) {
    if (!s.ok()) stats_->fetch_failures.fetch_add(1, std::memory_order_relaxed);
  }
  if (distinct.size() == ids.size()) return statuses;  // no duplicates: already in the caller's order
  std::vector<absl::Status> result;
  result.reserve(ids.size());
  for (const ObjectID& id : ids) result.push_back(statuses[slot_of.at(id)]);
  return result;
}

void FetchEngine::ConfirmSealed(absl::Span<const ObjectID> ids, std::vector<absl::Status>& statuses) {
  // The seals were sent to the store without waiting (seal_detached). The store answers this
  // process's requests in order, so one Contains for the ids the shared index does not show
  // sealed yet comes back after their seals.
  std::vector<size_t> unconfirmed;
  std::vector<ObjectID> unconfirmed_ids;
  for (size_t k = 0; k < ids.size(); ++k) {
    if (statuses[k].ok() && !store_->KnownSealedHere(ids[k])) {
      unconfirmed.push_back(k);
      unconfirmed_ids.push_back(ids[k]);
    }
  }
  if (unconfirmed.empty()) return;
  absl::StatusOr<std::vector<bool>> sealed = store_->ContainsAll(unconfirmed_ids);
  if (sealed.ok() && sealed->size() != unconfirmed.size()) {
    sealed = MakeError(ErrorCode::kInternal, "fetch: the local store answered contains with the wrong count");
  }
  for (size_t k = 0; k < unconfirmed.size(); ++k) {
    absl::Status& status = statuses[unconfirmed[k]];
    if (!sealed.ok()) {
      status = sealed.status();
    } else if (!(*sealed)[k]) {
      status = MakeError(ErrorCode::kObjectNotFound,
                         absl::StrCat("fetch(", unconfirmed_ids[k].Hex(),
                                      "): fetched, but not sealed here when confirmed (deleted meanwhile?)"));
    }
  }
}

void FetchEngine::Finish(Flight& flight, absl::Span<const ObjectID> ids, const std::vector<absl::Status>& statuses) {
  {
    MutexLock lock(&mu_);
    for (const ObjectID& id : ids) in_flight_.erase(id);
    // Nobody can join these ids any more; if nobody joined this flight so far, nobody waits for them.
    if (flight.joiners == 0) return;
  }
  MutexLock lock(&flight.mu);
  for (size_t k = 0; k < ids.size(); ++k) flight.done[ids[k]] = statuses[k];
  flight.finished.SignalAll();
}

std::vector<absl::Status> FetchEngine::FetchLed(const std::vector<ObjectID>& ids, absl::Time deadline,
                                                const FetchCall& call) {
  std::vector<LedId> led(ids.size());
  std::vector<LedId*> pending;
  pending.reserve(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    led[i].transfer.id = ids[i];
    pending.push_back(&led[i]);
  }
  const std::string shortcut = call.hint != options_.self_node_id ? call.hint : "";
  absl::Duration backoff = options_.poll_initial;
  bool guessed = false;  // some id went to the guessed owner: lookups here ask about the rest only
  while (true) {
    for (LedId* l : pending) l->NewRound();
    guessed |= RouteByShortcut(pending, shortcut);
    const absl::Duration lookup_time = RouteByDirectory(pending, /*learn_owner=*/!guessed);
    TransferRound(pending, deadline, lookup_time, call);
    const bool reroute = Settle(pending, deadline);
    if (pending.empty()) break;
    if (stopping_.load()) {
      for (LedId* l : pending) l->result = MakeError(ErrorCode::kUnavailable, "fetch: the manager is shutting down");
      break;
    }
    if (reroute) continue;  // the ids waiting for a seal are looked up early: harmless
    if (clock_->Now() + backoff >= deadline) {
      for (LedId* l : pending) l->result = DeadlineError(l->transfer.id, l->last_error);
      break;
    }
    stats_->directory_polls.fetch_add(pending.size(), std::memory_order_relaxed);
    clock_->SleepFor(backoff);
    backoff = std::min(backoff * 2, options_.poll_max);
  }
  std::vector<absl::Status> result;
  result.reserve(ids.size());
  for (const LedId& l : led) {
    // (Not value_or: its argument, an error status with a payload, would be built for every id.)
    result.push_back(l.result.has_value() ? *l.result : MakeError(ErrorCode::kInternal, "fetch: no outcome"));
  }
  return result;
}

void FetchEngine::LedId::NewRound() {
  route = Route::kDirectory;
  settled.reset();
  transferred = false;
  transfer.sources.clear();
  transfer.source = 0;
  transfer.owner = ObjectDescription{};
}

bool FetchEngine::RouteByShortcut(const std::vector<LedId*>& pending, const std::string& hint) {
  std::vector<LedId*> first;
  std::vector<ObjectID> first_ids;
  first.reserve(pending.size());
  first_ids.reserve(pending.size());
  for (LedId* l : pending) {
    if (l->routed) continue;
    l->routed = true;
    first.push_back(l);
    first_ids.push_back(l->transfer.id);
  }
  if (first.empty()) return false;
  const std::vector<std::optional<ObjectLocation>> cached = locations_.Find(first_ids);
  // Without a hint, the guessed owner stands in for one (asked once per chunk, not per id).
  std::string guess;
  if (hint.empty()) {
    guess = guess_.Guess();
    if (guess == options_.self_node_id) guess.clear();
  }
  const std::string& shortcut = hint.empty() ? guess : hint;
  const Route shortcut_route = hint.empty() ? Route::kGuess : Route::kHint;
  bool guessed = false;
  for (size_t j = 0; j < first.size(); ++j) {
    LedId& l = *first[j];
    if ((cached[j].has_value() || !shortcut.empty()) && store_->KnownSealedHere(l.transfer.id)) {
      // Here already: the shared index says so with no message (what the directory route learns
      // from a lookup listing this node and one store request).
      stats_->fetch_local.fetch_add(1, std::memory_order_relaxed);
      l.settled = absl::OkStatus();
    } else if (cached[j].has_value()) {
      l.route = Route::kCache;
      l.transfer.sources.push_back(*cached[j]);
      stats_->location_cache_hits.fetch_add(1, std::memory_order_relaxed);
    } else {
      stats_->location_cache_misses.fetch_add(1, std::memory_order_relaxed);
      if (!shortcut.empty()) {
        l.route = shortcut_route;
        l.transfer.sources.push_back(ObjectLocation{shortcut, ObjectDescription{}});  // size unknown
        (shortcut_route == Route::kHint ? stats_->hinted_fetches : stats_->guessed_fetches)
            .fetch_add(1, std::memory_order_relaxed);
        guessed |= shortcut_route == Route::kGuess;
      }
    }
  }
  return guessed;
}

absl::Duration FetchEngine::RouteByDirectory(const std::vector<LedId*>& pending, bool learn_owner) {
  std::vector<LedId*> need;
  std::vector<ObjectID> need_ids;
  for (LedId* l : pending) {
    if (l->route != Route::kDirectory || l->settled.has_value()) continue;
    need.push_back(l);
    need_ids.push_back(l->transfer.id);
  }
  if (need.empty()) return absl::ZeroDuration();
  const absl::Time t0 = clock_->Now();
  absl::StatusOr<std::vector<std::vector<ObjectLocation>>> locations = directory_->Lookup(need_ids);
  const absl::Duration lookup_time = clock_->Now() - t0;
  stats_->directory_lookups.fetch_add(need_ids.size(), std::memory_order_relaxed);
  if (!locations.ok() || locations->size() != need_ids.size()) {
    stats_->directory_errors.fetch_add(1, std::memory_order_relaxed);
    const absl::Status error =
        locations.ok() ? MakeError(ErrorCode::kInternal, "directory lookup: wrong reply count") : locations.status();
    const ErrorCode code = ErrorCodeOf(error) == ErrorCode::kOk ? ErrorCode::kUnavailable : ErrorCodeOf(error);
    // Ids sealed here need no directory: this failure path is the only one that asks the store
    // about every id it looked up.
    const std::vector<absl::StatusOr<bool>> local = AskLocal(need_ids);
    for (size_t j = 0; j < need.size(); ++j) {
      if (local[j].ok() && *local[j]) {
        stats_->fetch_local.fetch_add(1, std::memory_order_relaxed);
        need[j]->settled = absl::OkStatus();
      } else {
        need[j]->settled =
            MakeError(code, absl::StrCat("fetch ", need_ids[j].Hex(), ": directory lookup failed: ", error.message()));
      }
    }
    return lookup_time;
  }
  // Sources are the other nodes. The store is asked (in one batch) only about ids that may be
  // here already: listed on this node, or listed nowhere (sealed here, not yet published).
  std::vector<LedId*> ask;
  std::vector<ObjectID> ask_ids;
  // The other nodes listed (in *locations), each with the number of ids it is the first source of.
  absl::flat_hash_map<absl::string_view, size_t> seen;
  for (size_t j = 0; j < need.size(); ++j) {
    bool listed_here = false;
    for (const ObjectLocation& loc : (*locations)[j]) {
      if (loc.node_id == options_.self_node_id) {
        listed_here = true;
      } else {
        seen[loc.node_id] += need[j]->transfer.sources.empty() ? 1 : 0;
        need[j]->transfer.sources.push_back(loc);
      }
    }
    if (listed_here || (*locations)[j].empty()) {
      ask.push_back(need[j]);
      ask_ids.push_back(need_ids[j]);
    }
  }
  // A lookup that listed a node proves it alive (the directory lists live nodes only): its
  // cached entries are trusted for another node_ttl. Once per node, not per id.
  const std::pair<const absl::string_view, size_t>* most = nullptr;  // the node first for most ids
  for (const auto& node : seen) {
    locations_.NodeSeen(std::string(node.first));
    if (most == nullptr || node.second > most->second) most = &node;
  }
  if (learn_owner && most != nullptr) guess_.Learn(std::string(most->first));
  if (!ask.empty()) {
    const std::vector<absl::StatusOr<bool>> local = AskLocal(ask_ids);
    for (size_t j = 0; j < ask.size(); ++j) {
      if (!local[j].ok()) {
        ask[j]->settled = local[j].status();
      } else if (*local[j]) {
        stats_->fetch_local.fetch_add(1, std::memory_order_relaxed);
        ask[j]->settled = absl::OkStatus();
      }
    }
  }
  return lookup_time;
}

void FetchEngine::TransferRound(const std::vector<LedId*>& pending, absl::Time deadline, absl::Duration lookup_time,
                                const FetchCall& call) {
  std::vector<LedId*> moving;
  std::vector<Transfer> transfers;
  moving.reserve(pending.size());
  transfers.reserve(pending.size());
  for (LedId* l : pending) {
    if (l->settled.has_value() || l->transfer.sources.empty()) continue;
    moving.push_back(l);
    transfers.push_back(std::move(l->transfer));
    transfers.back().seal_detached = call.caller_waits_for_seal && options_.batch.seal_detached;
    transfers.back().forced = call.protocol;
  }
  if (moving.empty()) return;
  TransferAll(transfers, deadline, lookup_time);
  for (size_t j = 0; j < moving.size(); ++j) {
    moving[j]->transfer = std::move(transfers[j]);
    moving[j]->transferred = true;
  }
}

bool FetchEngine::Settle(std::vector<LedId*>& pending, absl::Time deadline) {
  std::vector<LedId*> still_pending;
  bool reroute = false;                       // a shortcut failed: its ids go to the directory without waiting
  const std::string* guessed_node = nullptr;  // the guessed owner, if this round tried one
  size_t guessed = 0;
  size_t guessed_served = 0;
  for (LedId* l : pending) {
    if (l->settled.has_value()) {
      l->result = *l->settled;
      continue;
    }
    if (!l->transferred) {  // no source yet: look it up again after the back-off
      still_pending.push_back(l);
      continue;
    }
    const Transfer& t = l->transfer;
    const absl::Status& status = t.status;
    if (l->route == Route::kCache && (!status.ok() || t.owner.generation != t.current().object.generation)) {
      stats_->location_cache_stale.fetch_add(1, std::memory_order_relaxed);
    }
    if (!status.ok() && l->route == Route::kHint) stats_->hint_misses.fetch_add(1, std::memory_order_relaxed);
    if (l->route == Route::kGuess) {
      guessed_node = &t.current().node_id;
      ++guessed;
      if (status.ok()) {
        ++guessed_served;
      } else {
        stats_->guess_misses.fetch_add(1, std::memory_order_relaxed);
      }
    }
    if (!status.ok() && l->route != Route::kDirectory && ErrorCodeOf(status) != ErrorCode::kOutOfMemory &&
        clock_->Now() < deadline) {
      reroute = true;
      still_pending.push_back(l);
    } else if (status.ok() || !WorthWaiting(status)) {
      l->result = status;
    } else if (clock_->Now() >= deadline) {
      // Still worth waiting for, but out of time: the deadline is what failed, whatever the last
      // attempt said (it stays in the message).
      l->result = DeadlineError(t.id, status);
    } else {
      l->last_error = status;
      still_pending.push_back(l);
    }
  }
  if (guessed_node != nullptr) guess_.Judge(*guessed_node, guessed, guessed_served);
  pending = std::move(still_pending);
  return reroute;
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

}  // namespace rplasma::fetch
