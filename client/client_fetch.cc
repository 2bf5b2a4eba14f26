// Client::Fetch and Client::ManagerStats: requests to the local rplasma-manager (its
// --client-socket). Fetch asks it to bring objects from other nodes into this store; ManagerStats
// asks for its stats document. Connections come from the client's ManagerConnectionPool: a small
// fetch is one request/reply exchange on a connection kept from the previous call.
//
// A client that reads the store's shared index asks the manager not to wait for the store's
// answer to the objects' seals (caller_waits_for_seal): the manager replies as soon as the seals
// are sent, and Fetch waits here until the index shows each fetched object sealed — the store
// seals while the reply travels, so the wait is usually over before it starts. Objects the index
// does not show while the store makes no progress for a moment (the index has no room for them,
// the store stalls, or it refused a put) are asked of the store with a Get that waits for their
// seal for a while; those still missing then are fetched again the plain way: the manager answers
// once each is sealed here, or with the store's error (the arena full). So Fetch returns only once
// every object it reports fetched is here.
#include <algorithm>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

#include "client/client.h"
#include "protocol/base/node_id.h"
#include "protocol/base/socket_io.h"
#include "protocol/base/status.h"
#include "protocol/frame.h"
#include "protocol/manager_messages.h"

namespace rplasma {
namespace {

// Time the manager gets beyond the fetch timeout to answer (lookups, a slow seal).
constexpr absl::Duration kReplyGrace = absl::Seconds(5);
// How long Fetch watches the shared index for fetched objects to show sealed (yielding the CPU
// between looks) while none of them does, before it fetches the rest again the plain way.
constexpr absl::Duration kIndexWatch = absl::Microseconds(500);
// ...then how long it asks the store to wait for them to be sealed.
constexpr absl::Duration kStoreWait = absl::Milliseconds(100);

// One request and its reply on `fd`; `what` names the request in errors.
absl::StatusOr<ManagerReply> Call(int fd, const ManagerRequest& request, absl::Time deadline, absl::string_view what) {
  RETURN_IF_ERROR(WriteFrame(fd, EncodeManagerRequest(request)));
  ASSIGN_OR_RETURN(std::string payload,
                   ReadFrame(fd, kMaxManagerFrameBytes, std::max(deadline, absl::Now()) + kReplyGrace));
  ASSIGN_OR_RETURN(ManagerReply reply, DecodeManagerReply(payload));
  if (reply.request_id != request.request_id) {
    return ProtocolError(absl::StrCat(what, ": manager replied to another request"));
  }
  RETURN_IF_ERROR(reply.status());
  return reply;
}

// One Fetch request and its reply on `fd`.
absl::StatusOr<ManagerFetchReply> Exchange(int fd, const ManagerRequest& request, size_t n, absl::Time deadline) {
  ASSIGN_OR_RETURN(ManagerReply reply, Call(fd, request, deadline, "fetch"));
  auto* result = std::get_if<ManagerFetchReply>(&reply.body);
  if (result == nullptr || result->codes.size() != n || result->messages.size() != n) {
    return ProtocolError("fetch: malformed manager reply");
  }
  return std::move(*result);
}

}  // namespace

absl::Status Client::Fetch(absl::Span<const ObjectID> ids, absl::Duration timeout, absl::string_view hint_node,
                           ForcedProtocol protocol) {
  if (ids.empty()) return absl::OkStatus();
  if (!hint_node.empty() && !IsValidNodeId(hint_node)) {
    return MakeError(ErrorCode::kInvalidArgument, "fetch: the hint is not a node id ([A-Za-z0-9._:-]{1,128})");
  }
  if (options_.manager_socket.empty()) {
    return MakeError(ErrorCode::kInvalidArgument, "fetch: no manager socket (ClientOptions::manager_socket)");
  }
  const absl::Time deadline = absl::Now() + std::max(timeout, absl::ZeroDuration());
  const bool wait_here = local_index_ != nullptr;
  ASSIGN_OR_RETURN(std::vector<absl::Status> statuses, FetchOnce(ids, deadline, hint_node, protocol, wait_here));
  if (wait_here) {
    std::vector<ObjectID> fetched;
    std::vector<size_t> at;
    for (size_t i = 0; i < ids.size(); ++i) {
      if (!statuses[i].ok()) continue;
      fetched.push_back(ids[i]);
      at.push_back(i);
    }
    std::vector<absl::Status> sealed = AwaitSealed(fetched, deadline, hint_node, protocol);
    for (size_t k = 0; k < at.size(); ++k) statuses[at[k]] = std::move(sealed[k]);
  }
  size_t failed = 0;
  ErrorCode first_code = ErrorCode::kOk;
  std::vector<std::string> failures;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (statuses[i].ok()) continue;
    if (failed++ == 0) first_code = ErrorCodeOf(statuses[i]);
    if (failures.size() < 3) {
      failures.push_back(
          absl::StrCat(ids[i].Hex(), ": ", ErrorCodeName(ErrorCodeOf(statuses[i])), " ", statuses[i].message()));
    }
  }
  if (failed == 0) return absl::OkStatus();
  return MakeError(first_code,
                   absl::StrCat("fetch: ", failed, " of ", ids.size(), " objects failed (",
                                absl::StrJoin(failures, "; "), failed > failures.size() ? "; ..." : "", ")"));
}

