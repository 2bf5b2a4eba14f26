// RedisServer: a private, throw-away redis-server — the one redis launcher, for the benchmarks
// (Redis peer measurements, the directory of fetch runs) and the integration tests
// (tests/support/skip.h has RPLASMA_SKIP_IF_NO_REDIS_SERVER for tests).
//
// Start() runs the real binary on 127.0.0.1 and a free port, without persistence (no RDB, no AOF),
// with its working directory and log in a private ScratchDir, proto-max-bulk-len and the client
// query buffer limit raised to `max_value_bytes` so large values can be SET, and returns once it
// answers PING. Kill() SIGKILLs it (a crash, not a shutdown); Restart() starts a fresh one on the
// same port, so clients can reconnect to the address they already know. Destruction kills and
// reaps the process.
//
// Thread-safety: not thread-safe; use from the thread that started it.
#ifndef RPLASMA_BENCH_MPI_LAUNCH_REDIS_SERVER_H_
#define RPLASMA_BENCH_MPI_LAUNCH_REDIS_SERVER_H_

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

#include "bench-mpi/launch/child_process.h"

namespace rplasma::bench {

struct RedisServerOptions {
  // Path of the redis-server binary; "" = FindBinary().
  std::string binary;
  // How long Start()/Restart() wait for the server to answer PING.
  absl::Duration start_timeout = absl::Seconds(10);
  // Extra command-line arguments appended after ours (e.g. {"--maxclients", "16"}).
  std::vector<std::string> extra_args;
  // proto-max-bulk-len (Redis' own default); the client query buffer limit is this plus 1 MiB, so
  // a SET of the largest value fits with the command around it.
  uint64_t max_value_bytes = 512u << 20;

  absl::Status Validate() const;
};

class RedisServer {
 public:
  // The redis-server binary from PATH, else /usr/bin/redis-server; "" if neither exists.
  static std::string FindBinary();

  // Starts a server on a free loopback port. kUnavailable if the binary is missing or the server
  // does not answer PING within start_timeout (its log is quoted in the message).
  static absl::StatusOr<std::unique_ptr<RedisServer>> Start(const RedisServerOptions& options = {});

  ~RedisServer() = default;
  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;

  // "127.0.0.1:PORT" (stays the same across Restart()).
  const std::string& address() const { return address_; }
  const std::string& host() const { return host_; }
  int port() const { return port_; }
  uint64_t max_value_bytes() const { return options_.max_value_bytes; }
  // Pid of the running server, -1 after Kill().
  pid_t pid() const { return process_.pid(); }
  bool running() { return process_.running(); }

  // SIGKILL + reap. No-op if not running.
  void Kill() { process_.Kill(); }
  // Kills the server if running, then starts a new, empty one on the same port and waits for PING.
  absl::Status Restart();
  // One PING round trip on a fresh connection: true if "+PONG" came back within `timeout`.
  bool Ping(absl::Duration timeout = absl::Milliseconds(500)) const;
  // One command on a fresh connection (for setting up and inspecting a server in tests, without
  // hiredis): the text of a status, integer or bulk string reply ("" for nil). An error reply is
  // kProtocolError with its text; an array reply, no answer within `timeout` or a reply over
  // 1 MiB is kUnavailable.
  absl::StatusOr<std::string> Command(const std::vector<std::string>& args,
                                      absl::Duration timeout = absl::Seconds(2)) const;

  // Path of the server's log file (stdout+stderr), for diagnostics.
  std::string log_path() const { return dir_.Join("redis.log"); }

 private:
  RedisServer(RedisServerOptions options, std::string binary)
      : options_(std::move(options)), binary_(std::move(binary)) {}
  // Spawns on port_ and waits for PING; kUnavailable (with the log tail) on failure.
  absl::Status SpawnAndWait();

  RedisServerOptions options_;
  std::string binary_;
  ScratchDir dir_;
  std::string host_ = "127.0.0.1";
  int port_ = 0;
  std::string address_;
  ChildProcess process_;
};

// A loopback TCP port that was free a moment ago (bind port 0, read it, close).
absl::StatusOr<int> PickFreeLoopbackPort();

}  // namespace rplasma::bench

#endif  // RPLASMA_BENCH_MPI_LAUNCH_REDIS_SERVER_H_
