// RedisConnection: an owned hiredis context for the benchmarks' Redis peer measurements (SET/GET,
// MSET/MGET against the redis-server that bench-mpi/launch/redis_server.h starts).
#ifndef RPLASMA_BENCH_MPI_COMMON_REDIS_CONNECTION_H_
#define RPLASMA_BENCH_MPI_COMMON_REDIS_CONNECTION_H_

#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"

struct redisContext;

namespace rplasma::bench {

// An open hiredis connection (blocking). Move-only; frees the context on destruction.
class RedisConnection {
 public:
  static absl::StatusOr<RedisConnection> Connect(const std::string& host, int port,
                                                 absl::Duration timeout = absl::Seconds(5));
  RedisConnection(RedisConnection&& other) noexcept;
  RedisConnection& operator=(RedisConnection&& other) noexcept;
  RedisConnection(const RedisConnection&) = delete;
  RedisConnection& operator=(const RedisConnection&) = delete;
  ~RedisConnection();

  redisContext* get() const { return context_; }
  // PING -> PONG.
  absl::Status Ping();
  // SET key value. The value may be binary.
  absl::Status Set(absl::string_view key, absl::string_view value);
  // GET key into `*value`; kObjectNotFound for a nil reply.
  absl::Status Get(absl::string_view key, std::string* value);
  // DEL key (ignores whether it existed).
  absl::Status Del(absl::string_view key);
  // MSET keys[0] values[0] keys[1] values[1] ... as one command. The caller keeps one command
  // under the server's client query buffer limit. REQUIRES: keys.size() == values.size() >= 1.
  absl::Status MSet(absl::Span<const std::string> keys, absl::Span<const std::string> values);
  // MGET keys as one command; calls visit(i, value of keys[i]) for each, in order, with the value
  // in hiredis' reply (valid during the call only: nothing is copied). kObjectNotFound naming the
  // first key that is nil. REQUIRES: keys non-empty.
  absl::Status MGet(absl::Span<const std::string> keys, absl::FunctionRef<void(size_t, absl::string_view)> visit);
  // DEL of every key in one command (ignores which existed). REQUIRES: keys non-empty.
  absl::Status DelAll(absl::Span<const std::string> keys);

 private:
  explicit RedisConnection(redisContext* context) : context_(context) {}
  redisContext* context_ = nullptr;
};

}  // namespace rplasma::bench

#endif  // RPLASMA_BENCH_MPI_COMMON_REDIS_CONNECTION_H_