absl::StatusOr<std::vector<absl::Status>> Client::FetchOnce(absl::Span<const ObjectID> ids, absl::Time deadline,
                                                            absl::string_view hint_node, ForcedProtocol protocol,
                                                            bool caller_waits_for_seal) {
  // Connecting gets the grace a reply gets: a manager that stopped accepting fails the call then.
  const absl::Time connect_deadline = deadline + kReplyGrace;
  ASSIGN_OR_RETURN(ManagerConnectionPool::Lease connection, manager_connections_.Take(connect_deadline));
  std::vector<absl::Status> statuses;
  statuses.reserve(ids.size());
  for (size_t start = 0; start < ids.size(); start += kMaxFetchIds) {
    const size_t n = std::min<size_t>(kMaxFetchIds, ids.size() - start);
    ManagerFetchRequest fetch;
    fetch.ids.assign(ids.begin() + start, ids.begin() + start + n);
    fetch.timeout_ms = std::max<int64_t>(0, absl::ToInt64Milliseconds(deadline - absl::Now()));
    fetch.hint_node = std::string(hint_node);
    fetch.caller_waits_for_seal = caller_waits_for_seal;
    fetch.protocol = protocol;
    ManagerRequest request{next_fetch_request_id_.fetch_add(1, std::memory_order_relaxed) + 1, std::move(fetch)};
    absl::StatusOr<ManagerFetchReply> result = Exchange(connection.fd.get(), request, n, deadline);
    if (!result.ok() && connection.reused && ErrorCodeOf(result.status()) == ErrorCode::kUnavailable) {
      // The kept connection was closed by the manager (a restart, say). Fetch is idempotent:
      // ask again on a fresh one.
      manager_connections_.Clear();
      ASSIGN_OR_RETURN(connection, manager_connections_.Take(connect_deadline));
      result = Exchange(connection.fd.get(), request, n, deadline);
    }
    RETURN_IF_ERROR(result.status());
    for (size_t i = 0; i < n; ++i) {
      statuses.push_back(result->codes[i] == ErrorCode::kOk ? absl::OkStatus()
                                                            : MakeError(result->codes[i], result->messages[i]));
    }
  }
  manager_connections_.GiveBack(std::move(connection.fd));
  return statuses;
}

