// RedisServer: a private, throw-away `redis-server` for integration tests.
//
// Start() runs the real binary on 127.0.0.1 and a free port, without persistence (no RDB, no AOF),
// with its working directory and log in a private TempDir, and returns once it answers PING.
// Kill() SIGKILLs it (a crash, not a shutdown); Restart() starts a fresh one on the same port, so
// clients can reconnect to the address they already know. Destruction kills and reaps the process.
//
// When redis-server is not installed, tests skip:
//   RPLASMA_SKIP_IF_NO_REDIS_SERVER();
//   ASSERT_OK_AND_ASSIGN(auto redis, RedisServer::Start());
//   ... redis->address() ...   // "127.0.0.1:PORT"
//
// Thread-safety: not thread-safe; use from the test's main thread.
#ifndef RPLASMA_TESTS_SUPPORT_REDIS_SERVER_H_
#define RPLASMA_TESTS_SUPPORT_REDIS_SERVER_H_

#include <sys/types.h>

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

namespace rplasma::testing {

struct RedisServerOptions {
  // Path of the redis-server binary; "" = FindBinary().
  std::string binary;
  // How long Start()/Restart() wait for the server to answer PING.
  absl::Duration start_timeout = absl::Seconds(10);
  // Extra command-line arguments appended after ours (e.g. {"--maxclients", "16"}).
  std::vector<std::string> extra_args;
};

class RedisServer {
 public:
  // The redis-server binary from PATH, else /usr/bin/redis-server; "" if neither exists.
  static std::string FindBinary();

  // Starts a server on a free loopback port. kUnavailable if the binary is missing or the server
  // does not answer PING within start_timeout (its log is quoted in the message).
  static absl::StatusOr<std::unique_ptr<RedisServer>> Start(const RedisServerOptions& options = {});

  ~RedisServer();
  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;

  // "127.0.0.1:PORT" (stays the same across Restart()).
  const std::string& address() const { return address_; }
  const std::string& host() const { return host_; }
  int port() const { return port_; }
  // Pid of the running server, -1 after Kill().
  pid_t pid() const;
  bool running();

  // SIGKILL + reap. No-op if not running.
  void Kill();
  // Kills the server if running, then starts a new, empty one on the same port and waits for PING.
  absl::Status Restart();
  // One PING round trip on a fresh connection: true if "+PONG" came back within `timeout`.
  bool Ping(absl::Duration timeout = absl::Milliseconds(500)) const;

  // Path of the server's log file (stdout+stderr), for diagnostics.
  std::string log_path() const { return dir_->Join("redis.log"); }

 private:
  RedisServer(RedisServerOptions options, std::string binary);
  // Spawns on port_ and waits for PING; kUnavailable (with the log tail) on failure.
  absl::Status SpawnAndWait();

  RedisServerOptions options_;
  std::string binary_;
  std::unique_ptr<TempDir> dir_;
  std::string host_ = "127.0.0.1";
  int port_ = 0;
  std::string address_;
  std::optional<Subprocess> process_;
};

}  // namespace rplasma::testing

// Skips the current test (with the reason) when no redis-server binary is installed.
#define RPLASMA_SKIP_IF_NO_REDIS_SERVER()                                                   \
  if (::rplasma::testing::RedisServer::FindBinary().empty())                               \
  GTEST_SKIP() << "redis-server not found in PATH or /usr/bin/redis-server; "              \
                  "install the redis-server package to run this test"

#endif  // RPLASMA_TESTS_SUPPORT_REDIS_SERVER_H_
