#include "bench-mpi/common/redis_connection.h"

#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include <hiredis/hiredis.h>

#include "protocol/base/status.h"

namespace rplasma::bench {
namespace {

struct ReplyDeleter {
  void operator()(redisReply* r) const { freeReplyObject(r); }
};
using ReplyPtr = std::unique_ptr<redisReply, ReplyDeleter>;

absl::Status ContextError(redisContext* c, absl::string_view op) {
  return MakeError(ErrorCode::kUnavailable,
                   absl::StrFormat("redis %s: %s", op, c->errstr[0] != '\0' ? c->errstr : "no reply"));
}

// A command with the words of `argv` (binary-safe), e.g. {"MGET", key1, key2, ...}.
ReplyPtr CommandArgv(redisContext* c, const std::vector<absl::string_view>& argv) {
  std::vector<const char*> words;
  std::vector<size_t> lengths;
  words.reserve(argv.size());
  lengths.reserve(argv.size());
  for (absl::string_view word : argv) {
    words.push_back(word.data());
    lengths.push_back(word.size());
  }
  return ReplyPtr(
      static_cast<redisReply*>(redisCommandArgv(c, static_cast<int>(words.size()), words.data(), lengths.data())));
}

}  // namespace

absl::StatusOr<RedisConnection> RedisConnection::Connect(const std::string& host, int port, absl::Duration timeout) {
  timeval tv = absl::ToTimeval(timeout);
  redisContext* c = redisConnectWithTimeout(host.c_str(), port, tv);
  if (c == nullptr) return MakeError(ErrorCode::kUnavailable, "redisConnect: out of memory");
  RedisConnection connection(c);
  if (c->err != 0) return ContextError(c, absl::StrFormat("connect(%s:%d)", host, port));
  return connection;
}

RedisConnection::RedisConnection(RedisConnection&& other) noexcept : context_(std::exchange(other.context_, nullptr)) {}

RedisConnection& RedisConnection::operator=(RedisConnection&& other) noexcept {
  if (this != &other) {
    if (context_ != nullptr) redisFree(context_);
    context_ = std::exchange(other.context_, nullptr);
  }
  return *this;
}

RedisConnection::~RedisConnection() {
  if (context_ != nullptr) redisFree(context_);
}

absl::Status RedisConnection::Ping() {
  ReplyPtr r(static_cast<redisReply*>(redisCommand(context_, "PING")));
  if (!r) return ContextError(context_, "PING");
  if (r->type != REDIS_REPLY_STATUS || absl::string_view(r->str, r->len) != "PONG") {
    return MakeError(ErrorCode::kUnavailable, "redis PING: unexpected reply");
  }
  return absl::OkStatus();
}

absl::Status RedisConnection::Set(absl::string_view key, absl::string_view value) {
  ReplyPtr r(static_cast<redisReply*>(
      redisCommand(context_, "SET %b %b", key.data(), key.size(), value.data(), value.size())));
  if (!r) return ContextError(context_, "SET");
  if (r->type == REDIS_REPLY_ERROR) {
    return MakeError(ErrorCode::kInvalidArgument, absl::StrCat("redis SET: ", absl::string_view(r->str, r->len)));
  }
  return absl::OkStatus();
}

absl::Status RedisConnection::Get(absl::string_view key, std::string* value) {
  ReplyPtr r(static_cast<redisReply*>(redisCommand(context_, "GET %b", key.data(), key.size())));
  if (!r) return ContextError(context_, "GET");
  if (r->type == REDIS_REPLY_NIL) return ObjectNotFoundError(absl::StrCat("redis GET ", key, ": nil"));
  if (r->type != REDIS_REPLY_STRING) {
    return MakeError(ErrorCode::kProtocolError, "redis GET: reply is not a string");
  }
  value->assign(r->str, r->len);
  return absl::OkStatus();
}

absl::Status RedisConnection::Del(absl::string_view key) {
  ReplyPtr r(static_cast<redisReply*>(redisCommand(context_, "DEL %b", key.data(), key.size())));
  if (!r) return ContextError(context_, "DEL");
  return absl::OkStatus();
}

absl::Status RedisConnection::MSet(absl::Span<const std::string> keys, absl::Span<const std::string> values) {
  if (keys.empty() || keys.size() != values.size()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     absl::StrFormat("redis MSET: %d keys, %d values", keys.size(), values.size()));
  }
  std::vector<absl::string_view> argv = {"MSET"};
  argv.reserve(1 + 2 * keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    argv.push_back(keys[i]);
    argv.push_back(values[i]);
  }
  ReplyPtr r = CommandArgv(context_, argv);
  if (!r) return ContextError(context_, "MSET");
  if (r->type == REDIS_REPLY_ERROR) {
    return MakeError(ErrorCode::kInvalidArgument, absl::StrCat("redis MSET: ", absl::string_view(r->str, r->len)));
  }
  return absl::OkStatus();
}

absl::Status RedisConnection::MGet(absl::Span<const std::string> keys,
                                   absl::FunctionRef<void(size_t, absl::string_view)> visit) {
  if (keys.empty()) return MakeError(ErrorCode::kInvalidArgument, "redis MGET: no keys");
  std::vector<absl::string_view> argv = {"MGET"};
  argv.insert(argv.end(), keys.begin(), keys.end());
  ReplyPtr r = CommandArgv(context_, argv);
  if (!r) return ContextError(context_, "MGET");
  if (r->type != REDIS_REPLY_ARRAY || r->elements != keys.size()) {
    return MakeError(ErrorCode::kProtocolError,
                     absl::StrFormat("redis MGET of %d keys: reply is not an array of %d", keys.size(), keys.size()));
  }
  for (size_t i = 0; i < keys.size(); ++i) {
    const redisReply* value = r->element[i];
    if (value->type == REDIS_REPLY_NIL) return ObjectNotFoundError(absl::StrCat("redis MGET ", keys[i], ": nil"));
    if (value->type != REDIS_REPLY_STRING) {
      return MakeError(ErrorCode::kProtocolError, absl::StrCat("redis MGET ", keys[i], ": not a string"));
    }
    visit(i, absl::string_view(value->str, value->len));
  }
  return absl::OkStatus();
}

absl::Status RedisConnection::DelAll(absl::Span<const std::string> keys) {
  if (keys.empty()) return MakeError(ErrorCode::kInvalidArgument, "redis DEL: no keys");
  std::vector<absl::string_view> argv = {"DEL"};
  argv.insert(argv.end(), keys.begin(), keys.end());
  ReplyPtr r = CommandArgv(context_, argv);
  if (!r) return ContextError(context_, "DEL");
  return absl::OkStatus();
}

}  // namespace rplasma::bench
