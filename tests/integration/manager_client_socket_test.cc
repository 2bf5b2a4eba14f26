// The manager's client socket under misuse, over real processes: a second manager on a socket that
// is being served is refused and the first keeps serving; a stale socket file is taken over; the
// connection cap closes the extra connections and frees its slots as connections close; a client
// that sends half a frame and stalls is dropped.
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include <gtest/gtest.h>

#include "bench-mpi/launch/child_process.h"
#include "bench-mpi/launch/manager_launcher.h"
#include "protocol/base/socket_io.h"
#include "protocol/frame.h"
#include "tests/integration/manager_test_cluster.h"
#include "tests/support/status_matchers.h"

namespace rplasma::testing {
namespace {

// A manager command line for `node` (the cluster's secret file and Redis), on `client_socket`:
// the launcher's (bench::ManagerCommandLine), for managers expected to be refused or to take over.
std::vector<std::string> ManagerArgv(ManagerTestCluster& cluster, const TestNode& node,
                                     std::vector<std::string> extra = {}) {
  bench::ManagerLaunchOptions launch;
  launch.binary = std::string(RPLASMA_BIN_DIR) + "/rplasma-manager";
  launch.store_socket = node.store->socket_path();
  launch.redis = cluster.redis().address();
  launch.secret_file = cluster.dir() + "/" + node.name + ".secret";
  launch.node_name = node.name + "-second";
  launch.transport = "";
  launch.pin_threshold = "";
  launch.extra_args = std::move(extra);
  absl::StatusOr<std::vector<std::string>> argv = bench::ManagerCommandLine(launch, node.client_socket);
  return argv.ok() ? *std::move(argv) : std::vector<std::string>{};  // ChildProcess::Start refuses an empty one
}

// One stats round trip on an open connection: OK if the manager served it.
absl::Status StatsOn(int fd) {
  RETURN_IF_ERROR(WriteFrame(fd, EncodeManagerRequest(ManagerRequest{1, ManagerStatsRequest{}})));
  ASSIGN_OR_RETURN(std::string payload, ReadFrame(fd, kMaxManagerFrameBytes, absl::Now() + absl::Seconds(5)));
  ASSIGN_OR_RETURN(ManagerReply reply, DecodeManagerReply(payload));
  return reply.status();
}

// True once the manager closed `fd` (EOF), waiting up to `timeout`.
bool ClosedByPeer(int fd, absl::Duration timeout) {
  pollfd p{fd, POLLIN, 0};
  if (::poll(&p, 1, static_cast<int>(absl::ToInt64Milliseconds(timeout))) <= 0) return false;
  char byte;
  return ::read(fd, &byte, 1) == 0;
}

class ManagerClientSocketTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RPLASMA_SKIP_IF_NO_REDIS_SERVER();
    ASSERT_OK_AND_ASSIGN(cluster_, ManagerTestCluster::Start());
  }
  TestNode* AddNode(std::vector<std::string> extra = {}) {
    TestNodeOptions options;
    options.extra_manager_args = std::move(extra);
    absl::StatusOr<TestNode*> node = cluster_->AddNode(options);
    EXPECT_OK(node.status());
    return node.ok() ? *node : nullptr;
  }
  std::unique_ptr<ManagerTestCluster> cluster_;
};

