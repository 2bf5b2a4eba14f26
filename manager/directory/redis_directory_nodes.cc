// RedisDirectory: node records (register, heartbeat, unregister, get) and sweeping the entries of
// expired nodes.
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"

#include "manager/directory/redis_directory.h"
#include "protocol/base/logging.h"
#include "protocol/base/status.h"

namespace rplasma {
namespace {

// Members popped per SPOP while deleting a node's entries (one pipeline of HDELs each).
constexpr int kCleanBatch = 1000;
// Bound on SPOP rounds for one node (kCleanBatch * this entries), in case a writer keeps adding.
constexpr int kMaxCleanRounds = 100000;
// Expired nodes cleaned per sweep, so one Heartbeat never holds the directory for long.
constexpr size_t kMaxSweptNodesPerCall = 64;

}  // namespace

absl::Status RedisDirectory::RegisterNode(const NodeRecord& node) {
  if (!DirectoryCodec::IsValidNodeId(node.node_id)) {
    return MakeError(
        ErrorCode::kInvalidArgument,
        absl::StrFormat("RegisterNode: node id \"%s\" is not [A-Za-z0-9._:-]{1,128}", node.node_id.substr(0, 200)));
  }
  if (!DirectoryCodec::IsValidAddress(node.tcp_address) || !DirectoryCodec::IsValidAddress(node.verbs_address)) {
    return MakeError(ErrorCode::kInvalidArgument,
                     absl::StrFormat("RegisterNode(%s): addresses must be [A-Za-z0-9._:%%[]-]{0,256}", node.node_id));
  }
  Session session(this);
  if (node_.has_value() && node_->node_id != node.node_id) {
    return MakeError(ErrorCode::kInvalidArgument,
                     absl::StrFormat("RegisterNode(%s): already registered as %s", node.node_id, node_->node_id));
  }
  // Kept even if Redis is down now: the next reconnect publishes it.
  node_ = node;
  return RunWrites(NodeRecordCommands(node), "RegisterNode");
}

absl::Status RedisDirectory::Heartbeat() {
  Session session(this);
  ASSIGN_OR_RETURN(std::string node_id, OwnNodeId("Heartbeat"));
  // XX: only refresh an existing record, so that a vanished one is noticed.
  std::vector<RedisCommand> refresh = NodeRecordCommands(*node_);
  refresh[0].push_back("XX");
  ASSIGN_OR_RETURN(std::vector<RedisReply> replies, Run({refresh[0]}));
  RedisReplyView reply = replies[0].view();
  if (reply.is_nil()) {
    // Our record expired (a stall longer than the TTL), was swept, or Redis lost its data: other
    // nodes may have cleaned our entries, so the owner must re-publish them.
    LOG(WARNING) << "directory: record of node " << node_id << " was gone from redis " << options_.address
                 << "; re-publishing";
    RETURN_IF_ERROR(RunWrites(NodeRecordCommands(*node_), "Heartbeat"));
    reconnect_pending_ = true;
  } else if (reply.is_error()) {
    counters_.errors.fetch_add(1);
    return RedisErrorReplyStatus(reply, options_.address, "Heartbeat");
  }
  if (options_.sweep_interval > absl::ZeroDuration() &&
      options_.clock->Now() - last_sweep_ >= options_.sweep_interval) {
    last_sweep_ = options_.clock->Now();
    absl::Status swept = SweepLocked();
    if (!swept.ok()) LOG(WARNING) << "directory: sweep of expired nodes failed: " << swept;
  }
  return absl::OkStatus();
}

absl::Status RedisDirectory::UnregisterNode() {
  Session session(this);
  if (!node_.has_value()) return absl::OkStatus();
  const std::string node_id = node_->node_id;
  // Forget the record first so that a reconnect during the clean-up does not re-publish it. If
  // Redis is down now, the record expires and other nodes sweep the entries.
  node_.reset();
  RETURN_IF_ERROR(RunWrites({RedisCommand{"DEL", codec_.NodeKey(node_id)}}, "UnregisterNode"));
  ASSIGN_OR_RETURN(uint64_t removed, CleanNodeLocked(node_id));
  (void)removed;
  return RunWrites({RedisCommand{"SREM", codec_.NodesKey(), node_id}}, "UnregisterNode");
}

absl::StatusOr<NodeRecord> RedisDirectory::GetNode(const std::string& node_id) {
  if (!DirectoryCodec::IsValidNodeId(node_id)) {
    return MakeError(ErrorCode::kInvalidArgument,
                     absl::StrFormat("GetNode: node id \"%s\" is not [A-Za-z0-9._:-]{1,128}", node_id.substr(0, 200)));
  }
  Session session(this);
  const std::string key = codec_.NodeKey(node_id);
  ASSIGN_OR_RETURN(std::vector<RedisReply> replies, Run({RedisCommand{"GET", key}}));
  RedisReplyView reply = replies[0].view();
  if (reply.is_nil()) {
    return ObjectNotFoundError(absl::StrFormat("node %s: no record (never registered, or expired)", node_id));
  }
  if (reply.is_string()) {
    absl::StatusOr<NodeRecord> node = DirectoryCodec::DecodeNodeRecord(node_id, reply.str());
    if (node.ok()) return node;
    NoteGarbage(absl::StrFormat("GET %s: %s", key, node.status().message()));
    return node.status();
  }
  if (reply.is_error() && !reply.is_wrong_type()) {
    counters_.errors.fetch_add(1);
    return RedisErrorReplyStatus(reply, options_.address, absl::StrFormat("GetNode(%s)", node_id));
  }
  NoteGarbage(absl::StrFormat("GET %s: %s", key, reply.Describe()));
  return ProtocolError(absl::StrFormat("node %s: malformed record in redis (%s)", node_id, reply.Describe()));
}

absl::StatusOr<uint64_t> RedisDirectory::CleanNodeLocked(const std::string& node_id) {
  const std::string set_key = codec_.NodeObjectsKey(node_id);
  uint64_t removed = 0;
  for (int round = 0; round < kMaxCleanRounds; ++round) {
    ASSIGN_OR_RETURN(std::vector<RedisReply> popped, Run({RedisCommand{"SPOP", set_key, std::to_string(kCleanBatch)}}));
    RedisReplyView members = popped[0].view();
    if (members.is_wrong_type()) {
      NoteGarbage(absl::StrFormat("SPOP %s: key held a value of the wrong type; deleted", set_key));
      RETURN_IF_ERROR(RunWrites({RedisCommand{"DEL", set_key}}, "clean node"));
      break;
    }
    if (members.is_error()) {
      counters_.errors.fetch_add(1);
      return RedisErrorReplyStatus(members, options_.address, absl::StrFormat("SPOP %s", set_key));
    }
    if (!members.is_array() || members.size() == 0) break;  // set gone (SPOP deletes it when empty)
    std::vector<RedisCommand> deletes;
    for (const ObjectID& id : DecodeObjectMembers(members, set_key)) {
      deletes.push_back(RedisCommand{"HDEL", codec_.ObjectKey(id), node_id});
    }
    ASSIGN_OR_RETURN(std::vector<RedisReply> replies, RunChunked(deletes));
    for (size_t i = 0; i < replies.size(); ++i) {
      RedisReplyView reply = replies[i].view();
      if (reply.is_integer()) {
        removed += static_cast<uint64_t>(reply.integer() > 0 ? reply.integer() : 0);
      } else if (reply.is_wrong_type()) {
        NoteGarbage(absl::StrFormat("HDEL %s: key held a value of the wrong type; deleted", deletes[i][1]));
        RETURN_IF_ERROR(RunWrites({RedisCommand{"DEL", deletes[i][1]}}, "clean node"));
      }
    }
  }
  return removed;
}

absl::Status RedisDirectory::SweepExpiredNodes() {
  Session session(this);
  last_sweep_ = options_.clock->Now();
  return SweepLocked();
}

absl::Status RedisDirectory::SweepLocked() {
  const std::string nodes_key = codec_.NodesKey();
  ASSIGN_OR_RETURN(std::vector<RedisReply> replies, Run({RedisCommand{"SMEMBERS", nodes_key}}));
  RedisReplyView members = replies[0].view();
  if (members.is_wrong_type()) {
    NoteGarbage(absl::StrFormat("SMEMBERS %s: key held a value of the wrong type; deleted", nodes_key));
    return RunWrites({RedisCommand{"DEL", nodes_key}}, "sweep");
  }
  if (members.is_error()) {
    counters_.errors.fetch_add(1);
    return RedisErrorReplyStatus(members, options_.address, absl::StrFormat("SMEMBERS %s", nodes_key));
  }
  std::vector<std::string> candidates;
  std::vector<RedisCommand> bad_members;
  for (size_t i = 0; i < members.size(); ++i) {
    RedisReplyView member = members.element(i);
    if (!member.is_string()) {
      NoteGarbage(absl::StrFormat("member of %s: %s", nodes_key, member.Describe()));
      continue;
    }
    if (!DirectoryCodec::IsValidNodeId(member.str())) {
      NoteGarbage(absl::StrFormat("member of %s: invalid node id; removed", nodes_key));
      bad_members.push_back(RedisCommand{"SREM", nodes_key, std::string(member.str())});
      continue;
    }
    if (node_.has_value() && member.str() == node_->node_id) continue;
    candidates.emplace_back(member.str());
  }
  if (!bad_members.empty()) RETURN_IF_ERROR(RunWrites(std::move(bad_members), "sweep"));

  std::vector<RedisCommand> exists;
  for (const std::string& node_id : candidates) exists.push_back(RedisCommand{"EXISTS", codec_.NodeKey(node_id)});
  ASSIGN_OR_RETURN(std::vector<RedisReply> alive, RunChunked(exists));
  size_t swept = 0;
  for (size_t i = 0; i < candidates.size() && swept < kMaxSweptNodesPerCall; ++i) {
    RedisReplyView reply = alive[i].view();
    if (!reply.is_integer() || reply.integer() != 0) continue;  // alive, or unknown: leave it
    ASSIGN_OR_RETURN(uint64_t removed, CleanNodeLocked(candidates[i]));
    RETURN_IF_ERROR(RunWrites({RedisCommand{"SREM", nodes_key, candidates[i]}}, "sweep"));
    counters_.cleaned_entries.fetch_add(removed);
    counters_.swept_nodes.fetch_add(1);
    ++swept;
    LOG(INFO) << "directory: swept expired node " << candidates[i] << " (" << removed << " entries)";
  }
  return absl::OkStatus();
}

std::vector<ObjectID> RedisDirectory::DecodeObjectMembers(RedisReplyView members, const std::string& set_key) {
  std::vector<ObjectID> ids;
  ids.reserve(members.size());
  for (size_t i = 0; i < members.size(); ++i) {
    RedisReplyView member = members.element(i);
    absl::StatusOr<ObjectID> id =
        member.is_string() ? DirectoryCodec::DecodeObjectMember(member.str()) : ProtocolError(member.Describe());
    if (!id.ok()) {
      NoteGarbage(absl::StrFormat("member of %s: %s", set_key, id.status().message()));
      continue;
    }
    ids.push_back(*id);
  }
  return ids;
}

}  // namespace rplasma
