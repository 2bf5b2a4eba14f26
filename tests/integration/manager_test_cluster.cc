#include "tests/integration/manager_test_cluster.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include <gtest/gtest.h>

#include "bench-mpi/launch/child_process.h"
#include "manager/directory/redis_directory.h"
#include "protocol/base/socket_io.h"
#include "protocol/base/status.h"
#include "protocol/base/unique_fd.h"
#include "protocol/frame.h"

namespace rplasma::testing {
namespace {

// Under ASan a manager takes a few seconds to shut down and run LeakSanitizer.
constexpr absl::Duration kManagerStopGrace = absl::Seconds(20);

}  // namespace

absl::StatusOr<std::unique_ptr<ManagerTestCluster>> ManagerTestCluster::Start() {
  std::unique_ptr<ManagerTestCluster> cluster(new ManagerTestCluster());
  ASSIGN_OR_RETURN(cluster->redis_, bench::RedisServer::Start());
  return cluster;
}

absl::StatusOr<std::unique_ptr<ManagerTestCluster>> ManagerTestCluster::StartWithRedisCluster() {
  std::unique_ptr<ManagerTestCluster> cluster(new ManagerTestCluster());
  ASSIGN_OR_RETURN(cluster->redis_cluster_, bench::RedisCluster::Start());
  return cluster;
}

ManagerTestCluster::~ManagerTestCluster() {
  // Every manager still running is stopped as its operators stop it, with SIGTERM, and must exit
  // 0 within the grace: a hang in shutdown, a crash on the way out, or (under ASan) a leak that
  // LeakSanitizer reports at exit fails the test. A manager the test stopped itself (SIGSTOP) is
  // continued first; one the test killed is left as it is.
  for (const auto& node : nodes_) {
    if (!node->manager || !node->manager->running()) continue;
    node->manager->Signal(SIGCONT);
    const std::optional<int> status = node->manager->Stop(kManagerStopGrace);
    if (!status.has_value() || !WIFEXITED(*status) || WEXITSTATUS(*status) != 0) {
      ADD_FAILURE() << node->name << "'s manager did not exit 0 on SIGTERM within " << kManagerStopGrace << " ("
                    << (status.has_value() ? absl::StrCat("wait status ", *status) : "killed") << "):\n"
                    << bench::ReadWholeFile(node->manager_log);
    }
  }
  for (const auto& node : nodes_) {
    const std::string log = bench::ReadWholeFile(node->manager_log);
    for (const char* marker :
         {"WARNING: ThreadSanitizer", "ERROR: AddressSanitizer", "runtime error:", "ERROR: LeakSanitizer"}) {
      const size_t at = log.find(marker);
      if (at != std::string::npos) {
        ADD_FAILURE() << "sanitizer report in " << node->name << "'s manager log:\n" << log.substr(at, 6000);
        break;
      }
    }
  }
}

absl::StatusOr<TestNode*> ManagerTestCluster::AddNode(const TestNodeOptions& options) {
  auto node = std::make_unique<TestNode>();
  node->name = absl::StrCat(options.name, nodes_.size());
  StoreProcessOptions store_options;
  store_options.memory = options.store_memory;
  store_options.extra_args = options.extra_store_args;
  ASSIGN_OR_RETURN(node->store, StoreProcess::Start(store_options));
  node->client_socket = temp_.Join(node->name + ".manager.sock");
  node->manager_log = temp_.Join(node->name + ".manager.log");
  nodes_.push_back(std::move(node));
  node_options_.push_back(options);
  TestNode* raw = nodes_.back().get();
  RETURN_IF_ERROR(StartManager(raw));
  ClientOptions client_options;
  client_options.store_socket = raw->store->socket_path();
  client_options.manager_socket = raw->client_socket;
  client_options.client_name = "test " + raw->name;
  ASSIGN_OR_RETURN(raw->client, Client::Connect(client_options));
  return raw;
}

absl::Status ManagerTestCluster::WaitPublished(const TestNode& node, const std::vector<ObjectID>& ids,
                                               absl::Duration timeout) {
  RedisDirectoryOptions options;
  options.address = redis_address();
  ASSIGN_OR_RETURN(std::unique_ptr<RedisDirectory> directory, RedisDirectory::Create(options));
  absl::Status missing;
  auto all_published = [&] {
    absl::StatusOr<std::vector<std::vector<ObjectLocation>>> found = directory->Lookup(ids);
    if (!found.ok()) {
      missing = found.status();
      return false;
    }
    for (size_t i = 0; i < ids.size(); ++i) {
      const std::vector<ObjectLocation>& at = (*found)[i];
      if (std::none_of(at.begin(), at.end(), [&](const ObjectLocation& l) { return l.node_id == node.node_id; })) {
        missing =
            MakeError(ErrorCode::kDeadlineExceeded, absl::StrCat(ids[i].Hex(), " not published by ", node.node_id));
        return false;
      }
    }
    return true;
  };
  return WaitFor(all_published, timeout) ? absl::OkStatus() : missing;
}

absl::Status ManagerTestCluster::StartManager(TestNode* node) {
  size_t index = 0;
  while (nodes_[index].get() != node) ++index;
  const TestNodeOptions& options = node_options_[index];
  const std::string secret_file = temp_.Join(node->name + ".secret");
  {
    // Created private (0600), as the manager refuses a secret file group or other could read.
    ::unlink(secret_file.c_str());
    UniqueFd fd(::open(secret_file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
    if (!fd) return ErrnoError("open", secret_file, errno);
    const std::string line = options.secret + "\n";
    RETURN_IF_ERROR(WriteAll(fd.get(), line.data(), line.size()));
  }
  bench::ManagerLaunchOptions launch;
  launch.binary =
      options.manager_binary.empty() ? std::string(RPLASMA_BIN_DIR) + "/rplasma-manager" : options.manager_binary;
  launch.store_socket = node->store->socket_path();
  launch.redis = redis_address();
  launch.secret_file = secret_file;
  launch.node_name = node->name;
  launch.transport = "";  // the manager's default, or extra_manager_args
  launch.pin_threshold = options.threshold;
  launch.extra_args = options.extra_manager_args;
  launch.client_socket = node->client_socket;
  launch.log_path = node->manager_log;  // appended to across restarts
  launch.probe_client_socket = false;   // the ready line comes after the client socket listens
  launch.start_timeout = absl::Seconds(15);
  launch.stop_grace = absl::ZeroDuration();
  ::unlink(node->client_socket.c_str());
  node->manager.reset();
  absl::StatusOr<std::unique_ptr<bench::LaunchedManager>> manager = bench::LaunchedManager::Start(launch);
  if (!manager.ok()) {
    return MakeError(ErrorCode::kUnavailable,
                     absl::StrCat("manager ", node->name, " did not start: ", manager.status().message()));
  }
  node->manager = std::move(*manager);
  node->node_id = node->manager->node_id();
  node->listen_address = node->manager->listen_address();
  return absl::OkStatus();
}

absl::Status ManagerTestCluster::RestartManager(TestNode* node) {
  node->manager->Kill();
  return StartManager(node);
}

absl::Status ManagerTestCluster::RestartManager(TestNode* node, const TestNodeOptions& options) {
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if (nodes_[i].get() == node) node_options_[i] = options;
  }
  return RestartManager(node);
}

absl::StatusOr<std::vector<absl::Status>> FetchVia(const std::string& client_socket, const std::vector<ObjectID>& ids,
                                                   absl::Duration timeout, const std::string& hint) {
  ASSIGN_OR_RETURN(UniqueFd fd, UnixConnect(client_socket));
  ManagerRequest request{1, ManagerFetchRequest{ids, absl::ToInt64Milliseconds(timeout), hint}};
  RETURN_IF_ERROR(WriteFrame(fd.get(), EncodeManagerRequest(request)));
  ASSIGN_OR_RETURN(std::string payload,
                   ReadFrame(fd.get(), kMaxManagerFrameBytes, absl::Now() + timeout + absl::Seconds(30)));
  ASSIGN_OR_RETURN(ManagerReply reply, DecodeManagerReply(payload));
  RETURN_IF_ERROR(reply.status());
  const auto* fetch = std::get_if<ManagerFetchReply>(&reply.body);
  if (fetch == nullptr || fetch->codes.size() != ids.size()) return ProtocolError("bad fetch reply");
  std::vector<absl::Status> out;
  for (size_t i = 0; i < ids.size(); ++i) out.push_back(MakeError(fetch->codes[i], fetch->messages[i]));
  return out;
}

absl::StatusOr<std::string> StatsVia(const std::string& client_socket) {
  ASSIGN_OR_RETURN(UniqueFd fd, UnixConnect(client_socket));
  RETURN_IF_ERROR(WriteFrame(fd.get(), EncodeManagerRequest(ManagerRequest{7, ManagerStatsRequest{}})));
  ASSIGN_OR_RETURN(std::string payload, ReadFrame(fd.get(), kMaxManagerFrameBytes, absl::Now() + absl::Seconds(10)));
  ASSIGN_OR_RETURN(ManagerReply reply, DecodeManagerReply(payload));
  RETURN_IF_ERROR(reply.status());
  const auto* stats = std::get_if<ManagerStatsReply>(&reply.body);
  if (stats == nullptr) return ProtocolError("bad stats reply");
  return stats->json;
}

absl::StatusOr<nlohmann::json> ParsedStatsVia(const std::string& client_socket) {
  ASSIGN_OR_RETURN(std::string text, StatsVia(client_socket));
  nlohmann::json stats = nlohmann::json::parse(text, /*cb=*/nullptr, /*allow_exceptions=*/false);
  if (stats.is_discarded()) return absl::InternalError(absl::StrCat("manager stats are not JSON: ", text));
  return stats;
}

absl::Status WaitStoreReleasedEverything(Client& client, absl::Duration within) {
  StatsReply now;
  absl::Status last;
  const bool released = WaitFor(
      [&] {
        absl::StatusOr<StatsReply> stats = client.Stats();
        last = stats.status();
        if (stats.ok()) now = *stats;
        return stats.ok() && now.objects_created == 0 && now.ref_count == 0 && now.slot_references == 0;
      },
      within);
  if (released) return absl::OkStatus();
  if (!last.ok()) return last;
  return MakeError(ErrorCode::kDeadlineExceeded,
                   absl::StrCat(now.objects_created, " unsealed objects, ", now.ref_count, " references and ",
                                now.slot_references, " slot references left after ", absl::FormatDuration(within)));
}

absl::Status WaitNoLeases(const std::string& client_socket, absl::Duration within) {
  absl::StatusOr<nlohmann::json> stats;
  const bool released = WaitFor(
      [&] {
        stats = ParsedStatsVia(client_socket);
        return stats.ok() && stats->at("peer_service").at("leases_live").get<uint64_t>() == 0;
      },
      within);
  if (released) return absl::OkStatus();
  if (!stats.ok()) return stats.status();
  return MakeError(ErrorCode::kDeadlineExceeded,
                   absl::StrCat(stats->at("peer_service").at("leases_live").get<uint64_t>(), " leases left after ",
                                absl::FormatDuration(within)));
}

namespace {

// Depth first in document order (ordered_json keeps it), so the first member named `key` wins.
const nlohmann::ordered_json* FindMember(const nlohmann::ordered_json& node, const std::string& key) {
  if (!node.is_structured()) return nullptr;
  for (auto it = node.begin(); it != node.end(); ++it) {
    if (node.is_object() && it.key() == key) return &*it;
    if (const nlohmann::ordered_json* found = FindMember(*it, key)) return found;
  }
  return nullptr;
}

}  // namespace

int64_t JsonInt(const std::string& json, const std::string& key) {
  const nlohmann::ordered_json doc = nlohmann::ordered_json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return -1;
  const nlohmann::ordered_json* member = FindMember(doc, key);
  if (member == nullptr || !member->is_number_integer()) return -1;
  return member->get<int64_t>();
}

absl::Status PutTestObject(Client& client, const ObjectID& id, uint64_t seed, uint64_t size,
                           const std::string& metadata) {
  return client.Put(id, TestBytesView(seed, size),
                    absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(metadata.data()), metadata.size()));
}

absl::Status CheckTestObject(Client& client, const ObjectID& id, uint64_t seed, uint64_t size,
                             const std::string& metadata) {
  ASSIGN_OR_RETURN(ObjectBuffer buffer, client.GetOne(id, absl::Seconds(1)));
  if (buffer.data().size() != size) {
    return MakeError(ErrorCode::kInternal, absl::StrCat("size ", buffer.data().size(), " != ", size));
  }
  if (size > 0 && std::memcmp(buffer.data().data(), TestBytesView(seed, size).data(), size) != 0) {
    return MakeError(ErrorCode::kInternal, absl::StrCat(id.Hex(), ": data bytes differ"));
  }
  if (buffer.metadata().size() != metadata.size() ||
      (!metadata.empty() && std::memcmp(buffer.metadata().data(), metadata.data(), metadata.size()) != 0)) {
    return MakeError(ErrorCode::kInternal, absl::StrCat(id.Hex(), ": metadata differs"));
  }
  return absl::OkStatus();
}

void ExpectOnlyAbsentFailed(const std::vector<ObjectID>& asked, const std::vector<absl::Status>& result,
                            const std::vector<ObjectID>& absent) {
  ASSERT_EQ(result.size(), asked.size());
  for (size_t k = 0; k < asked.size(); ++k) {
    if (std::find(absent.begin(), absent.end(), asked[k]) != absent.end()) {
      EXPECT_EQ(ErrorCodeOf(result[k]), ErrorCode::kDeadlineExceeded) << k << ": " << result[k];
    } else {
      EXPECT_TRUE(result[k].ok()) << k << ": " << result[k];
    }
  }
}

int ExpectSealedIntactAndFailedAbsent(Client& client, const std::vector<ObjectID>& ids,
                                      const std::vector<uint64_t>& sizes, const std::vector<absl::Status>& result) {
  EXPECT_EQ(result.size(), ids.size());
  int sealed = 0;
  for (size_t i = 0; i < ids.size() && i < result.size(); ++i) {
    if (result[i].ok()) {
      ++sealed;
      const absl::Status intact = CheckTestObject(client, ids[i], i, sizes[i]);
      EXPECT_TRUE(intact.ok()) << "sealed objects stay, intact: " << i << ": " << intact;
    } else {
      absl::StatusOr<bool> here = client.Contains(ids[i]);
      EXPECT_TRUE(here.ok() && !*here) << "nothing partial is visible: " << i << " " << result[i];
    }
  }
  absl::StatusOr<std::vector<ObjectInfo>> listed = client.List();
  EXPECT_TRUE(listed.ok()) << listed.status();
  if (listed.ok()) {
    for (const ObjectInfo& info : *listed) EXPECT_EQ(info.state, ObjectState::kSealed) << info.id.Hex();
  }
  return sealed;
}

}  // namespace rplasma::testing