TEST_F(ManagerClientSocketTest, ASecondManagerOnAServedSocketExitsWithAClearErrorAndTheFirstKeepsServing) {
  TestNode* a = AddNode();
  ASSERT_NE(a, nullptr);
  const std::string log = cluster_->dir() + "/second-manager.log";
  ASSERT_OK_AND_ASSIGN(bench::ChildProcess second, bench::ChildProcess::Start(ManagerArgv(*cluster_, *a), log));
  const std::optional<int> status = second.Wait(absl::Seconds(20));
  ASSERT_TRUE(status.has_value()) << "the second manager did not exit";
  EXPECT_NE(*status, 0);
  EXPECT_NE(bench::ReadWholeFile(log).find("another manager is serving " + a->client_socket), std::string::npos)
      << bench::ReadWholeFile(log);
  EXPECT_OK(StatsVia(a->client_socket).status()) << "the first manager lost its socket";
  struct stat st {};
  ASSERT_EQ(::stat(a->client_socket.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u) << "the client socket is private to the manager's user";
}

TEST_F(ManagerClientSocketTest, AStaleSocketFileIsTakenOverAndARegularFileIsNot) {
  TestNode* a = AddNode();
  ASSERT_NE(a, nullptr);
  a->manager->Kill();  // leaves its socket file behind, with no one serving it
  struct stat st {};
  ASSERT_EQ(::stat(a->client_socket.c_str(), &st), 0);
  ASSERT_OK_AND_ASSIGN(bench::ChildProcess second,
                       bench::ChildProcess::Start(ManagerArgv(*cluster_, *a), cluster_->dir() + "/takeover.log"));
  EXPECT_TRUE(WaitFor([&] { return StatsVia(a->client_socket).ok(); }, absl::Seconds(20)))
      << bench::ReadWholeFile(cluster_->dir() + "/takeover.log");
  second.Stop();

  // A regular file at the path is never replaced.
  ::unlink(a->client_socket.c_str());
  std::ofstream(a->client_socket) << "not a socket";
  const std::string log = cluster_->dir() + "/regular.log";
  ASSERT_OK_AND_ASSIGN(bench::ChildProcess third, bench::ChildProcess::Start(ManagerArgv(*cluster_, *a), log));
  const std::optional<int> status = third.Wait(absl::Seconds(20));
  ASSERT_TRUE(status.has_value());
  EXPECT_NE(*status, 0);
  EXPECT_NE(bench::ReadWholeFile(log).find("is not a socket"), std::string::npos) << bench::ReadWholeFile(log);
  EXPECT_EQ(bench::ReadWholeFile(a->client_socket), "not a socket");
}

TEST_F(ManagerClientSocketTest, ConnectionsOverTheCapAreClosedAndClosingSomeFreesTheirSlots) {
  constexpr int kCap = 4;
  TestNode* a = AddNode({absl::StrCat("--max_client_connections=", kCap)});
  ASSERT_NE(a, nullptr);
  std::vector<UniqueFd> held;
  // Fill the cap (a just-closed connection of the start-up check may hold a slot for a moment).
  ASSERT_TRUE(WaitFor(
      [&] {
        absl::StatusOr<UniqueFd> fd = UnixConnect(a->client_socket);
        if (fd.ok() && StatsOn(fd->get()).ok()) held.push_back(*std::move(fd));
        return held.size() == kCap;
      },
      absl::Seconds(10)));
  // Every further connection is closed by the manager while the cap is held.
  for (int i = 0; i < 3; ++i) {
    ASSERT_OK_AND_ASSIGN(UniqueFd extra, UnixConnect(a->client_socket));
    EXPECT_TRUE(ClosedByPeer(extra.get(), absl::Seconds(5))) << "extra connection " << i << " was served";
  }
  for (UniqueFd& fd : held) EXPECT_OK(StatsOn(fd.get())) << "a held connection was disturbed";
  held.resize(kCap - 2);  // closes two
  // The stats connection itself needs a free slot, and the manager reaps a closed connection a
  // moment after its peer closed it (the previous attempt's included), so it is retried too.
  absl::StatusOr<nlohmann::json> stats;
  EXPECT_TRUE(WaitFor(
      [&] {
        stats = ParsedStatsVia(a->client_socket);
        return stats.ok();
      },
      absl::Seconds(5)))
      << "a slot freed by a closed connection is reused: " << stats.status();
  ASSERT_OK(stats.status());
  EXPECT_GE(stats->at("client_socket").at("refused_over_cap").get<int64_t>(), 3);
}

TEST_F(ManagerClientSocketTest, AClientThatSendsHalfAFrameAndStallsIsDroppedAndIdleOnesStay) {
  TestNode* a = AddNode({"--client_request_deadline=1s"});
  ASSERT_NE(a, nullptr);
  ASSERT_OK_AND_ASSIGN(UniqueFd idle, UnixConnect(a->client_socket));
  ASSERT_OK_AND_ASSIGN(UniqueFd stalled, UnixConnect(a->client_socket));
  const std::string frame = EncodeFrame(EncodeManagerRequest(ManagerRequest{1, ManagerStatsRequest{}}));
  ASSERT_OK(WriteAll(stalled.get(), frame.data(), frame.size() / 2));
  EXPECT_TRUE(ClosedByPeer(stalled.get(), absl::Seconds(10))) << "the stalled client was not dropped";
  EXPECT_OK(StatsOn(idle.get())) << "an idle connection (no request started) must stay";
  ASSERT_OK_AND_ASSIGN(nlohmann::json stats, ParsedStatsVia(a->client_socket));
  EXPECT_EQ(stats.at("client_socket").at("dropped_stalled").get<int64_t>(), 1);
}

}  // namespace
}  // namespace rplasma::testing
