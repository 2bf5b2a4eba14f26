#include "manager/directory/redis_connection.h"

#include <sys/time.h>
#include <sys/un.h>

#include <utility>

#include "absl/algorithm/container.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include <hiredis/hiredis.h>

#include "protocol/base/status.h"

namespace rplasma {
namespace {

constexpr size_t kMaxHostLength = 255;

timeval TimeoutToTimeval(absl::Duration d) {
  timeval tv = absl::ToTimeval(d);
  if (tv.tv_sec == 0 && tv.tv_usec == 0) tv.tv_usec = 1;  // hiredis treats 0 as "no timeout"
  return tv;
}

absl::Status BadAddress(absl::string_view address, absl::string_view why) {
  return MakeError(ErrorCode::kInvalidArgument,
                   absl::StrFormat("redis address \"%s\": %s (want host:port or unix:/path)",
                                   absl::CHexEscape(address.substr(0, 300)), why));
}

}  // namespace

absl::StatusOr<RedisAddress> ParseRedisAddress(absl::string_view address) {
  RedisAddress parsed;
  if (absl::ConsumePrefix(&address, "unix:")) {
    if (address.empty() || address[0] != '/') return BadAddress(address, "socket path must be absolute");
    if (address.size() >= sizeof(sockaddr_un::sun_path)) return BadAddress(address, "socket path too long");
    if (address.find('\0') != absl::string_view::npos) return BadAddress(address, "NUL in socket path");
    parsed.unix_path = std::string(address);
    return parsed;
  }
  absl::string_view host;
  absl::string_view port;
  if (absl::StartsWith(address, "[")) {
    size_t close = address.find(']');
    if (close == absl::string_view::npos || close + 1 >= address.size() || address[close + 1] != ':') {
      return BadAddress(address, "unterminated [IPv6] host or missing port");
    }
    host = address.substr(1, close - 1);
    port = address.substr(close + 2);
  } else {
    size_t colon = address.rfind(':');
    if (colon == absl::string_view::npos) return BadAddress(address, "missing :port");
    host = address.substr(0, colon);
    port = address.substr(colon + 1);
  }
  if (host.empty() || host.size() > kMaxHostLength) return BadAddress(address, "bad host length");
  for (char c : host) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != ':' && c != '_' &&
        c != '%') {
      return BadAddress(address, "bad character in host");
    }
  }
  int port_number = 0;
  if (port.empty() || port.size() > 5 || !absl::c_all_of(port, [](char c) { return absl::ascii_isdigit(c); }) ||
      !absl::SimpleAtoi(port, &port_number) || port_number < 1 || port_number > 65535) {
    return BadAddress(address, "port must be 1..65535");
  }
  parsed.host = std::string(host);
  parsed.port = port_number;
  return parsed;
}

void RedisConnection::ContextDeleter::operator()(redisContext* context) const { redisFree(context); }

RedisConnection::RedisConnection(std::string address, redisContext* context, const Clock& clock)
    : address_(std::move(address)), context_(context), clock_(clock) {}

RedisConnection::~RedisConnection() = default;

absl::StatusOr<std::unique_ptr<RedisConnection>> RedisConnection::Connect(absl::string_view address,
                                                                          absl::Duration timeout, const Clock& clock) {
  ASSIGN_OR_RETURN(RedisAddress parsed, ParseRedisAddress(address));
  const timeval tv = TimeoutToTimeval(timeout);
  redisContext* raw = parsed.unix_path.empty() ? redisConnectWithTimeout(parsed.host.c_str(), parsed.port, tv)
                                               : redisConnectUnixWithTimeout(parsed.unix_path.c_str(), tv);
  if (raw == nullptr) {
    return MakeError(ErrorCode::kUnavailable, absl::StrFormat("connect(redis %s): out of memory", address));
  }
  std::unique_ptr<RedisConnection> connection(new RedisConnection(std::string(address), raw, clock));
  if (raw->err != 0) {
    return MakeError(ErrorCode::kUnavailable, absl::StrFormat("connect(redis %s): %s", address, raw->errstr));
  }
  if (redisSetTimeout(raw, tv) != REDIS_OK) {
    return MakeError(ErrorCode::kUnavailable,
                     absl::StrFormat("connect(redis %s): cannot set timeout: %s", address, raw->errstr));
  }
  connection->socket_timeout_ = timeout;
  LimitRedisArrays(raw->reader);
  if (parsed.unix_path.empty()) redisEnableKeepAlive(raw);  // best effort; a failure is harmless
  return connection;
}

