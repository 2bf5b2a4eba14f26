#include "bench-mpi/mpi/bench_mpi.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

#include "bench-mpi/common/size_units.h"
#include "bench-mpi/mpi/auto_ratio.h"
#include "bench-mpi/mpi/fetch_phase.h"
#include "bench-mpi/mpi/fetch_plan.h"
#include "bench-mpi/mpi/tcp_baseline.h"
#include "bench-mpi/mpi/tuner.h"
#include "protocol/base/logging.h"
#include "protocol/base/object_id.h"
#include "protocol/base/status.h"

namespace rplasma::bench {
namespace {

// What the auto node's manager did so far: objects moved by each protocol, and the transfers it
// sent the other way to measure it (its stats' by_protocol and explored_transfers). Zero where
// the stats cannot be read: the mix is an explanation printed beside the figures, not one of them.
struct AutoMix {
  double get_objects = 0;
  double pin_objects = 0;
  double explored = 0;
  // Per peer and per concurrency class (single objects, then each batch class used): the
  // threshold, its flips and link changes, why, and the class's estimates at the point's size.
  std::string why;
};

// One concurrency class of a peer_policy entry of the manager's stats, as AutoMix::why shows it.
std::string ClassWhy(const nlohmann::json& c, uint64_t size) {
  std::string at;
  const auto estimates = c.find("estimates");
  if (estimates != c.end() && estimates->is_array()) {
    // The size bucket holding `size`: the first whose top is at least `size`.
    for (const nlohmann::json& e : *estimates) {
      if (!e.is_object() || MemberNumber(e, "bytes") < static_cast<double>(size)) continue;
      at = absl::StrFormat(" [at %s: Get %.1f us (%.0f), Pin %.1f us (%.0f)]", FormatByteSize(size),
                           MemberNumber(e, "get_us"), MemberNumber(e, "get_samples"), MemberNumber(e, "pin_us"),
                           MemberNumber(e, "pin_samples"));
      break;
    }
  }
  return absl::StrFormat("threshold %s, %.0f flips, %.0f link changes%s: %s",
                         FormatByteSize(static_cast<uint64_t>(MemberNumber(c, "threshold"))), MemberNumber(c, "flips"),
                         MemberNumber(c, "link_changes"), at, MemberText(c, "reason"));
}

AutoMix ReadAutoMix(const std::string& manager_socket, uint64_t size) {
  AutoMix mix;
  absl::StatusOr<nlohmann::json> stats = QueryManagerStats(manager_socket);
  if (!stats.ok() || !stats->is_object()) return mix;
  mix.explored = MemberNumber(*stats, "explored_transfers");
  const auto policy = stats->find("peer_policy");
  if (policy != stats->end() && policy->is_object()) {
    for (const auto& [peer, p] : policy->items()) {
      if (!p.is_object()) continue;
      absl::StrAppend(&mix.why, "      ", peer, ": ", ClassWhy(p, size), "\n");
      const auto batches = p.find("batches");
      if (batches == p.end() || !batches->is_array()) continue;
      for (const nlohmann::json& b : *batches) {
        if (b.is_object())
          absl::StrAppend(&mix.why, "        batches of ", MemberText(b, "objects"), ": ", ClassWhy(b, size), "\n");
      }
    }
  }
  const auto by = stats->find("by_protocol");
  if (by == stats->end() || !by->is_object()) return mix;
  // The objects auto's choices moved: the get and pin lanes' forced ones do not count.
  const std::pair<const char*, double*> counts[] = {{"get", &mix.get_objects}, {"pin", &mix.pin_objects}};
  for (const auto& [protocol, objects] : counts) {
    const auto p = by->find(protocol);
    if (p != by->end() && p->is_object()) *objects = MemberNumber(*p, "objects") - MemberNumber(*p, "forced_objects");
  }
  return mix;
}

}  // namespace

std::string BenchMpi::ThresholdFor(FetchProtocol protocol) const {
  switch (protocol) {
    case FetchProtocol::kGet: return absl::StrCat(kMaxGetBytes);
    case FetchProtocol::kPin: return "0";
    case FetchProtocol::kAuto: return options_.auto_threshold;
  }
  return "auto";
}

uint64_t BenchMpi::StoreMemory() const {
  if (options_.store_memory > 0) return options_.store_memory;
  // The most objects this rank holds at once in any pattern (its puts plus its fetched copies).
  size_t most = 2;
  const int c = *std::max_element(options_.concurrency.begin(), options_.concurrency.end()) * options_.batch;
  for (FetchPattern p : options_.patterns) {
    FetchPlan plan = MakeFetchPlan(p, world_.size(), world_.rank(), c, "sizing");
    most = std::max(most, plan.puts.size() + plan.fetches.size());
  }
  std::vector<uint64_t> sizes = options_.Sizes();
  // The tuner only moves its own sizes (one object per pair at a time).
  const uint64_t largest = options_.tune ? options_.tune_max_size : *std::max_element(sizes.begin(), sizes.end());
  if (options_.tune) most = 2;
  // A shared node holds every lane's objects at once (each lane's puts; the copies are deleted
  // after each batch): the tuner's check runs three lanes.
  if (!options_.node_per_protocol) most *= options_.tune ? 3 : options_.protocols.size();
  const uint64_t bytes = most * (largest + 4096) + most * largest / 8 + (64u << 20);
  return (bytes + (1u << 20) - 1) & ~uint64_t{(1u << 20) - 1};
}

absl::Status BenchMpi::Setup() {
  absl::Status status;
  std::string redis = options_.redis;
  std::string secret;
  if (world_.root()) {
    nonce_ = ObjectID::Random().Hex().substr(0, 12);
    if (options_.start_redis) {
      absl::StatusOr<std::unique_ptr<RedisServer>> server = RedisServer::Start({});
      if (server.ok()) {
        redis_ = std::move(*server);
        redis = redis_->address();
      } else {
        status = server.status();
      }
    }
    if (options_.secret_file.empty()) secret = ObjectID::Random().Hex() + ObjectID::Random().Hex();
  }
  RETURN_IF_ERROR(AgreeAcrossRanks(world_, status));
  nonce_ = world_.Broadcast(nonce_);
  options_.redis = world_.Broadcast(redis);
  secret = world_.Broadcast(secret);

  if (options_.bin_dir.empty()) {
    absl::StatusOr<std::string> dir = ExecutableDir();
    if (dir.ok())
      options_.bin_dir = *dir;
    else
      status = dir.status();
  }
  absl::StatusOr<ScratchDir> scratch = ScratchDir::Create("rplasma-bench-mpi");
  if (scratch.ok())
    scratch_ = std::move(*scratch);
  else if (status.ok())
    status = scratch.status();
  if (status.ok() && options_.secret_file.empty()) {
    // Each rank keeps its own copy of rank 0's secret (ranks may be on different hosts).
    options_.secret_file = scratch_.Join("secret");
    std::ofstream out(options_.secret_file);
    out << secret << "\n";
    out.close();
    chmod(options_.secret_file.c_str(), 0600);
    if (!out) status = MakeError(ErrorCode::kInternal, absl::StrCat("cannot write ", options_.secret_file));
  }
  RETURN_IF_ERROR(AgreeAcrossRanks(world_, status));

  // Node names: unique across ranks, since the tuner's per-peer lines are keyed by them.
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) != 0) std::snprintf(host, sizeof(host), "host");
  const std::string short_host(host, strcspn(host, "."));
  const std::string node_name = ExpandNodeName(options_.node_name, world_.rank(), short_host);
  status = ValidateNodeName(node_name);
  const std::vector<std::string> names = world_.AllGather(node_name);
  for (size_t r = 0; r < names.size() && status.ok(); ++r) {
    if (std::count(names.begin(), names.end(), names[r]) > 1) {
      status = MakeError(ErrorCode::kInvalidArgument,
                         absl::StrCat("--node_name: ranks share the name '", names[r], "' (add {rank})"));
    }
  }
  RETURN_IF_ERROR(AgreeAcrossRanks(world_, status));

  node_name_ = node_name;
  std::vector<FetchProtocol> protocols = options_.protocols;
  // The tuner forces get and pin, then runs auto with the file it wrote.
  if (options_.tune) protocols = {FetchProtocol::kGet, FetchProtocol::kPin, FetchProtocol::kAuto};
  // Every protocol runs on one node (the auto node) unless asked not to.
  shared_node_ = options_.attach || !options_.node_per_protocol;
  if (shared_node_) protocols = {FetchProtocol::kAuto};
  RETURN_IF_ERROR(StartNodes(protocols));
  if (!options_.tune) {
    // The sweep's managers run for the whole run; the tuner starts its own per phase.
    for (const ProtocolNode& n : nodes_) RETURN_IF_ERROR(StartManagers(n.protocol, ThresholdFor(n.protocol)));
  }
  return absl::OkStatus();
}

