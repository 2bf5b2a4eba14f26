#include "bench-mpi/mpi/rank_node.h"

#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

#include "protocol/base/socket_io.h"
#include "protocol/base/status.h"
#include "protocol/frame.h"
#include "protocol/manager_messages.h"

namespace rplasma::bench {
namespace {

constexpr absl::Duration kManagerStartTimeout = absl::Seconds(30);

}  // namespace

absl::StatusOr<std::unique_ptr<RankNode>> RankNode::Start(const RankNodeOptions& options) {
  std::unique_ptr<RankNode> node(new RankNode());
  node->options_ = options;
  StoreProcessOptions store_options;
  store_options.binary = options.bin_dir + "/rplasma-store";
  store_options.memory = options.store_memory;
  ASSIGN_OR_RETURN(node->store_, StoreProcess::Start(store_options));
  ASSIGN_OR_RETURN(node->dir_, ScratchDir::Create("rplasma-bench-mpi-manager"));
  node->store_socket_ = node->store_->socket_path();
  node->manager_socket_ = node->dir_.Join("manager.sock");
  return node;
}

absl::StatusOr<std::unique_ptr<RankNode>> RankNode::Attach(const std::string& store_socket,
                                                           const std::string& manager_socket) {
  std::unique_ptr<RankNode> node(new RankNode());
  node->store_socket_ = store_socket;
  node->manager_socket_ = manager_socket;
  ASSIGN_OR_RETURN(nlohmann::json stats, QueryManagerStats(manager_socket));
  node->node_id_ = MemberText(stats, "node_id");
  return node;
}

RankNode::~RankNode() {
  manager_.reset();
  store_.reset();
}

absl::Status RankNode::StartManager(const std::string& threshold) {
  if (store_ == nullptr) return MakeError(ErrorCode::kInvalidArgument, "attached node: the manager is not ours");
  manager_.reset();
  manager_log_ = dir_.Join(absl::StrCat("manager-", ++manager_starts_, ".log"));
  ManagerLaunchOptions launch;
  launch.binary = options_.bin_dir + "/rplasma-manager";
  launch.store_socket = store_socket_;
  launch.redis = options_.redis;
  launch.secret_file = options_.secret_file;
  launch.node_name = options_.node_name;
  launch.transport = options_.transport;
  launch.pin_threshold = threshold;
  launch.listen_host = options_.listen_host;
  if (!options_.rdma_device.empty()) launch.extra_args.push_back("--rdma_device=" + options_.rdma_device);
  launch.client_socket = manager_socket_;
  launch.log_path = manager_log_;
  launch.probe_client_socket = false;
  launch.start_timeout = kManagerStartTimeout;
  launch.stop_grace = absl::Seconds(3);
  absl::StatusOr<std::unique_ptr<LaunchedManager>> manager = LaunchedManager::Start(launch);
  if (!manager.ok()) {
    return MakeError(ErrorCode::kUnavailable, absl::StrCat("rplasma-manager (", options_.node_name,
                                                           ") did not start: ", manager.status().message()));
  }
  manager_ = std::move(*manager);
  node_id_ = manager_->node_id();
  return absl::OkStatus();
}

absl::StatusOr<nlohmann::json> QueryManagerStats(const std::string& manager_socket) {
  ASSIGN_OR_RETURN(UniqueFd fd, UnixConnect(manager_socket));
  ManagerRequest request{1, ManagerStatsRequest{}};
  RETURN_IF_ERROR(WriteFrame(fd.get(), EncodeManagerRequest(request)));
  ASSIGN_OR_RETURN(std::string payload, ReadFrame(fd.get(), kMaxManagerFrameBytes, absl::Now() + absl::Seconds(10)));
  ASSIGN_OR_RETURN(ManagerReply reply, DecodeManagerReply(payload));
  RETURN_IF_ERROR(reply.status());
  const auto* stats = std::get_if<ManagerStatsReply>(&reply.body);
  if (stats == nullptr) return MakeError(ErrorCode::kProtocolError, "manager stats: not a stats reply");
  nlohmann::json doc = nlohmann::json::parse(stats->json, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) {
    return MakeError(ErrorCode::kProtocolError, "manager stats: not a JSON object");
  }
  return doc;
}

std::string MemberText(const nlohmann::json& doc, const std::string& key) {
  const auto it = doc.find(key);
  if (it == doc.end()) return "";
  return it->is_string() ? it->get<std::string>() : it->dump();
}

double MemberNumber(const nlohmann::json& doc, const std::string& key) {
  const auto it = doc.find(key);
  return it != doc.end() && it->is_number() ? it->get<double>() : 0.0;
}

}  // namespace rplasma::bench
