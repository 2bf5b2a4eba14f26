#include "bench-mpi/mpi/rank_node.h"

#include <fstream>
#include <sstream>
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

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The word after `key=` on `line` (up to a space or the end).
std::string WordAfter(absl::string_view line, absl::string_view key) {
  size_t at = line.find(key);
  if (at == absl::string_view::npos) return "";
  at += key.size();
  size_t end = line.find_first_of(" \n", at);
  return std::string(line.substr(at, end == absl::string_view::npos ? absl::string_view::npos : end - at));
}

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
  manager_.Stop();
  store_.reset();
}

absl::Status RankNode::StartManager(const std::string& threshold) {
  if (store_ == nullptr) return MakeError(ErrorCode::kInvalidArgument, "attached node: the manager is not ours");
  manager_.Stop();
  manager_log_ = dir_.Join(absl::StrCat("manager-", ++manager_starts_, ".log"));
  std::vector<std::string> argv = {options_.bin_dir + "/rplasma-manager",
                                   "--store_socket=" + store_socket_,
                                   "--redis=" + options_.redis,
                                   "--listen=" + options_.listen_host + ":0",
                                   "--client_socket=" + manager_socket_,
                                   "--transport=" + options_.transport,
                                   "--pin_threshold=" + threshold,
                                   "--secret_file=" + options_.secret_file,
                                   "--node_name=" + options_.node_name};
  if (!options_.rdma_device.empty()) argv.push_back("--rdma_device=" + options_.rdma_device);
  ASSIGN_OR_RETURN(manager_, ChildProcess::Start(argv, SpawnOptions{.log_path = manager_log_, .stop_grace = absl::Seconds(3)}));
  const absl::Time deadline = absl::Now() + kManagerStartTimeout;
  while (absl::Now() < deadline) {
    const std::string log = ReadAll(manager_log_);
    size_t at = log.find("rplasma-manager ready");
    if (at != std::string::npos && log.find('\n', at) != std::string::npos) {
      absl::string_view line(log.data() + at, log.find('\n', at) - at);
      node_id_ = WordAfter(line, "node=");
      return absl::OkStatus();
    }
    if (!manager_.running()) break;
    absl::SleepFor(absl::Milliseconds(20));
  }
  return MakeError(ErrorCode::kUnavailable, absl::StrCat("rplasma-manager (", options_.node_name,
                                                         ") did not start: ", FileTail(manager_log_)));
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

}  // namespace rplasma::bench
