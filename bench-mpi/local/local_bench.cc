#include "bench-mpi/local/local_bench.h"

#include <algorithm>
#include <fstream>
#include <memory>
#include <optional>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

#include "bench-mpi/common/redis_connection.h"
#include "bench-mpi/common/result_reporter.h"
#include "bench-mpi/common/size_units.h"
#include "bench-mpi/launch/redis_server.h"
#include "bench-mpi/launch/store_process.h"
#include "bench-mpi/local/memory_overhead.h"
#include "bench-mpi/local/peer_benchmarks.h"
#include "bench-mpi/local/store_benchmarks.h"
#include "client/client.h"
#include "protocol/base/status.h"

namespace rplasma::bench {
namespace {

// Object size of the memory-overhead run: "tiny", the smallest size a benchmark usually uses.
constexpr uint64_t kOverheadObjectSize = 16;
// Batch get runs only where a whole batch stays small next to the arena.
constexpr uint64_t kMaxBatchBytes = 256u << 20;

// Keeps the first error; prints every one.
class ErrorLog {
 public:
  explicit ErrorLog(std::ostream& out) : out_(out) {}
  void Note(const absl::Status& status) {
    if (status.ok()) return;
    out_ << "  error: " << status.message() << "\n";
    if (first_.ok()) first_ = status;
  }
  const absl::Status& first() const { return first_; }

 private:
  std::ostream& out_;
  absl::Status first_;
};

absl::StatusOr<std::unique_ptr<RedisServer>> MaybeStartRedis(const LocalBenchOptions& options, std::ostream& out) {
  if (options.redis == RedisMode::kOff || !options.Selected("set_get")) return nullptr;
  if (options.redis == RedisMode::kAuto && RedisServer::FindBinary().empty()) {
    out << "redis-server not installed: the Redis peer is skipped (--redis to insist)\n";
    return nullptr;
  }
  RedisServerOptions redis_options;
  const uint64_t largest = *std::max_element(options.sizes.begin(), options.sizes.end());
  redis_options.max_value_bytes = std::max<uint64_t>(redis_options.max_value_bytes, largest);
  return RedisServer::Start(redis_options);
}

// The first three fields of /proc/loadavg, "?" if unreadable.
std::string LoadAverage() {
  std::ifstream in("/proc/loadavg");
  std::string one, five, fifteen;
  if (!(in >> one >> five >> fifteen)) return "?";
  return absl::StrCat(one, " ", five, " ", fifteen);
}

}  // namespace

absl::Status RunLocalBench(const LocalBenchOptions& options, std::ostream& out) {
  RETURN_IF_ERROR(options.Validate());
  std::unique_ptr<StoreProcess> own_store;
  std::string socket = options.store_socket;
  if (socket.empty()) {
    StoreProcessOptions store_options;
    store_options.memory = options.memory_bytes != 0 ? options.memory_bytes : options.DefaultMemoryBytes();
    out << absl::StrFormat("starting rplasma-store with a %s arena\n", FormatByteSize(store_options.memory));
    ASSIGN_OR_RETURN(own_store, StoreProcess::Start(store_options));
    socket = own_store->socket_path();
  }
  ASSIGN_OR_RETURN(pid_t store_pid, UnixSocketPeerPid(socket));
  ASSIGN_OR_RETURN(std::unique_ptr<RedisServer> redis_server, MaybeStartRedis(options, out));
  std::optional<RedisConnection> redis;
  if (redis_server != nullptr) {
    ASSIGN_OR_RETURN(redis, RedisConnection::Connect(redis_server->host(), redis_server->port()));
    out << "redis-server (peer) on " << redis_server->address() << "\n";
  }
  ClientOptions client_options;
  client_options.store_socket = socket;
  client_options.client_name = "rplasma-bench";
  ASSIGN_OR_RETURN(std::unique_ptr<Client> client, Client::Connect(client_options));
  ASSIGN_OR_RETURN(std::unique_ptr<ResultReporter> reporter, ResultReporter::Create(options.csv_path, &out));

  std::vector<std::string> size_names;
  for (uint64_t size : options.sizes) size_names.push_back(FormatByteSize(size));
  out << absl::StrFormat("store %s (pid %d), arena %s; sizes %s; up to %d iterations or %s each\n",
                         client->store_name(), store_pid, FormatByteSize(client->arena_size()),
                         absl::StrJoin(size_names, ","), options.iterations, absl::FormatDuration(options.duration));
  out << absl::StrFormat("machine: %d cpus, load average %s (other processes skew every number)\n\n",
                         std::thread::hardware_concurrency(), LoadAverage());

  LoopLimits limits;
  limits.iterations = options.iterations;
  limits.duration = options.duration;
  limits.min_iterations = LocalBenchOptions::kMinIterations;
  ErrorLog errors(out);

  // Each peer runs right next to the rplasma benchmark it is compared with, so that load from
  // other processes on a shared machine hits both sides of a ratio alike.
  StoreBenchContext ctx{client.get(), reporter.get(), limits, options.batch};
  for (int64_t round = 1; round <= options.rounds; ++round) {
    if (options.rounds > 1) {
      out << absl::StrFormat("\n-- round %d of %d\n", round, options.rounds);
      reporter->SetTag("round", static_cast<double>(round));  // in each row's CSV detail
    }
    for (size_t i = 0; i < options.sizes.size(); ++i) {
      const uint64_t size = options.sizes[i];
      auto run = [&](const char* name, auto benchmark) {
        if (options.Selected(name)) errors.Note(benchmark());
      };
      run("copy", [&] { return RunMemcpy(limits, *reporter, size); });
      run("checksum", [&] { return RunChecksum(limits, *reporter, size); });
      run("copy_checksum", [&] { return RunCopyChecksum(limits, *reporter, size); });
      run("create_write_seal", [&] { return RunCreateWriteSeal(ctx, size); });
      run("put", [&] { return RunPut(ctx, size); });
      if (i == 0) {
        run("ping_pong", [&] { return RunUnixPingPong(limits, *reporter, PingPongPeer::kThread); });
        run("ping_pong", [&] { return RunUnixPingPong(limits, *reporter, PingPongPeer::kEpollThread); });
        run("ping_pong", [&] { return RunUnixPingPong(limits, *reporter, PingPongPeer::kProcess); });
      }
      run("get", [&] { return RunGetRelease(ctx, size); });
      if (size * static_cast<uint64_t>(options.batch) <= kMaxBatchBytes) {
        run("batch_get", [&] { return RunBatchGet(ctx, size); });
      }
      if (redis.has_value() && size <= redis_server->max_value_bytes()) {
        run("set_get", [&] { return RunRedisSetGet(limits, *reporter, *redis, size); });
      }
      run("create_seal_get", [&] { return RunCreateSealGet(ctx, size); });
    }
    // Once, in the last round: a million objects take a while and their memory does not vary.
    if (round == options.rounds && options.objects_overhead > 0 && options.Selected("memory_per_object")) {
      errors.Note(RunMemoryOverhead(*client, store_pid, options.objects_overhead, kOverheadObjectSize, *reporter));
    }
  }

  if (!options.csv_path.empty()) {
    out << "\nCSV: " << options.csv_path << " (judged against the targets by scripts/bench-targets.py)\n";
  }
  return errors.first();
}

}  // namespace rplasma::bench
