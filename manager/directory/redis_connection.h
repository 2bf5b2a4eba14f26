// RedisConnection: one blocking hiredis connection (RAII owner of the redisContext) that sends
// pipelines of commands. A connection that saw an I/O error, a timeout or a protocol error is
// broken for good: the owner drops it and connects anew (RedisDirectory does, with backoff).
//
// Addresses: "host:port" (host may be a name, an IPv4 literal or a [bracketed] IPv6 literal) or
// "unix:/path/to/socket".
//
// Thread-safety: not thread-safe; the owner serializes calls.
#ifndef RPLASMA_MANAGER_DIRECTORY_REDIS_CONNECTION_H_
#define RPLASMA_MANAGER_DIRECTORY_REDIS_CONNECTION_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"

#include "manager/directory/redis_reply.h"
#include "protocol/base/clock.h"

struct redisContext;  // hiredis

namespace rplasma {

struct RedisAddress {
  std::string host;       // TCP host (brackets of an IPv6 literal removed); "" for a Unix socket
  int port = 0;           // 1..65535 for TCP
  std::string unix_path;  // non-empty for a Unix socket
};

// Parses "host:port" or "unix:/path"; kInvalidArgument naming the address otherwise.
absl::StatusOr<RedisAddress> ParseRedisAddress(absl::string_view address);

// One command: its arguments, binary-safe ("HSET", key, field, value).
using RedisCommand = std::vector<std::string>;

class RedisConnection {
 public:
  // Connects within `timeout`. kUnavailable naming the address if Redis does not accept the
  // connection. Pipeline deadlines are read on `clock`, which must outlive the connection.
  static absl::StatusOr<std::unique_ptr<RedisConnection>> Connect(absl::string_view address, absl::Duration timeout,
                                                                  const Clock& clock = Clock::Real());
  ~RedisConnection();
  RedisConnection(const RedisConnection&) = delete;
  RedisConnection& operator=(const RedisConnection&) = delete;

  // Sends every command in one write and reads one reply per command, in order. Redis error
  // replies (WRONGTYPE, ...) are returned as replies, not as a failed status. A failed status
  // (kUnavailable) means the connection broke or `deadline` passed before all replies came back:
  // the connection is then broken() and must be dropped.
  // REQUIRES: !broken().
  absl::StatusOr<std::vector<RedisReply>> Pipeline(absl::Span<const RedisCommand> commands, absl::Time deadline);

  // Pipeline in two halves, so that one caller can have pipelines in flight to several servers
  // at once: Send writes every command (kUnavailable and broken() if it cannot by `deadline`);
  // Receive then reads their replies (`commands` are those just sent), like Pipeline.
  // REQUIRES: !broken(); Receive only right after a successful Send of `commands`.
  absl::Status Send(absl::Span<const RedisCommand> commands, absl::Time deadline);
  absl::StatusOr<std::vector<RedisReply>> Receive(absl::Span<const RedisCommand> commands, absl::Time deadline);

  bool broken() const { return broken_; }
  const std::string& address() const { return address_; }

 private:
  struct ContextDeleter {
    void operator()(redisContext* context) const;
  };
  RedisConnection(std::string address, redisContext* context, const Clock& clock);
  absl::Status Fail(absl::string_view what);
  // Bounds the socket's reads and writes by what is left until `deadline` (in whole milliseconds,
  // set only when that changes); kUnavailable (and broken) if nothing is left.
  absl::Status LimitTo(absl::Time deadline, absl::string_view what);

  std::string address_;
  std::unique_ptr<redisContext, ContextDeleter> context_;
  const Clock& clock_;
  bool broken_ = false;
  absl::Duration socket_timeout_ = absl::ZeroDuration();  // what LimitTo last gave the socket
};

}  // namespace rplasma

#endif  // RPLASMA_MANAGER_DIRECTORY_REDIS_CONNECTION_H_