absl::Status BenchMpi::StartNodes(const std::vector<FetchProtocol>& protocols) {
  absl::Status status;
  const int threads = *std::max_element(options_.concurrency.begin(), options_.concurrency.end());
  for (FetchProtocol protocol : protocols) {
    ProtocolNode n{protocol, nullptr, {}};
    if (options_.attach) {
      absl::StatusOr<std::unique_ptr<RankNode>> node = RankNode::Attach(options_.store_socket, options_.manager_socket);
      if (node.ok())
        n.node = std::move(*node);
      else
        status = node.status();
    } else {
      RankNodeOptions node_options;
      node_options.bin_dir = options_.bin_dir;
      node_options.store_memory = StoreMemory();
      node_options.node_name =
          protocol == FetchProtocol::kAuto ? node_name_ : absl::StrCat(node_name_, "-", FetchProtocolName(protocol));
      node_options.redis = options_.redis;
      node_options.secret_file = options_.secret_file;
      node_options.transport = options_.transport;
      node_options.listen_host = options_.listen_host;
      node_options.rdma_device = options_.rdma_device;
      status = ValidateNodeName(node_options.node_name);
      if (status.ok()) {
        absl::StatusOr<std::unique_ptr<RankNode>> node = RankNode::Start(node_options);
        if (node.ok())
          n.node = std::move(*node);
        else
          status = node.status();
      }
    }
    for (int t = 0; t < threads && status.ok(); ++t) {
      ClientOptions client_options;
      client_options.store_socket = n.node->store_socket();
      client_options.manager_socket = n.node->manager_socket();
      client_options.client_name =
          absl::StrCat("bench-mpi rank ", world_.rank(), " ", FetchProtocolName(protocol), " thread ", t);
      absl::StatusOr<std::unique_ptr<Client>> client = Client::Connect(client_options);
      if (client.ok())
        n.clients.push_back(std::move(*client));
      else
        status = client.status();
    }
    if (!status.ok()) break;
    nodes_.push_back(std::move(n));
  }
  return AgreeAcrossRanks(world_, status);
}

