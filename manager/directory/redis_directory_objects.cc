// RedisDirectory: object locations (publish, remove, pipelined lookup with lazy cleaning).
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_format.h"

#include "manager/directory/redis_directory.h"
#include "protocol/base/logging.h"
#include "protocol/base/status.h"

namespace rplasma {
namespace {

// Locations read per object; a hash with more fields is malformed (far more than any cluster).
constexpr size_t kMaxLocationsPerObject = 4096;
// ListOwnObjects: SSCAN page size, and a bound on pages (a set far larger than any store holds).
constexpr int kListPage = 1000;
constexpr int kMaxListRounds = 100000;
// Lookup: nodes whose liveness is asked in the same round trip as the locations, before they are
// known to be needed (those seen alive before, but longer ago than liveness_cache).
constexpr size_t kMaxEarlyChecks = 8;

}  // namespace

absl::Status RedisDirectory::PublishObject(const ObjectID& id, const ObjectLocation& location) {
  const std::pair<ObjectID, ObjectLocation> one(id, location);
  return PublishObjects(absl::MakeConstSpan(&one, 1));
}

absl::Status RedisDirectory::PublishObjects(absl::Span<const std::pair<ObjectID, ObjectLocation>> objects) {
  Session session(this);
  ASSIGN_OR_RETURN(std::string node_id, OwnNodeId("PublishObjects"));
  const std::string set_key = codec_.NodeObjectsKey(node_id);
  std::vector<RedisCommand> commands;
  commands.reserve(2 * objects.size());
  for (const auto& [id, location] : objects) {
    if (!location.node_id.empty() && location.node_id != node_id) {
      return MakeError(ErrorCode::kInvalidArgument,
                       absl::StrFormat("PublishObjects(%s): location names node %s, this node is %s", id.Hex(),
                                       location.node_id.substr(0, 200), node_id));
    }
    commands.push_back(RedisCommand{"HSET", codec_.ObjectKey(id), node_id, DirectoryCodec::EncodeLocation(location)});
    commands.push_back(RedisCommand{"SADD", set_key, id.Hex()});
  }
  if (commands.empty()) return absl::OkStatus();
  return RunWrites(std::move(commands), "PublishObjects");
}

absl::Status RedisDirectory::RemoveObject(const ObjectID& id) { return RemoveObjects(absl::MakeConstSpan(&id, 1)); }

absl::Status RedisDirectory::RemoveObjects(absl::Span<const ObjectID> ids) {
  Session session(this);
  ASSIGN_OR_RETURN(std::string node_id, OwnNodeId("RemoveObjects"));
  const std::string set_key = codec_.NodeObjectsKey(node_id);
  std::vector<RedisCommand> commands;
  commands.reserve(2 * ids.size());
  for (const ObjectID& id : ids) {
    commands.push_back(RedisCommand{"HDEL", codec_.ObjectKey(id), node_id});
    commands.push_back(RedisCommand{"SREM", set_key, id.Hex()});
  }
  if (commands.empty()) return absl::OkStatus();
  return RunWrites(std::move(commands), "RemoveObjects");
}

absl::StatusOr<std::vector<ObjectID>> RedisDirectory::ListOwnObjects() {
  Session session(this);
  ASSIGN_OR_RETURN(std::string node_id, OwnNodeId("ListOwnObjects"));
  const std::string set_key = codec_.NodeObjectsKey(node_id);
  std::vector<ObjectID> ids;
  std::string cursor = "0";
  for (int round = 0; round < kMaxListRounds; ++round) {
    ASSIGN_OR_RETURN(std::vector<RedisReply> replies,
                     Run({RedisCommand{"SSCAN", set_key, cursor, "COUNT", std::to_string(kListPage)}}));
    RedisReplyView page = replies[0].view();
    if (page.is_error()) {
      counters_.errors.fetch_add(1);
      return RedisErrorReplyStatus(page, options_.address, absl::StrFormat("SSCAN %s", set_key));
    }
    if (!page.is_array() || page.size() != 2 || !page.element(0).is_string() || !page.element(1).is_array()) {
      NoteGarbage(absl::StrFormat("SSCAN %s: %s", set_key, page.Describe()));
      return ProtocolError(absl::StrFormat("SSCAN %s: malformed reply %s", set_key, page.Describe()));
    }
    for (const ObjectID& id : DecodeObjectMembers(page.element(1), set_key)) ids.push_back(id);
    cursor = std::string(page.element(0).str());
    if (cursor == "0") return ids;
  }
  return ProtocolError(absl::StrFormat("SSCAN %s: no end after %d pages", set_key, kMaxListRounds));
}

RedisDirectory::Liveness RedisDirectory::NoteLiveness(const std::string& node, const RedisReplyView& reply,
                                                      absl::string_view key, absl::Time now) {
  if (reply.is_integer() && reply.integer() == 1) {
    if (options_.liveness_cache > absl::ZeroDuration()) alive_until_[node] = now + options_.liveness_cache;
    return Liveness::kAlive;
  }
  if (reply.is_integer() && reply.integer() == 0) {
    alive_until_.erase(node);
    return Liveness::kExpired;
  }
  NoteGarbage(absl::StrFormat("EXISTS %s: %s", key, reply.Describe()));
  return Liveness::kUnknown;
}

absl::StatusOr<std::vector<std::vector<ObjectLocation>>> RedisDirectory::Lookup(absl::Span<const ObjectID> ids) {
  using Result = std::vector<std::vector<ObjectLocation>>;
  Result found(ids.size());
  if (ids.empty()) return found;
  Session session(this);

  // Round trip 1: every location entry of every id, and whether the nodes seen alive before, but
  // longer ago than liveness_cache, still are (a few at most): a lookup after a pause then costs
  // one round trip, not two, when its ids live where earlier ones did.
  const absl::Time now = options_.clock->Now();
  std::vector<RedisCommand> reads;
  reads.reserve(ids.size() + kMaxEarlyChecks);
  for (const ObjectID& id : ids) reads.push_back(RedisCommand{"HGETALL", codec_.ObjectKey(id)});
  std::vector<std::string> early_nodes;  // their EXISTS follow the ids' HGETALLs in `reads`, in order
  for (const auto& [node, until] : alive_until_) {
    if (until > now) continue;
    // (Never a pipeline of its own: that would be the round trip it is meant to save.)
    if (early_nodes.size() == kMaxEarlyChecks || reads.size() % options_.max_pipeline == 0) break;
    early_nodes.push_back(node);
    reads.push_back(RedisCommand{"EXISTS", codec_.NodeKey(node)});
  }
  ASSIGN_OR_RETURN(std::vector<RedisReply> entries, RunChunked(reads));
  absl::flat_hash_map<std::string, Liveness> early;  // the early checks' answers
  for (size_t k = 0; k < early_nodes.size(); ++k) {
    const size_t at = ids.size() + k;
    early.emplace(early_nodes[k], NoteLiveness(early_nodes[k], entries[at].view(), reads[at][1], now));
  }

  Result candidates(ids.size());
  absl::flat_hash_map<std::string, int> node_index;  // distinct node -> position in `nodes`
  std::vector<std::string> nodes;
  for (size_t i = 0; i < ids.size(); ++i) {
    RedisReplyView hash = entries[i].view();
    if (hash.is_error() && !hash.is_wrong_type()) {
      counters_.errors.fetch_add(1);
      return RedisErrorReplyStatus(hash, options_.address, absl::StrFormat("HGETALL %s", reads[i][1]));
    }
    if (!hash.is_array() || hash.size() % 2 != 0) {
      NoteGarbage(absl::StrFormat("HGETALL %s: %s", reads[i][1], hash.Describe()));
      continue;
    }
    size_t pairs = hash.size() / 2;
    if (pairs > kMaxLocationsPerObject) {
      NoteGarbage(
          absl::StrFormat("HGETALL %s: %d entries; reading the first %d", reads[i][1], pairs, kMaxLocationsPerObject));
      pairs = kMaxLocationsPerObject;
    }
    for (size_t p = 0; p < pairs; ++p) {
      RedisReplyView field = hash.element(2 * p);
      RedisReplyView value = hash.element(2 * p + 1);
      absl::StatusOr<ObjectLocation> location =
          field.is_string() && value.is_string()
              ? DirectoryCodec::DecodeLocation(field.str(), value.str())
              : ProtocolError(absl::StrFormat("entry %s -> %s", field.Describe(), value.Describe()));
      if (!location.ok()) {
        NoteGarbage(absl::StrFormat("HGETALL %s: %s", reads[i][1], location.status().message()));
        continue;
      }
      if (node_index.emplace(location->node_id, static_cast<int>(nodes.size())).second) {
        nodes.push_back(location->node_id);
      }
      candidates[i].push_back(*std::move(location));
    }
  }
  if (nodes.empty()) return found;

  // Round trip 2: which of those nodes are alive — skipped for nodes seen alive within the last
  // liveness_cache (a steady stream of fetches from the same peers then costs one round trip) and
  // for those asked in round trip 1.
  std::vector<Liveness> liveness(nodes.size(), Liveness::kUnknown);
  std::vector<RedisCommand> checks;
  std::vector<size_t> checked;  // checks[k] asks about nodes[checked[k]]
  for (size_t n = 0; n < nodes.size(); ++n) {
    auto answered = early.find(nodes[n]);
    if (answered != early.end() && answered->second != Liveness::kUnknown) {
      liveness[n] = answered->second;
      continue;
    }
    auto cached = alive_until_.find(nodes[n]);
    if (cached != alive_until_.end() && cached->second > now) {
      liveness[n] = Liveness::kAlive;
      counters_.liveness_cache_hits.fetch_add(1);
      continue;
    }
    checks.push_back(RedisCommand{"EXISTS", codec_.NodeKey(nodes[n])});
    checked.push_back(n);
  }
  if (!checks.empty()) {
    ASSIGN_OR_RETURN(std::vector<RedisReply> exists, RunChunked(checks));
    for (size_t k = 0; k < checks.size(); ++k) {
      liveness[checked[k]] = NoteLiveness(nodes[checked[k]], exists[k].view(), checks[k][1], now);
    }
  }
  if (alive_until_.size() > kMaxCachedNodes) alive_until_.clear();

  // Keep live nodes' entries; delete expired nodes' entries (best effort, a third round trip
  // only when there is something to clean).
  std::vector<RedisCommand> cleanups;
  for (size_t i = 0; i < ids.size(); ++i) {
    for (ObjectLocation& location : candidates[i]) {
      switch (liveness[node_index[location.node_id]]) {
        case Liveness::kAlive: found[i].push_back(std::move(location)); break;
        case Liveness::kExpired: cleanups.push_back(RedisCommand{"HDEL", reads[i][1], location.node_id}); break;
        case Liveness::kUnknown: break;
      }
    }
  }
  if (!cleanups.empty()) {
    absl::StatusOr<std::vector<RedisReply>> cleaned = RunChunked(cleanups);
    if (!cleaned.ok()) {
      LOG(WARNING) << "directory: cleaning entries of expired nodes failed: " << cleaned.status();
    } else {
      for (const RedisReply& reply : *cleaned) {
        if (reply.view().is_integer() && reply.view().integer() > 0) {
          counters_.cleaned_entries.fetch_add(static_cast<uint64_t>(reply.view().integer()));
        }
      }
    }
  }
  return found;
}

}  // namespace rplasma
