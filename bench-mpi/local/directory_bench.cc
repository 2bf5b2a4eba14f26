#include "bench-mpi/local/directory_bench.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

#include "bench-mpi/common/latency_recorder.h"
#include "bench-mpi/common/measure_loop.h"
#include "bench-mpi/common/result_reporter.h"
#include "bench-mpi/launch/redis_cluster.h"
#include "bench-mpi/launch/redis_server.h"
#include "manager/directory/redis_directory.h"
#include "protocol/base/notification.h"
#include "protocol/base/object_id.h"
#include "protocol/base/status.h"

namespace rplasma::bench {
namespace {

constexpr char kKeyPrefix[] = "dirbench";
constexpr int kClusterMasters = 3;

// INFO commandstats of one server: the calls of every command but the bench's own (INFO, CONFIG,
// DBSIZE) and replication's (REPLCONF ACK, which replicas send their master every second).
absl::StatusOr<uint64_t> DirectoryCommands(const RedisServer& server) {
  ASSIGN_OR_RETURN(const std::string info, server.Command({"INFO", "commandstats"}));
  uint64_t calls = 0;
  for (absl::string_view line : absl::StrSplit(info, absl::ByAnyChar("\r\n"), absl::SkipEmpty())) {
    // cmdstat_hset:calls=12,usec=34,...  (subcommands: cmdstat_config|resetstat:calls=1,...)
    if (!absl::ConsumePrefix(&line, "cmdstat_")) continue;
    const size_t colon = line.find(':');
    if (colon == absl::string_view::npos) continue;
    const absl::string_view command = line.substr(0, std::min(colon, line.find('|')));
    if (command == "info" || command == "config" || command == "dbsize" || command == "replconf") continue;
    absl::string_view fields = line.substr(colon + 1);
    if (!absl::ConsumePrefix(&fields, "calls=")) continue;
    uint64_t n = 0;
    if (!absl::SimpleAtoi(fields.substr(0, fields.find(',')), &n)) {
      return MakeError(ErrorCode::kProtocolError,
                       absl::StrCat("INFO commandstats of redis ", server.address(), ": bad line '", line, "'"));
    }
    calls += n;
  }
  return calls;
}

absl::StatusOr<uint64_t> KeyCount(const RedisServer& server) {
  ASSIGN_OR_RETURN(const std::string reply, server.Command({"DBSIZE"}));
  uint64_t keys = 0;
  if (!absl::SimpleAtoi(reply, &keys)) {
    return MakeError(ErrorCode::kProtocolError, absl::StrCat("DBSIZE of redis ", server.address(), ": '", reply, "'"));
  }
  return keys;
}

// A fresh id from the node's generator: ObjectID::Random() costs a getrandom() per id, which the
// bench's threads would take from the cores the redis-servers need.
absl::StatusOr<ObjectID> RandomId(std::mt19937_64& rng) {
  std::string bytes(ObjectID::kSize, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(rng() & 0xff);
  return ObjectID::FromBinary(bytes);
}

// One simulated node: its directory, the ids it sealed, and one phase's measurements (its thread's).
struct SimulatedNode {
  std::unique_ptr<RedisDirectory> directory;
  std::vector<ObjectID> sealed;
  std::vector<int64_t> call_ns;
  int64_t ids = 0;
  int64_t found = 0;  // lookups: ids with at least one location
  absl::Status status;
};

// What one phase measured over all nodes and masters.
struct PhaseResult {
  LatencySummary per_call;
  int64_t ids = 0;
  int64_t found = 0;
  double seconds = 0;
  uint64_t pipelines = 0;
  std::vector<uint64_t> commands;  // per master
  std::vector<uint64_t> keys;      // per master, after the phase
};

double Max(const std::vector<uint64_t>& v) { return v.empty() ? 0 : *std::max_element(v.begin(), v.end()); }
double Min(const std::vector<uint64_t>& v) { return v.empty() ? 0 : *std::min_element(v.begin(), v.end()); }
double Sum(const std::vector<uint64_t>& v) {
  double sum = 0;
  for (uint64_t x : v) sum += static_cast<double>(x);
  return sum;
}
double MaxOverMean(const std::vector<uint64_t>& v) {
  const double mean = v.empty() ? 0 : Sum(v) / static_cast<double>(v.size());
  return mean > 0 ? Max(v) / mean : 0;
}

// The system under test: its directories' address and the masters to read statistics from.
struct System {
  std::string name;  // "redis", "redis_cluster"
  std::string address;
  std::vector<const RedisServer*> masters;
};

class DirectoryLoad {
 public:
  DirectoryLoad(const LocalBenchOptions& options, System system) : options_(options), system_(std::move(system)) {}

  // Creates and registers the nodes' directories.
  absl::Status Start() {
    RedisDirectoryOptions directory;
    directory.address = system_.address;
    directory.key_prefix = kKeyPrefix;
    // No heartbeats during the run: the records outlive all three phases. No sweeps either.
    directory.node_ttl = 3 * options_.duration + absl::Seconds(60);
    directory.sweep_interval = absl::ZeroDuration();
    // The redis-servers (six by default) and the bench share the machine's cores: a call may wait its turn.
    directory.op_timeout = absl::Seconds(10);
    nodes_.resize(static_cast<size_t>(options_.nodes));
    for (size_t i = 0; i < nodes_.size(); ++i) {
      ASSIGN_OR_RETURN(nodes_[i].directory, RedisDirectory::Create(directory));
      NodeRecord record;
      record.node_id = absl::StrCat("bench-node-", i);
      record.epoch = static_cast<uint64_t>(absl::ToUnixMillis(absl::Now()));
      RETURN_IF_ERROR(nodes_[i].directory->RegisterNode(record));
    }
    return absl::OkStatus();
  }

  // Every node seals batches of fresh ids for the phase's duration.
  absl::StatusOr<PhaseResult> Seal() {
    const size_t batch = static_cast<size_t>(options_.batch);
    return RunPhase([batch](SimulatedNode& node, size_t, std::mt19937_64& rng) -> absl::Status {
      std::vector<std::pair<ObjectID, ObjectLocation>> objects;
      objects.reserve(batch);
      for (size_t i = 0; i < batch; ++i) {
        ObjectLocation location;  // node_id "" = this node's
        location.object = {.data_size = 1 << 20, .metadata_size = 0, .generation = rng(), .checksum = rng()};
        ASSIGN_OR_RETURN(ObjectID id, RandomId(rng));
        objects.emplace_back(id, std::move(location));
      }
      const int64_t start = NowNs();
      RETURN_IF_ERROR(node.directory->PublishObjects(objects));
      node.call_ns.push_back(NowNs() - start);
      for (const auto& object : objects) node.sealed.push_back(object.first);
      node.ids += static_cast<int64_t>(batch);
      return absl::OkStatus();
    });
  }

  // Every node looks up `count` ids sealed by one other node (drawn at random) per call.
  absl::StatusOr<PhaseResult> Lookup(size_t count) {
    return RunPhase([this, count](SimulatedNode& node, size_t self, std::mt19937_64& rng) -> absl::Status {
      const size_t n = nodes_.size();
      const size_t other = n == 1 ? self : (self + 1 + rng() % (n - 1)) % n;
      const std::vector<ObjectID>& pool = nodes_[other].sealed;  // read-only since the seal phase
      if (pool.empty()) return MakeError(ErrorCode::kInternal, absl::StrCat("node ", other, " sealed nothing"));
      std::vector<ObjectID> ids;
      ids.reserve(count);
      for (size_t i = 0; i < count; ++i) ids.push_back(pool[rng() % pool.size()]);
      const int64_t start = NowNs();
      ASSIGN_OR_RETURN(const std::vector<std::vector<ObjectLocation>> locations, node.directory->Lookup(ids));
      node.call_ns.push_back(NowNs() - start);
      node.ids += static_cast<int64_t>(count);
      for (const auto& found : locations) node.found += found.empty() ? 0 : 1;
      return absl::OkStatus();
    });
  }

 private:
  // Runs `call(node, index, rng)` on every node's thread, over and over, for the phase's duration,
  // all threads starting together; then reads the masters' and directories' counters.
  template <typename Call>
  absl::StatusOr<PhaseResult> RunPhase(Call call) {
    for (const RedisServer* master : system_.masters)
      RETURN_IF_ERROR(master->Command({"CONFIG", "RESETSTAT"}).status());
    uint64_t pipelines_before = 0;
    for (SimulatedNode& node : nodes_) {
      pipelines_before += node.directory->stats()["ops"];
      node.call_ns.clear();
      node.ids = node.found = 0;
    }
    Notification go;
    absl::Time end;
    std::vector<std::thread> threads;
    for (size_t i = 0; i < nodes_.size(); ++i) {
      threads.emplace_back([&, i] {
        std::mt19937_64 rng(std::random_device{}() ^ i);
        go.WaitForNotification();
        SimulatedNode& node = nodes_[i];
        while (node.status.ok() && absl::Now() < end) node.status = call(node, i, rng);
      });
    }
    const int64_t start = NowNs();
    end = absl::Now() + options_.duration;
    go.Notify();
    for (std::thread& thread : threads) thread.join();
    PhaseResult result;
    result.seconds = static_cast<double>(NowNs() - start) / 1e9;
    LatencyRecorder calls;
    for (SimulatedNode& node : nodes_) {
      RETURN_IF_ERROR(node.status);
      for (int64_t ns : node.call_ns) calls.Record(ns);
      result.ids += node.ids;
      result.found += node.found;
      result.pipelines += node.directory->stats()["ops"];
    }
    result.pipelines -= pipelines_before;
    result.per_call = calls.Summarize();
    for (const RedisServer* master : system_.masters) {
      ASSIGN_OR_RETURN(uint64_t commands, DirectoryCommands(*master));
      ASSIGN_OR_RETURN(uint64_t keys, KeyCount(*master));
      result.commands.push_back(commands);
      result.keys.push_back(keys);
    }
    return result;
  }

  const LocalBenchOptions& options_;
  const System system_;
  std::vector<SimulatedNode> nodes_;
};

BenchResult MakeRow(const std::string& benchmark, const System& system, int64_t nodes, uint64_t ids_per_call,
                    const PhaseResult& phase) {
  BenchResult r = MakeResult(benchmark, system.name, "tcp", "resp", ids_per_call, phase.per_call);
  r.ops_per_s = phase.seconds > 0 ? static_cast<double>(phase.ids) / phase.seconds : 0;
  r.gb_per_s = 0;
  const double ids = static_cast<double>(std::max<int64_t>(phase.ids, 1));
  const double masters = static_cast<double>(system.masters.size());
  r.metrics = {
      {"nodes", static_cast<double>(nodes)},
      {"calls_per_s", phase.seconds > 0 ? static_cast<double>(phase.per_call.count) / phase.seconds : 0},
      {"commands_per_id", Sum(phase.commands) / ids},
      {"pipelines_per_call",
       static_cast<double>(phase.pipelines) / static_cast<double>(std::max<int64_t>(phase.per_call.count, 1))},
      {"masters", masters},
      {"commands_per_s_per_master", phase.seconds > 0 ? Sum(phase.commands) / masters / phase.seconds : 0},
      {"command_balance", MaxOverMean(phase.commands)},
  };
  if (benchmark == "directory_seal") {
    r.metrics["keys_min"] = Min(phase.keys);
    r.metrics["keys_max"] = Max(phase.keys);
    r.metrics["key_balance"] = MaxOverMean(phase.keys);
  } else {
    r.metrics["found"] = static_cast<double>(phase.found) / ids;
  }
  return r;
}

// The three phases against `system`; its rows.
absl::StatusOr<std::vector<BenchResult>> Measure(const LocalBenchOptions& options, const System& system) {
  DirectoryLoad load(options, system);
  RETURN_IF_ERROR(load.Start());
  std::vector<BenchResult> rows;
  ASSIGN_OR_RETURN(PhaseResult seal, load.Seal());
  rows.push_back(MakeRow("directory_seal", system, options.nodes, static_cast<uint64_t>(options.batch), seal));
  std::vector<size_t> lookup_sizes = {1};
  if (options.batch > 1) lookup_sizes.push_back(static_cast<size_t>(options.batch));
  for (size_t count : lookup_sizes) {
    ASSIGN_OR_RETURN(PhaseResult lookup, load.Lookup(count));
    if (lookup.found == 0) {
      return MakeError(ErrorCode::kInternal, absl::StrCat(system.name, ": no looked-up id was found"));
    }
    rows.push_back(MakeRow("directory_lookup", system, options.nodes, count, lookup));
  }
  return rows;
}

void PrintSummary(const std::vector<BenchResult>& rows, std::ostream& out) {
  out << absl::StrFormat("\n%-16s %-14s %6s %12s %10s %12s %10s %12s %9s %9s\n", "benchmark", "system", "ids", "ids/s",
                         "cmds/id", "pipes/call", "cmd bal", "keys/master", "key bal", "vs redis");
  for (const BenchResult& r : rows) {
    const std::string keys =
        r.metrics.count("keys_max") > 0 ? absl::StrFormat("%.0f-%.0f", r.Metric("keys_min"), r.Metric("keys_max")) : "";
    const std::string key_balance = keys.empty() ? "" : absl::StrFormat("%.3f", r.Metric("key_balance"));
    const std::string ratio =
        r.metrics.count("ratio_vs_redis") > 0 ? absl::StrFormat("%.3f", r.Metric("ratio_vs_redis")) : "";
    out << absl::StrFormat("%-16s %-14s %6d %12.0f %10.3f %12.3f %10.3f %12s %9s %9s\n", r.benchmark, r.system,
                           r.object_size, r.ops_per_s, r.Metric("commands_per_id"), r.Metric("pipelines_per_call"),
                           r.Metric("command_balance"), keys, key_balance, ratio);
  }
}

}  // namespace

absl::Status RunDirectoryBench(const LocalBenchOptions& options, std::ostream& out) {
  RETURN_IF_ERROR(options.Validate());
  ASSIGN_OR_RETURN(std::unique_ptr<ResultReporter> reporter, ResultReporter::Create(options.csv_path, &out));
  out << absl::StrFormat(
      "directory: %d nodes (threads, one RedisDirectory each); PublishObjects of %d ids, Lookup of 1 and %d ids "
      "sealed by other nodes; %s per phase; one redis-server, then a Redis Cluster of %d masters + %d replicas\n\n",
      options.nodes, options.batch, options.batch, absl::FormatDuration(options.duration), kClusterMasters,
      kClusterMasters * options.replicas);

  std::vector<BenchResult> single;
  {
    ASSIGN_OR_RETURN(std::unique_ptr<RedisServer> server, RedisServer::Start(RedisServerOptions{}));
    ASSIGN_OR_RETURN(single, Measure(options, System{"redis", server->address(), {server.get()}}));
  }  // stopped before the cluster starts: the two never share the cores
  for (const BenchResult& r : single) RETURN_IF_ERROR(reporter->Add(r));

  std::vector<BenchResult> cluster;
  {
    RedisClusterOptions cluster_options;
    cluster_options.masters = kClusterMasters;
    cluster_options.replicas_per_master = static_cast<int>(options.replicas);
    ASSIGN_OR_RETURN(std::unique_ptr<RedisCluster> servers, RedisCluster::Start(cluster_options));
    System system{"redis_cluster", servers->seeds(), {}};
    for (int i = 0; i < kClusterMasters; ++i) system.masters.push_back(&servers->node(i));
    ASSIGN_OR_RETURN(cluster, Measure(options, system));
  }
  for (BenchResult& r : cluster) {
    const BenchResult* peer = reporter->Find(r.benchmark, "redis", r.object_size);
    if (peer != nullptr && peer->ops_per_s > 0) r.metrics["ratio_vs_redis"] = r.ops_per_s / peer->ops_per_s;
    RETURN_IF_ERROR(reporter->Add(std::move(r)));
  }
  PrintSummary(reporter->results(), out);
  if (!options.csv_path.empty()) out << "\nCSV: " << options.csv_path << "\n";
  return absl::OkStatus();
}

}  // namespace rplasma::bench