const BenchMpi::ProtocolNode* BenchMpi::Find(FetchProtocol protocol) const {
  if (shared_node_) return nodes_.empty() ? nullptr : &nodes_[0];
  for (const ProtocolNode& n : nodes_) {
    if (n.protocol == protocol) return &n;
  }
  return nullptr;
}

ForcedProtocol BenchMpi::ForcedFor(FetchProtocol protocol) const {
  if (!shared_node_) return ForcedProtocol::kNone;  // the node's threshold forces it
  switch (protocol) {
    case FetchProtocol::kGet: return ForcedProtocol::kGet;
    case FetchProtocol::kPin: return ForcedProtocol::kPin;
    case FetchProtocol::kAuto: return ForcedProtocol::kNone;
  }
  return ForcedProtocol::kNone;
}

bool BenchMpi::HasNode(FetchProtocol protocol) const { return Find(protocol) != nullptr; }

RankNode& BenchMpi::node(FetchProtocol protocol) {
  const ProtocolNode* n = Find(protocol);
  CHECK(n != nullptr) << "no node for protocol " << FetchProtocolName(protocol);
  return *n->node;
}

const std::vector<std::unique_ptr<Client>>& BenchMpi::clients(FetchProtocol protocol) const {
  const ProtocolNode* n = Find(protocol);
  CHECK(n != nullptr) << "no node for protocol " << FetchProtocolName(protocol);
  return n->clients;
}

absl::Status BenchMpi::StartManagers(FetchProtocol protocol, const std::string& threshold) {
  RankNode& n = node(protocol);
  absl::Status status = options_.attach ? absl::OkStatus() : n.StartManager(threshold);
  RETURN_IF_ERROR(AgreeAcrossRanks(world_, status));
  // The transport the managers really run (auto resolves to tcp or verbs).
  absl::StatusOr<nlohmann::json> stats = QueryManagerStats(n.manager_socket());
  if (stats.ok()) transport_label_ = MemberText(*stats, "transport");
  if (transport_label_.empty()) transport_label_ = options_.transport;
  world_.Barrier();
  return absl::OkStatus();
}