std::vector<absl::Status> Client::AwaitSealed(absl::Span<const ObjectID> ids, absl::Time deadline,
                                              absl::string_view hint_node, ForcedProtocol protocol) {
  std::vector<absl::Status> out(ids.size());
  std::vector<size_t> waiting;
  for (size_t i = 0; i < ids.size(); ++i) waiting.push_back(i);
  // The store seals them in order: watch while it makes progress.
  absl::Time progress = absl::Now();
  while (true) {
    const size_t before = waiting.size();
    std::erase_if(waiting, [&](size_t i) { return IndexedAsSealed(ids[i]); });
    if (waiting.empty()) break;
    const absl::Time now = absl::Now();
    if (waiting.size() < before) progress = now;
    if (now - progress >= kIndexWatch || now >= deadline + kReplyGrace) break;
    std::this_thread::yield();
  }
  if (waiting.empty()) return out;
  // Sealed but not indexed (no room in the index there), or a store that stalled: a Get from the
  // store answers as soon as each is sealed (the buffers are dropped at once).
  std::vector<ObjectID> ask;
  for (size_t i : waiting) ask.push_back(ids[i]);
  const absl::Duration wait =
      std::min(kStoreWait, std::max(deadline + kReplyGrace - absl::Now(), absl::ZeroDuration()));
  absl::StatusOr<std::vector<ObjectBuffer>> here = GetFromStore(ask, wait);
  if (here.ok() && here->size() == ask.size()) {
    std::vector<size_t> still;
    for (size_t k = 0; k < ask.size(); ++k) {
      if (!(*here)[k].valid()) still.push_back(waiting[k]);
    }
    waiting = std::move(still);
  }
  if (waiting.empty()) return out;
  // A slow store, or one that refused them (the arena full): the plain fetch answers once each
  // is sealed here, or with the store's error.
  std::vector<ObjectID> again;
  for (size_t i : waiting) again.push_back(ids[i]);
  absl::StatusOr<std::vector<absl::Status>> fetched =
      FetchOnce(again, deadline, hint_node, protocol, /*caller_waits_for_seal=*/false);
  for (size_t k = 0; k < waiting.size(); ++k) out[waiting[k]] = fetched.ok() ? (*fetched)[k] : fetched.status();
  return out;
}

absl::StatusOr<ManagerStatsReply> Client::AskManagerStats() {
  if (options_.manager_socket.empty()) {
    return MakeError(ErrorCode::kInvalidArgument, "manager stats: no manager socket (ClientOptions::manager_socket)");
  }
  ASSIGN_OR_RETURN(ManagerConnectionPool::Lease connection, manager_connections_.Take(absl::Now() + kReplyGrace));
  ManagerRequest request{next_fetch_request_id_.fetch_add(1, std::memory_order_relaxed) + 1, ManagerStatsRequest{}};
  const absl::Time deadline = absl::Now();  // Call allows kReplyGrace beyond it
  absl::StatusOr<ManagerReply> reply = Call(connection.fd.get(), request, deadline, "manager stats");
  if (!reply.ok() && connection.reused && ErrorCodeOf(reply.status()) == ErrorCode::kUnavailable) {
    manager_connections_.Clear();
    ASSIGN_OR_RETURN(connection, manager_connections_.Take(absl::Now() + kReplyGrace));
    reply = Call(connection.fd.get(), request, absl::Now(), "manager stats");
  }
  RETURN_IF_ERROR(reply.status());
  auto* stats = std::get_if<ManagerStatsReply>(&reply->body);
  if (stats == nullptr) return ProtocolError("manager stats: malformed manager reply");
  manager_connections_.GiveBack(std::move(connection.fd));
  return std::move(*stats);
}

absl::StatusOr<std::string> Client::ManagerStats() {
  ASSIGN_OR_RETURN(ManagerStatsReply stats, AskManagerStats());
  return std::move(stats.json);
}

absl::StatusOr<std::string> Client::ManagerNodeId() {
  ASSIGN_OR_RETURN(ManagerStatsReply stats, AskManagerStats());
  if (stats.node_id.empty()) return ProtocolError("manager stats: the manager did not say its node id");
  return std::move(stats.node_id);
}

}  // namespace rplasma
