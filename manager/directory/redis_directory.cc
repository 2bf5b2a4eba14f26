// RedisDirectory: construction, the connection with its reconnect backoff, and the helpers every
// operation uses. Node operations: redis_directory_nodes.cc; objects: redis_directory_objects.cc.
#include "manager/directory/redis_directory.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/strings/str_format.h"

#include "protocol/base/logging.h"
#include "protocol/base/status.h"

namespace rplasma {

RedisDirectory::RedisDirectory(const RedisDirectoryOptions& options, std::vector<std::string> seeds)
    : options_(options),
      codec_(options.key_prefix),
      router_(std::move(seeds), options.op_timeout, *options.clock,
              RedisRouterCounters{counters_.ops, counters_.moved_redirects, counters_.ask_redirects,
                                  counters_.slot_map_queries}) {}

RedisDirectory::~RedisDirectory() = default;

absl::StatusOr<std::unique_ptr<RedisDirectory>> RedisDirectory::Create(const RedisDirectoryOptions& options) {
  RETURN_IF_ERROR(options.Validate());
  ASSIGN_OR_RETURN(std::vector<std::string> seeds, ParseRedisSeeds(options.address));
  std::unique_ptr<RedisDirectory> directory(new RedisDirectory(options, std::move(seeds)));
  MutexLock lock(&directory->mu_);
  RETURN_IF_ERROR(directory->ConnectLocked(options.clock->Now() + options.op_timeout));
  ASSIGN_OR_RETURN(std::vector<RedisReply> replies, directory->Run({RedisCommand{"PING"}}));
  RedisReplyView pong = replies[0].view();
  if (pong.type() != RedisReplyView::Type::kStatus || pong.str() != "PONG") {
    return MakeError(ErrorCode::kUnavailable,
                     absl::StrFormat("redis %s: PING answered %s, not PONG: is this a Redis server?", options.address,
                                     pong.Describe()));
  }
  return directory;
}

absl::Status RedisDirectory::ConnectLocked(absl::Time deadline) {
  const absl::Time now = options_.clock->Now();
  if (now < next_connect_attempt_) {
    return MakeError(
        ErrorCode::kUnavailable,
        absl::StrFormat("redis %s unavailable (next reconnect attempt in %s); last error: %s", options_.address,
                        absl::FormatDuration(next_connect_attempt_ - now), last_connect_error_));
  }
  if (deadline <= now) {
    return BackOff(
        MakeError(ErrorCode::kUnavailable, absl::StrFormat("redis %s: no time left to reconnect", options_.address)));
  }
  absl::Status connected = router_.Connect(std::min(deadline, now + options_.op_timeout));
  if (!connected.ok()) return BackOff(connected);

  const bool reconnect = ever_connected_;
  if (reconnect && node_.has_value()) {
    // Redis may have restarted empty: put this node's record back before anything else.
    absl::StatusOr<std::vector<RedisReply>> replies = router_.Pipeline(NodeRecordCommands(*node_), deadline);
    if (!replies.ok()) {
      router_.Disconnect();
      return BackOff(replies.status());
    }
    for (const RedisReply& reply : *replies) {
      if (reply.view().is_error()) {
        router_.Disconnect();
        return BackOff(RedisErrorReplyStatus(reply.view(), options_.address, "re-publish node record"));
      }
    }
  }
  next_connect_attempt_ = absl::InfinitePast();  // backoff_ resets once a command succeeds
  if (reconnect) {
    counters_.reconnects.fetch_add(1);
    reconnect_pending_ = true;
    LOG(INFO) << "directory: reconnected to redis " << options_.address
              << (node_.has_value() ? "; node record re-published" : "");
  }
  ever_connected_ = true;
  return absl::OkStatus();
}

absl::Status RedisDirectory::BackOff(const absl::Status& status) {
  backoff_ = backoff_ == absl::ZeroDuration() ? options_.reconnect_backoff_initial
                                              : std::min(2 * backoff_, options_.reconnect_backoff_max);
  next_connect_attempt_ = options_.clock->Now() + backoff_;
  last_connect_error_ = std::string(status.message());
  return status;
}

absl::StatusOr<std::vector<RedisReply>> RedisDirectory::Run(absl::Span<const RedisCommand> commands) {
  const absl::Time deadline = options_.clock->Now() + options_.op_timeout;
  bool fresh = false;
  if (!router_.connected()) {
    absl::Status connected = ConnectLocked(deadline);
    if (!connected.ok()) {
      counters_.errors.fetch_add(1);
      return connected;
    }
    fresh = true;
  }
  absl::StatusOr<std::vector<RedisReply>> replies = router_.Pipeline(commands, deadline);
  if (replies.ok()) {
    backoff_ = absl::ZeroDuration();
    if (router_.TakeRecovered()) RecoverAfterFailover(deadline);
    return replies;
  }
  if (router_.connected()) {
    // A cluster the router still reaches part of: it already retried within the deadline.
    counters_.errors.fetch_add(1);
    return replies.status();
  }
  if (fresh) {
    // A server that accepts but does not answer (hung, overloaded): back off like a refused connect.
    counters_.errors.fetch_add(1);
    return BackOff(replies.status());
  }
  if (options_.clock->Now() < deadline) {
    // An idle connection can die quietly (Redis restarted): one fresh attempt within the bound.
    absl::Status connected = ConnectLocked(deadline);
    if (!connected.ok()) {
      counters_.errors.fetch_add(1);
      return connected;
    }
    replies = router_.Pipeline(commands, deadline);
    if (replies.ok()) {
      backoff_ = absl::ZeroDuration();
      return replies;
    }
    router_.Disconnect();
    counters_.errors.fetch_add(1);
    return BackOff(replies.status());
  }
  counters_.errors.fetch_add(1);
  return replies.status();
}

void RedisDirectory::RecoverAfterFailover(absl::Time deadline) {
  counters_.reconnects.fetch_add(1);
  reconnect_pending_ = true;
  if (!node_.has_value()) return;
  absl::StatusOr<std::vector<RedisReply>> replies = router_.Pipeline(NodeRecordCommands(*node_), deadline);
  if (!replies.ok()) {
    LOG(WARNING) << "directory: re-publishing the node record after a failover failed: " << replies.status();
    return;
  }
  LOG(INFO) << "directory: a redis master of " << options_.address << " was replaced; node record re-published";
}

absl::StatusOr<std::vector<RedisReply>> RedisDirectory::RunChunked(absl::Span<const RedisCommand> commands) {
  std::vector<RedisReply> all;
  all.reserve(commands.size());
  for (size_t start = 0; start < commands.size(); start += options_.max_pipeline) {
    ASSIGN_OR_RETURN(std::vector<RedisReply> replies, Run(commands.subspan(start, options_.max_pipeline)));
    for (RedisReply& reply : replies) all.push_back(std::move(reply));
  }
  return all;
}

absl::Status RedisDirectory::RunWrites(std::vector<RedisCommand> commands, absl::string_view op) {
  ASSIGN_OR_RETURN(std::vector<RedisReply> replies, RunChunked(commands));
  absl::Status first_error;
  std::vector<RedisCommand> repairs;
  for (size_t i = 0; i < replies.size(); ++i) {
    RedisReplyView reply = replies[i].view();
    if (reply.is_wrong_type() && commands[i].size() >= 2) {
      // Someone stored another type under our key: it carries no hint worth keeping.
      NoteGarbage(absl::StrFormat("%s: key %s held a value of the wrong type; replaced", op, commands[i][1]));
      repairs.push_back(RedisCommand{"DEL", commands[i][1]});
      repairs.push_back(std::move(commands[i]));
    } else if (reply.is_error() && first_error.ok()) {
      first_error = RedisErrorReplyStatus(reply, options_.address, absl::StrFormat("%s (%s)", op, commands[i][0]));
    }
  }
  if (!repairs.empty()) {
    ASSIGN_OR_RETURN(std::vector<RedisReply> repaired, RunChunked(repairs));
    for (const RedisReply& reply : repaired) {
      if (reply.view().is_error() && first_error.ok()) {
        first_error = RedisErrorReplyStatus(reply.view(), options_.address, absl::StrFormat("%s (repair)", op));
      }
    }
  }
  if (!first_error.ok()) counters_.errors.fetch_add(1);
  return first_error;
}

std::vector<RedisCommand> RedisDirectory::NodeRecordCommands(const NodeRecord& node) const {
  return {
      RedisCommand{"SET", codec_.NodeKey(node.node_id), DirectoryCodec::EncodeNodeRecord(node), "PX",
                   std::to_string(absl::ToInt64Milliseconds(options_.node_ttl))},
      RedisCommand{"SADD", codec_.NodesKey(), node.node_id},
  };
}

absl::StatusOr<std::string> RedisDirectory::OwnNodeId(absl::string_view op) const {
  if (!node_.has_value()) {
    return MakeError(ErrorCode::kInvalidArgument, absl::StrFormat("directory %s before RegisterNode", op));
  }
  return node_->node_id;
}

void RedisDirectory::NoteGarbage(absl::string_view what) {
  const uint64_t count = counters_.garbage_values.fetch_add(1) + 1;
  if (count <= 10 || count % 1000 == 0) {
    LOG(WARNING) << "directory: skipped malformed data from redis " << options_.address << ": " << what << " (" << count
                 << " so far)";
  }
}

void RedisDirectory::SetReconnectCallback(std::function<void()> callback) {
  MutexLock lock(&mu_);
  reconnect_callback_ = std::move(callback);
}

void RedisDirectory::FireReconnectCallbackIfPending() {
  std::function<void()> callback;
  {
    MutexLock lock(&mu_);
    if (!reconnect_pending_) return;
    reconnect_pending_ = false;
    callback = reconnect_callback_;
  }
  if (callback) callback();
}

RedisDirectoryStats RedisDirectory::stats() const { return counters_.Snapshot(); }

}  // namespace rplasma
