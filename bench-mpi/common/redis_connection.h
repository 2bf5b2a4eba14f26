// RedisConnection: an owned hiredis context for the benchmarks' Redis peer measurements (SET/GET
// against the redis-server that bench-mpi/common/redis_server.h starts).
#ifndef RPLASMA_BENCH_MPI_COMMON_REDIS_CONNECTION_H_
#define RPLASMA_BENCH_MPI_COMMON_REDIS_CONNECTION_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/strings/string_view.h"

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

 private:
  explicit RedisConnection(redisContext* context) : context_(context) {}
  redisContext* context_ = nullptr;
};

}  // namespace rplasma::bench

#endif  // RPLASMA_BENCH_MPI_COMMON_REDIS_CONNECTION_H_