absl::Status BenchMpi::SweepPoint(FetchPattern pattern, int concurrency, uint64_t size, std::vector<ResultRow>* rows) {
  std::vector<FetchProtocol> protocols;
  std::vector<FetchLane> lanes;
  for (FetchProtocol protocol : options_.protocols) {
    if (protocol == FetchProtocol::kGet && size > kMaxGetBytes) {
      if (world_.root()) {
        std::printf("  skip %s get %s: a Get reply is at most 64 MiB (transport::kMaxCallBytes)\n",
                    std::string(FetchPatternName(pattern)).c_str(), FormatByteSize(size).c_str());
      }
      continue;
    }
    const std::string phase = absl::StrCat(nonce_, "/", FetchProtocolName(protocol), "/", FetchPatternName(pattern),
                                           "/", concurrency, "/", size);
    protocols.push_back(protocol);
    lanes.push_back({&clients(protocol),
                     MakeFetchPlan(pattern, world_.size(), world_.rank(), concurrency * options_.batch, phase),
                     ForcedFor(protocol)});
  }
  if (lanes.empty()) return absl::OkStatus();
  if (world_.root()) {
    std::string names;
    for (FetchProtocol p : protocols) absl::StrAppend(&names, names.empty() ? "" : ",", FetchProtocolName(p));
    std::printf("  [%s c=%d batch=%d %s] %s: %d+%d rounds each, interleaved ...\n",
                std::string(FetchPatternName(pattern)).c_str(), concurrency, options_.batch,
                FormatByteSize(size).c_str(), names.c_str(), options_.warmup, options_.repeat);
    std::fflush(stdout);
  }
  FetchPhaseOptions phase_options;
  phase_options.object_size = size;
  phase_options.concurrency = concurrency;
  phase_options.batch = options_.batch;
  phase_options.warmup = options_.warmup;
  phase_options.repeat = options_.repeat;
  phase_options.verify = options_.verify;
  phase_options.fetch_timeout = options_.fetch_timeout;
  // Every protocol of the point has its node (its lane's clients are that node's).
  const bool explain = std::find(protocols.begin(), protocols.end(), FetchProtocol::kAuto) != protocols.end();
  const std::string auto_socket = explain ? node(FetchProtocol::kAuto).manager_socket() : "";
  const AutoMix before = explain ? ReadAutoMix(auto_socket, size) : AutoMix{};
  std::vector<RankPhaseResult> results;
  RETURN_IF_ERROR(RunInterleavedFetchPhases(world_, lanes, phase_options, &results));
  AutoMix mix;
  if (explain) {
    const AutoMix after = ReadAutoMix(auto_socket, size);
    mix.get_objects = world_.SumAll(after.get_objects - before.get_objects);
    mix.pin_objects = world_.SumAll(after.pin_objects - before.pin_objects);
    mix.explored = world_.SumAll(after.explored - before.explored);
    // Every fetching rank's reasons (rank 0 fetches nothing in some patterns: pairs of two).
    const std::vector<std::string> whys = world_.AllGather(after.why);
    for (size_t r = 0; r < whys.size(); ++r) {
      if (!whys[r].empty()) absl::StrAppend(&mix.why, "    rank ", r, "'s auto manager:\n", whys[r]);
    }
  }
  double p50[3] = {0, 0, 0};          // by FetchProtocol
  std::vector<int64_t> rounds_ns[3];  // every rank's round times, rank by rank (rank 0 only)
  size_t auto_row = rows->size();
  for (size_t l = 0; l < lanes.size(); ++l) {
    const double verified = world_.SumAll(static_cast<double>(results[l].verified_bytes));
    ResultRow labels;
    labels.transport = transport_label_;
    labels.protocol = std::string(FetchProtocolName(protocols[l]));
    labels.pattern = std::string(FetchPatternName(pattern));
    labels.object_size = size;
    labels.ranks = world_.size();
    labels.concurrency = concurrency;
    std::vector<ResultRow> got = SummarizeRanks(world_, results[l], labels, options_.per_rank_rows);
    rounds_ns[static_cast<int>(protocols[l])] = world_.GatherToRoot(results[l].round_ns);
    if (world_.root() && !got.empty()) {
      const ResultRow& a = got.back();
      p50[static_cast<int>(protocols[l])] = a.p50_us;
      std::printf("    %-4s %.3f GB/s  p50 %.1f us  p99 %.1f us  verified %.0f bytes\n", labels.protocol.c_str(),
                  a.gb_per_s, a.p50_us, a.p99_us, verified);
      if (protocols[l] == FetchProtocol::kAuto) auto_row = rows->size() + got.size() - 1;
    }
    rows->insert(rows->end(), got.begin(), got.end());
  }
  if (world_.root() && auto_row < rows->size()) {
    const auto of = [](const auto& by_protocol, FetchProtocol p) { return by_protocol[static_cast<int>(p)]; };
    const double medians =
        AutoVsBest(of(p50, FetchProtocol::kGet), of(p50, FetchProtocol::kPin), of(p50, FetchProtocol::kAuto));
    const double ratio = PairedAutoVsBest(of(rounds_ns, FetchProtocol::kGet), of(rounds_ns, FetchProtocol::kPin),
                                          of(rounds_ns, FetchProtocol::kAuto));
    (*rows)[auto_row].auto_vs_best = ratio;
    if (ratio >= 0) {
      std::printf(
          "    auto/best %.3f paired by round, %.3f of medians  (auto moved %.0f objects by get, %.0f by pin; %.0f "
          "transfers explored)\n",
          ratio, medians, mix.get_objects, mix.pin_objects, mix.explored);
      if (ratio < kAutoVsBestTarget) std::printf("%s", mix.why.c_str());  // the auto managers say why
    }
  }
  if (world_.root()) std::fflush(stdout);
  return absl::OkStatus();
}

