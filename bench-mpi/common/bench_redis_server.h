// BenchRedisServer: a private redis-server for the Redis peer measurements (and, in fetch mode,
// the directory), and RedisConnection, an owned hiredis context.
//
// Start() runs redis-server on 127.0.0.1 and a free port with no persistence (no RDB, no AOF),
// its working directory and log in a private ScratchDir, proto-max-bulk-len and the client query
// buffer limit raised to `max_value_bytes` so large values can be SET, and returns once it answers
// PING. Destruction stops it. Not thread-safe.
#ifndef RPLASMA_BENCH_MPI_COMMON_BENCH_REDIS_SERVER_H_
#define RPLASMA_BENCH_MPI_COMMON_BENCH_REDIS_SERVER_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "bench-mpi/common/child_process.h"

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

struct BenchRedisServerOptions {
  std::string binary;                     // "" = redis-server from PATH, else /usr/bin/redis-server
  uint64_t max_value_bytes = 512u << 20;  // proto-max-bulk-len (Redis allows values up to this)
  absl::Duration start_timeout = absl::Seconds(10);

  absl::Status Validate() const;
};

class BenchRedisServer {
 public:
  // The redis-server binary, or "" if none is installed.
  static std::string FindBinary();
  // kUnavailable if the binary is missing or the server never answered PING (log quoted).
  static absl::StatusOr<std::unique_ptr<BenchRedisServer>> Start(const BenchRedisServerOptions& options);
  ~BenchRedisServer() = default;

  const std::string& host() const { return host_; }
  int port() const { return port_; }
  std::string address() const;  // "127.0.0.1:PORT"
  pid_t pid() const { return process_.pid(); }
  uint64_t max_value_bytes() const { return max_value_bytes_; }

 private:
  BenchRedisServer() = default;
  absl::Status SpawnAndWait(const BenchRedisServerOptions& options, const std::string& binary);

  ScratchDir dir_;
  std::string host_ = "127.0.0.1";
  int port_ = 0;
  uint64_t max_value_bytes_ = 0;
  ChildProcess process_;
};

// A loopback TCP port that was free a moment ago (bind port 0, read it, close).
absl::StatusOr<int> PickFreeLoopbackPort();

}  // namespace rplasma::bench

#endif  // RPLASMA_BENCH_MPI_COMMON_BENCH_REDIS_SERVER_H_
