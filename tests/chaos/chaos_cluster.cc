#include "tests/chaos/chaos_cluster.h"

#include <dirent.h>
#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

#include "bench-mpi/launch/child_process.h"
#include "bench-mpi/launch/process_fds.h"
#include "nlohmann/json.hpp"
#include "protocol/base/status.h"
#include "tests/integration/manager_test_cluster.h"

namespace rplasma::chaos {
namespace {

// What no log of a healthy run may contain.
constexpr const char* kAlarms[] = {"ERROR: AddressSanitizer",
                                   "WARNING: ThreadSanitizer",
                                   "runtime error:",
                                   "ERROR: LeakSanitizer",
                                   "Check failed",
                                   "chaos-worker"};

std::string Bin(const std::string& name) { return std::string(RPLASMA_BIN_DIR) + "/" + name; }

bool LogContains(const std::string& path, size_t from, const std::string& text) {
  return bench::ReadWholeFile(path).find(text, from) != std::string::npos;
}

}  // namespace

absl::StatusOr<std::unique_ptr<ChaosCluster>> ChaosCluster::Start(const ChaosClusterOptions& options) {
  std::unique_ptr<ChaosCluster> cluster(new ChaosCluster(options));
  ChaosCluster& c = *cluster;
  ASSIGN_OR_RETURN(c.redis_, bench::RedisServer::Start());
  c.secret_file_ = c.temp_.Join("secret");
  { std::ofstream(c.secret_file_) << "chaos-cluster-secret-" << options.seed << "\n"; }
  ::chmod(c.secret_file_.c_str(), 0600);
  ::mkdir(c.temp_.Join("ids").c_str(), 0700);
  ::mkdir(c.temp_.Join("stats").c_str(), 0700);
  for (int n = 0; n < options.nodes; ++n) {
    Node node;
    node.name = absl::StrCat("n", n);
    node.store_socket = c.temp_.Join(node.name + ".store.sock");
    node.manager_socket = c.temp_.Join(node.name + ".manager.sock");
    node.store_log = c.temp_.Join(node.name + ".store.log");
    node.manager_log = c.temp_.Join(node.name + ".manager.log");
    c.nodes_.push_back(std::move(node));
    for (int w = 0; w < options.workers_per_node; ++w) {
      c.workers_.push_back(WorkerSlot{absl::StrCat("n", n, "-w", w), 0, std::nullopt});
    }
  }
  for (int n = 0; n < options.nodes; ++n) {
    RETURN_IF_ERROR(c.StartStore(n));
    RETURN_IF_ERROR(c.StartManager(n));
  }
  return cluster;
}

ChaosCluster::~ChaosCluster() {
  for (WorkerSlot& w : workers_) w.process.reset();
  for (Node& node : nodes_) {
    node.manager.reset();
    node.store.reset();
  }
}

absl::Status ChaosCluster::StartStore(int n) {
  Node& node = nodes_[n];
  const size_t log_start = bench::ReadWholeFile(node.store_log).size();
  ASSIGN_OR_RETURN(
      bench::ChildProcess process,
      bench::ChildProcess::Start({Bin("rplasma-store"), "--socket=" + node.store_socket,
                                  absl::StrCat("--memory=", options_.store_memory), "--name=" + node.name + "-store"},
                                 node.store_log));
  node.store.emplace(std::move(process));
  const bool up = testing::WaitFor(
      [&] { return LogContains(node.store_log, log_start, ": listening on ") || !node.store->running(); },
      absl::Seconds(30));
  if (!up || !node.store->running()) {
    return MakeError(ErrorCode::kUnavailable,
                     absl::StrCat("store ", node.name, " did not start:\n", bench::FileTail(node.store_log)));
  }
  return absl::OkStatus();
}

absl::Status ChaosCluster::StartManager(int n) {
  Node& node = nodes_[n];
  bench::ManagerLaunchOptions launch;
  launch.binary = Bin("rplasma-manager");
  launch.store_socket = node.store_socket;
  launch.redis = redis_->address();
  launch.secret_file = secret_file_;
  launch.node_name = node.name;
  launch.transport = "";
  launch.pin_threshold = "65536";
  launch.extra_args = {"--lease_ttl=3s"};
  launch.client_socket = node.manager_socket;
  launch.log_path = node.manager_log;  // appended to across restarts
  launch.probe_client_socket = false;
  launch.start_timeout = absl::Seconds(30);
  launch.stop_grace = absl::ZeroDuration();
  node.manager.reset();
  absl::StatusOr<std::unique_ptr<bench::LaunchedManager>> manager = bench::LaunchedManager::Start(launch);
  if (!manager.ok()) {
    return MakeError(ErrorCode::kUnavailable,
                     absl::StrCat("manager ", node.name, " did not start: ", manager.status().message()));
  }
  node.manager = std::move(*manager);
  return absl::OkStatus();
}

void ChaosCluster::KillStore(int n) { nodes_[n].store->Kill(); }
void ChaosCluster::KillManager(int n) { nodes_[n].manager->Kill(); }
bool ChaosCluster::StoreRunning(int n) { return nodes_[n].store && nodes_[n].store->running(); }
bool ChaosCluster::ManagerRunning(int n) { return nodes_[n].manager && nodes_[n].manager->running(); }
std::optional<int> ChaosCluster::StopStore(int n) { return nodes_[n].store->Stop(absl::Seconds(20)); }
std::optional<int> ChaosCluster::StopManager(int n) { return nodes_[n].manager->Stop(absl::Seconds(20)); }

absl::Status ChaosCluster::StartWorker(int slot) {
  WorkerSlot& w = workers_[slot];
  const int n = slot / options_.workers_per_node;
  const std::string stats = temp_.Join(absl::StrCat("stats/", w.name, ".", w.incarnation, ".json"));
  const uint64_t seed = options_.seed * 1000003 + static_cast<uint64_t>(slot) * 1009 + w.incarnation;
  ++w.incarnation;
  ASSIGN_OR_RETURN(bench::ChildProcess process,
                   bench::ChildProcess::Start({CHAOS_WORKER, nodes_[n].store_socket, nodes_[n].manager_socket,
                                               temp_.Join("ids"), w.name, stats, absl::StrCat(seed)},
                                              temp_.Join(w.name + ".log")));
  w.process.emplace(std::move(process));
  return absl::OkStatus();
}

void ChaosCluster::KillWorker(int slot) { workers_[slot].process->Kill(); }
bool ChaosCluster::WorkerRunning(int slot) { return workers_[slot].process && workers_[slot].process->running(); }

bool ChaosCluster::StopWorkers(absl::Duration grace) {
  for (WorkerSlot& w : workers_) w.process->Signal(SIGTERM);
  bool clean = true;
  for (WorkerSlot& w : workers_) {
    std::optional<int> status = w.process->Stop(grace);
    clean = clean && status.has_value() && WIFEXITED(*status) && WEXITSTATUS(*status) == 0;
  }
  return clean;
}

absl::Status ChaosCluster::RestartRedis() { return redis_->Restart(); }

absl::StatusOr<std::unique_ptr<Client>> ChaosCluster::Connect(int n) {
  ClientOptions options;
  options.store_socket = nodes_[n].store_socket;
  options.manager_socket = nodes_[n].manager_socket;
  options.client_name = "chaos driver";
  options.get_fetches_remote = true;
  return Client::Connect(options);
}

template <typename Process>
int ChaosCluster::CountFds(Process& process) {
  return process && process->running() ? bench::CountOpenFds(process->pid()) : -1;
}

int ChaosCluster::StoreFds(int n) { return CountFds(nodes_[n].store); }
int ChaosCluster::ManagerFds(int n) { return CountFds(nodes_[n].manager); }

std::string ChaosCluster::DescribeFds(int n) {
  std::string out;
  Node& node = nodes_[n];
  if (node.store && node.store->running()) {
    absl::StrAppend(&out, "store fds:\n", bench::DescribeOpenFds(node.store->pid()));
  }
  if (node.manager && node.manager->running()) {
    absl::StrAppend(&out, "manager fds:\n", bench::DescribeOpenFds(node.manager->pid()));
  }
  return out;
}

absl::StatusOr<std::string> ChaosCluster::ManagerStats(int n) { return testing::StatsVia(nodes_[n].manager_socket); }

std::map<std::string, uint64_t> ChaosCluster::WorkerTotals() const {
  std::map<std::string, uint64_t> totals;
  DIR* dir = ::opendir(temp_.Join("stats").c_str());
  if (dir == nullptr) return totals;
  while (dirent* entry = ::readdir(dir)) {
    if (!absl::EndsWith(entry->d_name, ".json")) continue;
    nlohmann::json stats =
        nlohmann::json::parse(bench::ReadWholeFile(temp_.Join(absl::StrCat("stats/", entry->d_name))), nullptr, false);
    if (!stats.is_object()) continue;  // rename makes this rare: a file being replaced right now
    for (const auto& [name, value] : stats.items()) {
      if (value.is_number_unsigned()) totals[name] += value.get<uint64_t>();
    }
  }
  ::closedir(dir);
  return totals;
}

std::vector<std::string> ChaosCluster::ScanLogs() const {
  std::vector<std::string> alarms;
  DIR* dir = ::opendir(temp_.path().c_str());
  if (dir == nullptr) return {"cannot read " + temp_.path()};
  while (dirent* entry = ::readdir(dir)) {
    if (!absl::EndsWith(entry->d_name, ".log")) continue;
    for (absl::string_view line : absl::StrSplit(bench::ReadWholeFile(temp_.Join(entry->d_name)), '\n')) {
      for (const char* alarm : kAlarms) {
        if (absl::StrContains(line, alarm)) alarms.push_back(absl::StrCat(entry->d_name, ": ", line));
      }
    }
  }
  ::closedir(dir);
  return alarms;
}

std::string ChaosCluster::LogTail(const std::string& name) const {
  return bench::FileTail(temp_.Join(name + ".log"), 3000);
}

}  // namespace rplasma::chaos