absl::Status BenchMpi::Sweep(std::vector<ResultRow>* rows) {
  const std::vector<uint64_t> sizes = options_.Sizes();
  // Every protocol at one point before the next point, interleaved round by round (fetch_phase.h).
  for (FetchPattern pattern : options_.patterns) {
    for (int concurrency : options_.concurrency) {
      for (uint64_t size : sizes) RETURN_IF_ERROR(SweepPoint(pattern, concurrency, size, rows));
    }
  }
  if (options_.tcp_baseline) {
    if (world_.root()) std::printf("  [tcp_stream pairs] %zu sizes ...\n", sizes.size());
    RETURN_IF_ERROR(RunTcpBaseline(world_, options_.listen_host, sizes, options_.warmup, options_.repeat,
                                   options_.per_rank_rows, rows));
  }
  return absl::OkStatus();
}

absl::Status BenchMpi::Report(const std::vector<ResultRow>& rows) {
  absl::Status status;
  if (world_.root()) {
    PrintTable(rows);
    std::vector<AutoRatioPoint> points;
    for (const ResultRow& r : rows) {
      if (r.rank >= 0 || r.auto_vs_best < 0) continue;
      AutoRatioPoint p;
      p.label = absl::StrCat(r.benchmark == "fetch" ? "" : r.benchmark + " ", r.pattern, " c=", r.concurrency);
      p.size = r.object_size;
      for (const ResultRow& f : rows) {
        if (f.rank >= 0 || f.benchmark != r.benchmark || f.system != r.system || f.pattern != r.pattern ||
            f.concurrency != r.concurrency || f.object_size != r.object_size) {
          continue;
        }
        if (f.protocol == "get") p.get_p50_us = f.p50_us;
        if (f.protocol == "pin") p.pin_p50_us = f.p50_us;
        if (f.protocol == "auto") p.auto_p50_us = f.p50_us;
      }
      if (r.benchmark == "fetch") p.paired = r.auto_vs_best;  // the sweep's is paired by round (SweepPoint)
      points.push_back(p);
    }
    const std::string summary = AutoRatioSummary(points);
    if (!summary.empty()) {
      std::printf("auto vs the better fixed protocol (p50, measured interleaved):\n%s", summary.c_str());
    }
    status = WriteCsv(options_.csv, rows);
    if (status.ok()) std::printf("csv: %s (%zu rows)\n", options_.csv.c_str(), rows.size());
    if (status.ok() && !options_.png.empty()) {
      std::string script = options_.plot_script;
      if (script.empty()) script = options_.bin_dir + "/plot_bench.gp";
      // A missing gnuplot costs the picture, not the measurements.
      absl::Status plotted = PlotCsv(script, options_.csv, options_.png);
      if (plotted.ok()) {
        std::printf("plot: %s\n", options_.png.c_str());
      } else {
        std::fprintf(stderr, "plot: skipped: %s\n", std::string(plotted.message()).c_str());
      }
    }
    std::fflush(stdout);
  }
  return AgreeAcrossRanks(world_, status);
}

absl::Status BenchMpi::Run() {
  RETURN_IF_ERROR(Setup());
  if (world_.root()) {
    std::printf("rplasma-bench-mpi: %d ranks, redis %s, transport %s, verify %s, batch %d id%s per Fetch call%s\n",
                world_.size(), options_.redis.c_str(), options_.transport.c_str(), options_.verify ? "on" : "off",
                options_.batch, options_.batch == 1 ? "" : "s",
                options_.batch == 1 ? "" : " (latency per call, ops/s in objects)");
  }
  std::vector<ResultRow> rows;
  if (options_.tune) {
    RETURN_IF_ERROR(RunTuner(*this, &rows));
  } else {
    RETURN_IF_ERROR(Sweep(&rows));
  }
  return Report(rows);
}

}  // namespace rplasma::bench
