#include "bench-mpi/local/fetch_bench.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <memory>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

#include "bench-mpi/common/measure_loop.h"
#include "bench-mpi/common/redis_connection.h"
#include "bench-mpi/common/result_reporter.h"
#include "bench-mpi/common/size_units.h"
#include "bench-mpi/common/tcp_stream_peer.h"
#include "bench-mpi/launch/manager_launcher.h"
#include "bench-mpi/launch/redis_server.h"
#include "bench-mpi/launch/store_process.h"
#include "bench-mpi/local/batch_fetch_bench.h"
#include "client/client.h"
#include "manager/directory/redis_directory.h"
#include "nlohmann/json.hpp"
#include "protocol/base/object_id.h"
#include "protocol/base/socket_io.h"
#include "protocol/base/status.h"
#include "protocol/frame.h"
#include "protocol/manager_messages.h"

namespace rplasma::bench {
namespace {

// Objects of one size put on node A ahead of the timed fetches: at most this many bytes...
constexpr uint64_t kFetchPoolBytes = 512u << 20;
// ...and at most this many objects.
constexpr int64_t kMaxPool = 2000;
constexpr absl::Duration kFetchTimeout = absl::Seconds(30);
// How long a fresh object may take to show up in the directory before its fetch counts as failed.
constexpr absl::Duration kPublishWait = absl::Seconds(10);

int64_t PoolSize(const LocalBenchOptions& options, uint64_t size) {
  const int64_t by_bytes = static_cast<int64_t>(std::max<uint64_t>(1, kFetchPoolBytes / size));
  const int64_t wanted = options.iterations + LoopLimits().warmup + 1;
  return std::max<int64_t>(LocalBenchOptions::kMinIterations + LoopLimits().warmup + 1,
                           std::min({by_bytes, wanted, kMaxPool}));
}

// The peer protocol a fetch of `size` takes: with a numeric threshold it follows from the size;
// "auto" or a file decide per peer.
std::string ProtocolFor(const LocalBenchOptions& options, uint64_t size) {
  uint64_t threshold = 0;
  if (!absl::SimpleAtoi(options.pin_threshold, &threshold)) return "auto";
  return size <= threshold ? "get" : "pin";
}

// Physical memory not in use now (the arenas are shared memory the stores touch as they fill).
uint64_t AvailableRamBytes() {
  const long pages = ::sysconf(_SC_AVPHYS_PAGES);
  const long page = ::sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : 0;
}

// Fetches `id` on `client` (with `hint`, "" = none) once; the call's duration.
absl::StatusOr<int64_t> TimedFetch(Client& client, const ObjectID& id, const std::string& hint) {
  const int64_t t0 = NowNs();
  absl::Status status = client.Fetch({&id, 1}, kFetchTimeout, hint);
  const int64_t ns = NowNs() - t0;
  RETURN_IF_ERROR(status);
  return ns;
}

// `id` on `client`'s store holds `size` bytes of `fill`; then deleted there.
absl::Status CheckAndDelete(Client& client, const ObjectID& id, uint64_t size, uint8_t fill) {
  ASSIGN_OR_RETURN(ObjectBuffer got, client.GetOne(id));
  if (got.data().size() != size || got.data()[0] != fill || got.data()[size - 1] != fill) {
    return MakeError(ErrorCode::kInternal, absl::StrFormat("fetched object of %d bytes differs", size));
  }
  RETURN_IF_ERROR(got.Release());
  return client.Delete({&id, 1});
}

// One size's single-object rows, all measured in the same iterations (the order rotates), so a
// change in the machine's speed hits them alike: the raw TCP round trip of `size` bytes, a Redis
// GET of a value of `size` bytes, and rplasma's cold, warm and hinted fetches (fetch_bench.h).
absl::Status RunFetchSize(const LocalBenchOptions& options, const LoopLimits& limits, FetchNode& a, FetchNode& b,
                          TcpStreamClient& stream, RedisConnection& redis, uint64_t size, ResultReporter& reporter) {
  const std::vector<uint8_t> bytes(size, 0x3c);
  const std::vector<uint8_t> fresh_bytes(size, 0x5a);
  std::vector<uint8_t> destination(size, 0);
  const std::string key = absl::StrCat("rplasma-bench-fetch:", size);
  std::string value;
  const int64_t pool_size = PoolSize(options, size);
  std::vector<ObjectID> pool;
  ASSIGN_OR_RETURN(const std::string node_a, a.client->ManagerNodeId());
  absl::Status status = redis.Set(key, std::string(size, 'r'));
  for (int64_t i = 0; i < pool_size && status.ok(); ++i) {
    pool.push_back(ObjectID::Random());
    status = a.client->Put(pool.back(), bytes);
  }
  size_t next = 0;
  int64_t retries = 0;
  int64_t iteration = 0;
  enum { kStream, kGet, kCold, kWarm, kHinted, kKinds };
  LatencyRecorder recorders[kKinds];
  LoopLimits pool_limits = limits;
  pool_limits.iterations = std::min<int64_t>(limits.iterations, pool_size - limits.warmup);
  if (status.ok()) {
    status = RunLoop(pool_limits, [&](bool timed) -> absl::Status {
      const ObjectID& id = pool[next++];
      const ObjectID fresh = ObjectID::Random();
      int64_t ns[kKinds] = {};
      // The fetches keep their order (warm needs cold first); the peers go before, between or after.
      const int64_t shift = iteration++ % 3;
      for (int step = 0; step < 3; ++step) {
        const int64_t t0 = NowNs();
        if (step == shift) {
          RETURN_IF_ERROR(stream.Transfer(destination.data(), size));
          ns[kStream] = NowNs() - t0;
          const int64_t t1 = NowNs();
          RETURN_IF_ERROR(redis.Get(key, &value));
          ns[kGet] = NowNs() - t1;
          if (value.size() != size) return MakeError(ErrorCode::kInternal, "redis GET size");
        } else if (step == (shift + 1) % 3) {
          // Cold: an id put on A beforehand, never fetched here. Warm: the same id again, B's copy
          // gone: B's manager knows where it lives.
          ASSIGN_OR_RETURN(ns[kCold], FetchOnce(*b.client, id, &retries));
          RETURN_IF_ERROR(CheckAndDelete(*b.client, id, size, 0x3c));
          ASSIGN_OR_RETURN(ns[kWarm], TimedFetch(*b.client, id, ""));
          RETURN_IF_ERROR(CheckAndDelete(*b.client, id, size, 0x3c));
        } else {
          // Hinted: an id put on A just now (perhaps not published yet), fetched naming A.
          RETURN_IF_ERROR(a.client->Put(fresh, fresh_bytes));
          ASSIGN_OR_RETURN(ns[kHinted], TimedFetch(*b.client, fresh, node_a));
          RETURN_IF_ERROR(CheckAndDelete(*b.client, fresh, size, 0x5a));
          RETURN_IF_ERROR(a.client->Delete({&fresh, 1}));
        }
      }
      if (timed) {
        for (int k = 0; k < kKinds; ++k) recorders[k].Record(ns[k]);
      }
      return absl::OkStatus();
    });
  }
  absl::Status cleanup = a.client->Delete(pool);
  absl::Status cleanup_key = redis.Del(key);
  RETURN_IF_ERROR(status);
  RETURN_IF_ERROR(cleanup);
  RETURN_IF_ERROR(cleanup_key);
  const std::string protocol = ProtocolFor(options, size);
  RETURN_IF_ERROR(reporter.Add(MakeResult("stream", "tcp_stream", "tcp", "raw", size, recorders[kStream].Summarize())));
  BenchResult r = MakeResult("fetch", "rplasma", options.transport, protocol, size, recorders[kCold].Summarize());
  r.metrics = {{"publish_retries", static_cast<double>(retries)}};
  RETURN_IF_ERROR(reporter.Add(std::move(r)));
  RETURN_IF_ERROR(reporter.Add(
      MakeResult("fetch_warm", "rplasma", options.transport, protocol, size, recorders[kWarm].Summarize())));
  RETURN_IF_ERROR(reporter.Add(
      MakeResult("fetch_hinted", "rplasma", options.transport, protocol, size, recorders[kHinted].Summarize())));
  return reporter.Add(MakeResult("get", "redis", "tcp", "resp", size, recorders[kGet].Summarize()));
}

// The manager's stats JSON (counters and per-fetch phase timings) from its client socket.
absl::StatusOr<std::string> ManagerStatsJson(const std::string& socket) {
  ASSIGN_OR_RETURN(UniqueFd fd, UnixConnect(socket));
  RETURN_IF_ERROR(WriteFrame(fd.get(), EncodeManagerRequest(ManagerRequest{1, ManagerStatsRequest{}})));
  ASSIGN_OR_RETURN(std::string payload, ReadFrame(fd.get(), kMaxManagerFrameBytes, absl::Now() + absl::Seconds(10)));
  ASSIGN_OR_RETURN(ManagerReply reply, DecodeManagerReply(payload));
  RETURN_IF_ERROR(reply.status());
  const auto* stats = std::get_if<ManagerStatsReply>(&reply.body);
  if (stats == nullptr) return ProtocolError("manager stats: reply is not a StatsReply");
  return stats->json;
}

}  // namespace

absl::StatusOr<FetchNode> StartFetchNode(const std::string& name, uint64_t memory, const RedisServer& redis,
                                         const std::string& secret_file, const LocalBenchOptions& options,
                                         std::vector<std::string> store_args, std::vector<std::string> manager_args) {
  FetchNode node;
  StoreProcessOptions store_options;
  store_options.memory = memory;
  store_options.extra_args = std::move(store_args);
  ASSIGN_OR_RETURN(node.store, StoreProcess::Start(store_options));
  ManagerLaunchOptions manager_options;
  manager_options.store_socket = node.store->socket_path();
  manager_options.redis = redis.address();
  manager_options.secret_file = secret_file;
  manager_options.node_name = name;
  manager_options.transport = options.transport;
  manager_options.pin_threshold = options.pin_threshold;
  manager_options.listen_host = options.listen_host;
  manager_options.extra_args = options.manager_args;
  for (std::string& arg : manager_args) manager_options.extra_args.push_back(std::move(arg));
  ASSIGN_OR_RETURN(node.manager, LaunchedManager::Start(manager_options));
  ClientOptions client_options;
  client_options.store_socket = node.store->socket_path();
  client_options.manager_socket = node.manager->client_socket();
  client_options.client_name = "rplasma-bench-" + name;
  ASSIGN_OR_RETURN(node.client, Client::Connect(client_options));
  return node;
}

absl::StatusOr<int64_t> FetchOnce(Client& client, const ObjectID& id, int64_t* retries) {
  const absl::Time give_up = absl::Now() + kPublishWait;
  for (;;) {
    const int64_t t0 = NowNs();
    absl::Status status = client.Fetch({&id, 1}, kFetchTimeout);
    const int64_t t1 = NowNs();
    if (status.ok()) return t1 - t0;
    if (ErrorCodeOf(status) != ErrorCode::kObjectNotFound || absl::Now() > give_up) return status;
    ++*retries;
    absl::SleepFor(absl::Microseconds(200));
  }
}

absl::Status RunFetchBench(const LocalBenchOptions& options, std::ostream& out) {
  RETURN_IF_ERROR(options.Validate());
  const std::vector<uint64_t>& sizes = options.sizes;
  const uint64_t largest = *std::max_element(sizes.begin(), sizes.end());
  uint64_t pool_bytes = 0;
  for (uint64_t size : sizes) pool_bytes = std::max(pool_bytes, PoolSize(options, size) * ((size + 63) / 64 * 64));
  // A holds one size's single-fetch pool or, after it was deleted, one batch; B two of the largest
  // object or one batch (plus one object) — each with 64 MiB of slack.
  const uint64_t batch_arena = BatchArenaBytes(options);
  const uint64_t memory_a =
      (std::max(pool_bytes, batch_arena) + largest + (64u << 20) + (1u << 20) - 1) / (1u << 20) * (1u << 20);
  const uint64_t memory_b =
      (std::max(2 * largest, batch_arena + largest) + (64u << 20) + (1u << 20) - 1) / (1u << 20) * (1u << 20);
  if (const uint64_t available = AvailableRamBytes(); available > 0 && memory_a + memory_b > available) {
    return MakeError(ErrorCode::kOutOfMemory,
                     absl::StrFormat("arenas of %s (node A) and %s (node B) exceed the %s of free RAM; use smaller "
                                     "--sizes, --batch or --batch-bytes",
                                     FormatByteSize(memory_a), FormatByteSize(memory_b), FormatByteSize(available)));
  }

  ASSIGN_OR_RETURN(ScratchDir dir, ScratchDir::Create("rplasma-bench-fetch"));
  const std::string secret_file = dir.Join("secret");
  RETURN_IF_ERROR(WriteRandomSecret(secret_file));
  RedisServerOptions redis_options;
  redis_options.max_value_bytes = std::max<uint64_t>(redis_options.max_value_bytes, largest);
  ASSIGN_OR_RETURN(std::unique_ptr<RedisServer> redis_server, RedisServer::Start(redis_options));
  out << absl::StrFormat("redis-server (directory and peer) on %s; node A arena %s, node B arena %s\n",
                         redis_server->address(), FormatByteSize(memory_a), FormatByteSize(memory_b));
  ASSIGN_OR_RETURN(FetchNode a, StartFetchNode("a", memory_a, *redis_server, secret_file, options));
  ASSIGN_OR_RETURN(FetchNode b, StartFetchNode("b", memory_b, *redis_server, secret_file, options));
  ASSIGN_OR_RETURN(RedisConnection redis, RedisConnection::Connect(redis_server->host(), redis_server->port()));
  ASSIGN_OR_RETURN(const std::string node_a, a.client->ManagerNodeId());
  RedisDirectoryOptions directory_options;
  directory_options.address = redis_server->address();
  ASSIGN_OR_RETURN(std::unique_ptr<RedisDirectory> directory, RedisDirectory::Create(directory_options));
  ASSIGN_OR_RETURN(std::unique_ptr<TcpStreamServer> stream_server,
                   TcpStreamServer::Start(std::max(largest, LargestBatchBytes(options))));
  ASSIGN_OR_RETURN(TcpStreamClient stream, TcpStreamClient::Connect(stream_server->port()));
  ASSIGN_OR_RETURN(std::unique_ptr<ResultReporter> reporter, ResultReporter::Create(options.csv_path, &out));
  out << absl::StrFormat("fetch over %s, pin-threshold %s; up to %d iterations or %s each\n", options.transport,
                         options.pin_threshold, options.iterations, absl::FormatDuration(options.duration));
  if (options.batch > 1) {
    out << absl::StrFormat(
        "then per size a batch of %d objects (at most %s) in one Fetch, against Redis MGET and "
        "a TCP stream of the same bytes: %d rounds after a warm-up\n",
        options.batch, FormatByteSize(options.batch_bytes), options.rounds);
  }
  out << "\n";

  LoopLimits limits;
  limits.iterations = options.iterations;
  limits.duration = options.duration;
  limits.min_iterations = LocalBenchOptions::kMinIterations;
  absl::Status first_error;
  auto note = [&](absl::Status status) {
    if (status.ok()) return;
    out << "  error: " << status.message() << "\n";
    if (first_error.ok()) first_error = status;
  };
  for (uint64_t size : sizes) {
    note(RunFetchSize(options, limits, a, b, stream, redis, size, *reporter));
    if (options.batch > 1) {
      const BatchFetchPeers peers{a.client.get(), b.client.get(), directory.get(), &redis, &stream, node_a};
      note(RunBatchFetchSize(options, peers, size, ProtocolFor(options, size), *reporter, out));
    }
  }
  PrintBatchFetchTable(*reporter, out);
  absl::StatusOr<std::string> stats = ManagerStatsJson(b.manager->client_socket());
  if (stats.ok()) {
    // The per-protocol mean phases are the useful part on screen; the whole document goes to a file.
    const nlohmann::ordered_json doc = nlohmann::ordered_json::parse(*stats, nullptr, /*allow_exceptions=*/false);
    if (!doc.is_discarded() && doc.contains("by_protocol")) {
      out << "\nnode B manager, mean fetch phases: \"by_protocol\":" << doc.at("by_protocol").dump() << "\n";
    }
    if (!options.csv_path.empty()) {
      std::ofstream json(options.csv_path + ".manager-b.json");
      json << *stats << "\n";
    }
  } else {
    out << "\nnode B manager stats unavailable: " << stats.status().message() << "\n";
  }
  if (!options.csv_path.empty()) {
    out << "\nCSV: " << options.csv_path << " (judged against the targets by scripts/bench-targets.py)\n";
  }
  return first_error;
}

}  // namespace rplasma::bench