absl::Status RedisConnection::Fail(absl::string_view what) {
  broken_ = true;
  const std::string detail = context_->err != 0 ? RedisReadErrorText(context_->errstr) : "no detail";
  return MakeError(ErrorCode::kUnavailable, absl::StrFormat("redis %s: %s: %s", address_, what, detail));
}

absl::StatusOr<std::vector<RedisReply>> RedisConnection::Pipeline(absl::Span<const RedisCommand> commands,
                                                                  absl::Time deadline) {
  RETURN_IF_ERROR(Send(commands, deadline));
  return Receive(commands, deadline);
}

absl::Status RedisConnection::LimitTo(absl::Time deadline, absl::string_view what) {
  // Socket reads and writes may not outlast the deadline of the whole pipeline.
  const absl::Duration budget = deadline - clock_.Now();
  if (budget <= absl::ZeroDuration()) {
    broken_ = true;
    return MakeError(ErrorCode::kUnavailable, absl::StrFormat("redis %s: deadline passed before %s", address_, what));
  }
  // Whole milliseconds, rounded down: a caller's deadlines are mostly "now + its timeout", so one
  // value serves call after call, where setting it each time cost four setsockopts per pipeline.
  // A read or write then gives up at most 1 ms before the deadline, never after it.
  const absl::Duration timeout = budget <= absl::Milliseconds(1) ? budget : absl::Floor(budget, absl::Milliseconds(1));
  if (timeout == socket_timeout_) return absl::OkStatus();
  if (redisSetTimeout(context_.get(), TimeoutToTimeval(timeout)) != REDIS_OK) return Fail("set timeout");
  socket_timeout_ = timeout;
  return absl::OkStatus();
}

absl::Status RedisConnection::Send(absl::Span<const RedisCommand> commands, absl::Time deadline) {
  if (broken_) return MakeError(ErrorCode::kInternal, "RedisConnection::Send on a broken connection");
  RETURN_IF_ERROR(LimitTo(deadline, "sending"));
  // The whole pipeline in RESP, appended at once (hiredis would format and copy each command
  // through its own sds strings: half of a 1000-id lookup's time in this process).
  size_t bytes = 0;
  for (const RedisCommand& command : commands) {
    bytes += 16;
    for (const std::string& arg : command) bytes += arg.size() + 24;
  }
  std::string resp;
  resp.reserve(bytes);
  for (const RedisCommand& command : commands) {
    absl::StrAppend(&resp, "*", command.size(), "\r\n");
    for (const std::string& arg : command) absl::StrAppend(&resp, "$", arg.size(), "\r\n", arg, "\r\n");
  }
  if (redisAppendFormattedCommand(context_.get(), resp.data(), resp.size()) != REDIS_OK) {
    return Fail("append commands");
  }
  // Each write is bounded by the socket timeout; the deadline bounds them all.
  for (int done = 0; done == 0;) {
    if (redisBufferWrite(context_.get(), &done) != REDIS_OK) return Fail("send");
    if (done == 0 && clock_.Now() > deadline) {
      broken_ = true;  // part of the pipeline is out: the stream can no longer be matched to commands
      return MakeError(ErrorCode::kUnavailable,
                       absl::StrFormat("redis %s: pipeline of %d commands: deadline passed while sending", address_,
                                       commands.size()));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<RedisReply>> RedisConnection::Receive(absl::Span<const RedisCommand> commands,
                                                                 absl::Time deadline) {
  if (broken_) return MakeError(ErrorCode::kInternal, "RedisConnection::Receive on a broken connection");
  RETURN_IF_ERROR(LimitTo(deadline, "the replies"));
  std::vector<RedisReply> replies;
  replies.reserve(commands.size());
  for (size_t i = 0; i < commands.size(); ++i) {
    // Each read is bounded by the socket timeout; the deadline bounds the whole pipeline.
    if (i > 0 && clock_.Now() > deadline) {
      broken_ = true;  // replies still in flight: the stream can no longer be matched to commands
      return MakeError(ErrorCode::kUnavailable,
                       absl::StrFormat("redis %s: pipeline of %d commands: deadline passed after %d replies", address_,
                                       commands.size(), i));
    }
    void* reply = nullptr;
    if (redisGetReply(context_.get(), &reply) != REDIS_OK || reply == nullptr) {
      if (reply != nullptr) freeReplyObject(reply);
      return Fail(commands[i].empty() ? "read reply" : absl::StrFormat("read reply to %s", commands[i][0]));
    }
    replies.emplace_back(static_cast<redisReply*>(reply));
  }
  return replies;
}

}  // namespace rplasma
