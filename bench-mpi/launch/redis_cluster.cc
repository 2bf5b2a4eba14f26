#include "bench-mpi/launch/redis_cluster.h"

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

#include "protocol/base/status.h"

namespace rplasma::bench {
namespace {

constexpr int kSlots = 16384;
constexpr int kBusPortAttempts = 3;

// The value of `field` in an INFO or CLUSTER INFO text ("field:value\r\n"), "" if absent.
std::string InfoField(absl::string_view info, absl::string_view field) {
  for (absl::string_view line : absl::StrSplit(info, absl::ByAnyChar("\r\n"), absl::SkipEmpty())) {
    if (absl::ConsumePrefix(&line, field) && absl::ConsumePrefix(&line, ":")) return std::string(line);
  }
  return "";
}

// The port of a CLUSTER NODES address field "ip:port@cport[,hostname]", or -1.
int PortOf(absl::string_view endpoint) {
  endpoint = endpoint.substr(0, endpoint.find('@'));
  const size_t colon = endpoint.rfind(':');
  int port = -1;
  if (colon == absl::string_view::npos || !absl::SimpleAtoi(endpoint.substr(colon + 1), &port)) return -1;
  return port;
}

// Whether a CLUSTER NODES slot field ("5", "0-5460"; "[...]" migration markers never) holds `slot`.
bool FieldHoldsSlot(absl::string_view field, int slot) {
  if (absl::StartsWith(field, "[")) return false;
  std::vector<absl::string_view> ends = absl::StrSplit(field, '-');
  int first = 0;
  int last = 0;
  if (!absl::SimpleAtoi(ends[0], &first)) return false;
  last = first;
  if (ends.size() == 2 && !absl::SimpleAtoi(ends[1], &last)) return false;
  return first <= slot && slot <= last;
}

}  // namespace

absl::Status RedisClusterOptions::Validate() const {
  if (masters < 1 || masters > 16)
    return MakeError(ErrorCode::kInvalidArgument, "redis cluster: masters must be 1..16");
  if (replicas_per_master < 0 || replicas_per_master > 4) {
    return MakeError(ErrorCode::kInvalidArgument, "redis cluster: replicas_per_master must be 0..4");
  }
  if (node_timeout < absl::Milliseconds(100)) {
    return MakeError(ErrorCode::kInvalidArgument, "redis cluster: node_timeout must be at least 100ms");
  }
  return server.Validate();
}

absl::StatusOr<std::unique_ptr<RedisCluster>> RedisCluster::Start(const RedisClusterOptions& options) {
  RETURN_IF_ERROR(options.Validate());
  std::unique_ptr<RedisCluster> cluster(new RedisCluster(options));
  const int count = options.masters * (1 + options.replicas_per_master);
  for (int i = 0; i < count; ++i) {
    // The bus port is picked like the server's: free a moment ago, so another process may take it
    // first; then the server fails to start and a new pair of ports is tried.
    absl::StatusOr<std::unique_ptr<RedisServer>> node = absl::UnknownError("not started");
    int bus_port = 0;
    for (int attempt = 0; attempt < kBusPortAttempts; ++attempt) {
      ASSIGN_OR_RETURN(bus_port, PickFreeLoopbackPort());
      RedisServerOptions server = options.server;
      for (const std::string& arg : std::vector<std::string>{
               "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf", "--cluster-node-timeout",
               std::to_string(absl::ToInt64Milliseconds(options.node_timeout)), "--cluster-port",
               std::to_string(bus_port), "--cluster-require-full-coverage", "no", "--cluster-replica-validity-factor",
               "0", "--cluster-allow-replica-migration", "no",
               // A replica's first sync at once, not after the default 5 s wait for more replicas.
               "--repl-diskless-sync-delay", "0"}) {
        server.extra_args.push_back(arg);
      }
      node = RedisServer::Start(server);
      if (node.ok()) break;
    }
    if (!node.ok()) return node.status();
    cluster->nodes_.push_back(std::move(node).value());
    cluster->bus_ports_.push_back(bus_port);
  }
  RETURN_IF_ERROR(cluster->Form());
  return cluster;
}

std::string RedisCluster::seeds() const {
  std::vector<std::string> addresses;
  for (const auto& node : nodes_) addresses.push_back(node->address());
  return absl::StrJoin(addresses, ",");
}

absl::Status RedisCluster::WaitUntil(const std::string& what, const std::function<absl::StatusOr<bool>()>& done,
                                     absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  absl::Status last;
  for (;;) {
    absl::StatusOr<bool> ok = done();
    if (ok.ok() && *ok) return absl::OkStatus();
    if (!ok.ok()) last = ok.status();
    if (absl::Now() >= deadline) {
      return MakeError(ErrorCode::kUnavailable,
                       absl::StrFormat("redis cluster %s: not %s within %s; last error: %s", seeds(), what,
                                       absl::FormatDuration(timeout), last.ok() ? "none" : last.message()));
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
}

absl::Status RedisCluster::Form() {
  const int masters = options_.masters;
  for (int i = 0; i < size(); ++i) {
    ASSIGN_OR_RETURN(std::string id, Command(i, {"CLUSTER", "MYID"}));
    ids_.push_back(std::move(id));
    // Distinct epochs before the nodes meet, so that no collision has to be resolved later.
    RETURN_IF_ERROR(Command(i, {"CLUSTER", "SET-CONFIG-EPOCH", std::to_string(i + 1)}).status());
  }
  for (int i = 0; i < masters; ++i) {
    RETURN_IF_ERROR(Command(i, {"CLUSTER", "ADDSLOTSRANGE", std::to_string(i * kSlots / masters),
                                std::to_string((i + 1) * kSlots / masters - 1)})
                        .status());
  }
  for (int i = 1; i < size(); ++i) {
    RETURN_IF_ERROR(Command(0, {"CLUSTER", "MEET", node(i).host(), std::to_string(node(i).port()),
                                std::to_string(bus_ports_[static_cast<size_t>(i)])})
                        .status());
  }
  const std::string known = std::to_string(size());
  RETURN_IF_ERROR(WaitUntil(
      "introduced",
      [&]() -> absl::StatusOr<bool> {
        for (int i = 0; i < size(); ++i) {
          ASSIGN_OR_RETURN(std::string info, Command(i, {"CLUSTER", "INFO"}));
          if (InfoField(info, "cluster_known_nodes") != known) return false;
        }
        return true;
      },
      options_.form_timeout));
  for (int i = masters; i < size(); ++i) {
    RETURN_IF_ERROR(Command(i, {"CLUSTER", "REPLICATE", ids_[static_cast<size_t>(i % masters)]}).status());
  }
  const int replicas = size() - masters;
  return WaitUntil(
      "formed",
      [&]() -> absl::StatusOr<bool> {
        for (int i = 0; i < size(); ++i) {
          ASSIGN_OR_RETURN(std::string info, Command(i, {"CLUSTER", "INFO"}));
          if (InfoField(info, "cluster_state") != "ok") return false;
          ASSIGN_OR_RETURN(std::string nodes, Command(i, {"CLUSTER", "NODES"}));
          int seen_replicas = 0;
          for (absl::string_view line : absl::StrSplit(nodes, '\n', absl::SkipEmpty())) {
            std::vector<absl::string_view> fields = absl::StrSplit(line, ' ');
            if (fields.size() > 2 && absl::StrContains(fields[2], "slave")) ++seen_replicas;
          }
          if (seen_replicas != replicas) return false;
          if (i >= masters) {
            ASSIGN_OR_RETURN(std::string replication, Command(i, {"INFO", "replication"}));
            if (InfoField(replication, "master_link_status") != "up") return false;
          }
        }
        return true;
      },
      options_.form_timeout);
}

absl::StatusOr<int> RedisCluster::MasterOf(int slot, int asked) {
  ASSIGN_OR_RETURN(std::string nodes, Command(asked, {"CLUSTER", "NODES"}));
  for (absl::string_view line : absl::StrSplit(nodes, '\n', absl::SkipEmpty())) {
    std::vector<absl::string_view> fields = absl::StrSplit(line, ' ');
    if (fields.size() < 9 || !absl::StrContains(fields[2], "master") || absl::StrContains(fields[2], "fail")) continue;
    bool holds = false;
    for (size_t f = 8; f < fields.size() && !holds; ++f) holds = FieldHoldsSlot(fields[f], slot);
    if (!holds) continue;
    const int port = PortOf(fields[1]);
    for (int i = 0; i < size(); ++i) {
      if (node(i).port() == port) return i;
    }
  }
  return -1;
}

absl::Status RedisCluster::WaitForReplicasInSync(absl::Duration timeout) {
  return WaitUntil(
      "replicas in sync",
      [&]() -> absl::StatusOr<bool> {
        for (int i = 0; i < size(); ++i) {
          if (!node(i).running()) continue;
          ASSIGN_OR_RETURN(std::string replication, Command(i, {"INFO", "replication"}));
          if (InfoField(replication, "role") != "slave") continue;
          if (InfoField(replication, "master_link_status") != "up") return false;
          const std::string master_port = InfoField(replication, "master_port");
          for (int m = 0; m < size(); ++m) {
            if (std::to_string(node(m).port()) != master_port || !node(m).running()) continue;
            ASSIGN_OR_RETURN(std::string of_master, Command(m, {"INFO", "replication"}));
            if (InfoField(of_master, "master_repl_offset") != InfoField(replication, "slave_repl_offset")) {
              return false;
            }
          }
        }
        return true;
      },
      timeout);
}

absl::Status RedisCluster::WaitForSlotServed(int slot, absl::Duration timeout) {
  return WaitUntil(
      absl::StrFormat("serving slot %d", slot),
      [&]() -> absl::StatusOr<bool> {
        for (int i = 0; i < size(); ++i) {
          if (!node(i).running()) continue;
          ASSIGN_OR_RETURN(std::string info, Command(i, {"CLUSTER", "INFO"}));
          if (InfoField(info, "cluster_state") != "ok") return false;
          ASSIGN_OR_RETURN(int master, MasterOf(slot, i));
          if (master < 0 || !node(master).running()) return false;
        }
        return true;
      },
      timeout);
}

}  // namespace rplasma::bench
