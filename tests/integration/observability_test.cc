// What an operator reads from real processes (two nodes: rplasma-store + rplasma-manager each, one
// redis-server): `rplasma stats --manager` (human and --json) after a fetch, through the CLI
// binary; and the Prometheus metrics of both daemons, scraped over HTTP and from the textfile,
// checked by promtool (Debian's prometheus package) and against the fetches made.
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include <gtest/gtest.h>

#include "bench-mpi/launch/child_process.h"
#include "bench-mpi/launch/loopback_http.h"
#include "nlohmann/json.hpp"
#include "protocol/base/unique_fd.h"
#include "tests/integration/manager_test_cluster.h"
#include "tests/support/skip.h"
#include "tests/support/status_matchers.h"

namespace rplasma::testing {
namespace {

struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// A TCP port nobody listens on now (the kernel's pick for an ephemeral bind, released again).
// A free port for a daemon's --metrics-port (0 if none could be found: the test fails then).
uint16_t UnusedPort() { return bench::UnusedLoopbackPort().value_or(0); }

struct HttpReply {
  std::string head;  // status line and headers
  std::string body;
};

// GET http://127.0.0.1:port/path, read to EOF.
absl::StatusOr<HttpReply> HttpGet(uint16_t port, const std::string& path) {
  ASSIGN_OR_RETURN(std::string reply, bench::LoopbackHttpExchange(
                                          port, absl::StrCat("GET ", path, " HTTP/1.1\r\nHost: localhost\r\n\r\n")));
  const size_t end = reply.find("\r\n\r\n");
  if (end == std::string::npos) return absl::InternalError(absl::StrCat("no HTTP head in: ", reply));
  return HttpReply{reply.substr(0, end), reply.substr(end + 4)};
}

// The value of the sample whose series is exactly `series` (name and labels as written), or -1.
double SampleValue(const std::string& exposition, const std::string& series) {
  for (absl::string_view line : absl::StrSplit(exposition, '\n')) {
    if (!absl::StartsWith(line, series + " ")) continue;
    double value = -1;
    if (absl::SimpleAtod(line.substr(series.size() + 1), &value)) return value;
  }
  return -1;
}

class ObservabilityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RPLASMA_SKIP_IF_NO_REDIS_SERVER();
    ASSERT_OK_AND_ASSIGN(cluster_, ManagerTestCluster::Start());
    TestNodeOptions options;
    options.name = "a";
    // A's store serves its metrics too: what A's manager asks of it while serving B.
    a_store_port_ = UnusedPort();
    ASSERT_NE(a_store_port_, 0);
    options.extra_store_args = {absl::StrCat("--metrics-port=", a_store_port_)};
    ASSERT_OK_AND_ASSIGN(a_, cluster_->AddNode(options));
    // B serves its metrics on both daemons, and its manager also writes the textfile.
    store_port_ = UnusedPort();
    manager_port_ = UnusedPort();
    ASSERT_NE(store_port_, 0);
    ASSERT_NE(manager_port_, 0);
    metrics_file_ = cluster_->dir() + "/manager.prom";
    options.name = "b";
    options.extra_store_args = {absl::StrCat("--metrics-port=", store_port_)};
    options.extra_manager_args = {absl::StrCat("--metrics-port=", manager_port_), "--metrics-file=" + metrics_file_,
                                  "--metrics-file-interval=100ms"};
    ASSERT_OK_AND_ASSIGN(b_, cluster_->AddNode(options));
  }

  // promtool's verdict on `exposition`: OK, or what it said.
  absl::Status Promtool(const std::string& exposition) {
    const std::string path = cluster_->dir() + "/scrape.prom";
    std::ofstream(path, std::ios::binary) << exposition;
    const CommandResult r = Shell(absl::StrCat("promtool check metrics <", path));
    if (r.exit_code == 0 && r.out.empty() && r.err.empty()) return absl::OkStatus();
    return absl::InternalError(absl::StrCat("promtool exit ", r.exit_code, ": ", r.out, r.err));
  }

  // Runs `command` through the shell; stdout and stderr come back from files.
  CommandResult Shell(const std::string& command) {
    const std::string out = cluster_->dir() + "/cmd.out";
    const std::string err = cluster_->dir() + "/cmd.err";
    const int status = std::system(absl::StrCat(command, " >", out, " 2>", err).c_str());
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, bench::ReadWholeFile(out), bench::ReadWholeFile(err)};
  }

  // `rplasma --store-socket S --manager-socket M <args>` against `node`.
  CommandResult Cli(const TestNode& node, const std::string& args) {
    return Shell(absl::StrCat(RPLASMA_BIN_DIR, "/rplasma --store-socket ", node.store->socket_path(),
                              " --manager-socket ", node.client_socket, " ", args));
  }

  // Puts one object of `size` on A and fetches it into B.
  void FetchOneIntoB(const std::string& label, uint64_t size) {
    const ObjectID id = ObjectID::FromLabel(label);
    ASSERT_OK(PutTestObject(*a_->client, id, 1, size));
    ASSERT_OK(cluster_->WaitPublished(*a_, {id}));
    ASSERT_OK(b_->client->Fetch({id}, absl::Seconds(30)));
    ASSERT_OK(CheckTestObject(*b_->client, id, 1, size));
  }

  std::unique_ptr<ManagerTestCluster> cluster_;
  TestNode* a_ = nullptr;
  TestNode* b_ = nullptr;
  uint16_t a_store_port_ = 0;
  uint16_t store_port_ = 0;
  uint16_t manager_port_ = 0;
  std::string metrics_file_;
};

TEST_F(ObservabilityTest, StatsManagerPrintsTheManagersDocumentAsJsonAndIndented) {
  ASSERT_NO_FATAL_FAILURE(FetchOneIntoB("cli-stats", 100000));
  const CommandResult json = Cli(*b_, "stats --manager --json");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_EQ(std::count(json.out.begin(), json.out.end(), '\n'), 1) << json.out;
  const nlohmann::json stats = nlohmann::json::parse(json.out, nullptr, false);
  ASSERT_FALSE(stats.is_discarded()) << json.out;
  EXPECT_EQ(stats.at("fetches"), 1);
  EXPECT_EQ(stats.at("fetch_bytes"), 100000);
  EXPECT_EQ(stats.at("node_id"), b_->node_id);

  const CommandResult human = Cli(*b_, "stats --manager");
  ASSERT_EQ(human.exit_code, 0) << human.err;
  EXPECT_NE(human.out.find("\n  \"fetches\": 1,\n"), std::string::npos) << human.out;
  const nlohmann::json reparsed = nlohmann::json::parse(human.out, nullptr, false);
  ASSERT_FALSE(reparsed.is_discarded()) << human.out;
  EXPECT_EQ(reparsed.at("fetch_bytes"), 100000);

  // A manager socket nobody serves: one error line, exit 1.
  const CommandResult gone = Shell(absl::StrCat(RPLASMA_BIN_DIR, "/rplasma --store-socket ", b_->store->socket_path(),
                                                " --manager-socket ", cluster_->dir(), "/nobody.sock stats --manager"));
  EXPECT_EQ(gone.exit_code, 1);
  EXPECT_EQ(std::count(gone.err.begin(), gone.err.end(), '\n'), 1) << gone.err;
  ASSERT_OK(WaitStoreReleasedEverything(*b_->client, absl::Seconds(10)));
}

TEST_F(ObservabilityTest, TheOwnersManagerServesGetsAndPinsThroughTheSharedIndexWithNoStoreRequest) {
  // Issue 13: A's manager answers B's Get (1000 bytes) and Pin (1 MiB) by looking the objects up in
  // its store's shared index and holding them through its own slots: A's store sees no Get at all.
  ASSERT_NO_FATAL_FAILURE(FetchOneIntoB("owner-small", 1000));
  ASSERT_NO_FATAL_FAILURE(FetchOneIntoB("owner-large", 1u << 20));
  ASSERT_OK_AND_ASSIGN(HttpReply owner, HttpGet(a_store_port_, "/metrics"));
  EXPECT_EQ(SampleValue(owner.body, "rplasma_store_requests_total{request=\"put\"}"), 1) << owner.body;
  EXPECT_EQ(SampleValue(owner.body, "rplasma_store_requests_total{request=\"get\"}"), 0) << owner.body;
  EXPECT_EQ(SampleValue(owner.body, "rplasma_store_indexed_objects"), 2) << owner.body;
  // The manager's holds are gone once B has its copies (the pin is given back after the READ).
  EXPECT_TRUE(WaitFor(
      [&] {
        absl::StatusOr<StatsReply> stats = a_->client->Stats();
        return stats.ok() && stats->slot_references == 0 && stats->ref_count == 0;
      },
      absl::Seconds(10)));
}

TEST_F(ObservabilityTest, BothDaemonsServeMetricsThatPromtoolAcceptsAndThatCountTheFetches) {
  if (std::system("promtool --version >/dev/null 2>&1") != 0) {
    RPLASMA_SKIP_TEST("promtool",
                      "promtool is not installed (Debian package prometheus; scripts/setup.sh installs it)");
  }
  // One fetch by each protocol: 1000 bytes by Get, 1 MiB by Pin (the threshold is 64 KiB).
  ASSERT_NO_FATAL_FAILURE(FetchOneIntoB("metrics-small", 1000));
  ASSERT_NO_FATAL_FAILURE(FetchOneIntoB("metrics-large", 1u << 20));

  ASSERT_OK_AND_ASSIGN(HttpReply store, HttpGet(store_port_, "/metrics"));
  EXPECT_TRUE(absl::StartsWith(store.head, "HTTP/1.1 200 OK")) << store.head;
  EXPECT_TRUE(absl::StrContains(store.head, "Content-Type: text/plain; version=0.0.4")) << store.head;
  EXPECT_OK(Promtool(store.body)) << store.body;
  EXPECT_EQ(SampleValue(store.body, "rplasma_store_objects{state=\"sealed\"}"), 2) << store.body;
  EXPECT_EQ(SampleValue(store.body, "rplasma_store_seals_total"), 2) << store.body;
  EXPECT_EQ(SampleValue(store.body, "rplasma_store_sealed_bytes_total"), 1000 + (1u << 20)) << store.body;
  EXPECT_EQ(SampleValue(store.body, "rplasma_store_capacity_bytes"), 256u << 20) << store.body;
  EXPECT_GE(SampleValue(store.body, "rplasma_store_clients"), 2) << store.body;  // the manager and the test
  EXPECT_GE(SampleValue(store.body, "rplasma_store_requests_total{request=\"connect\"}"), 2) << store.body;

  ASSERT_OK_AND_ASSIGN(HttpReply manager, HttpGet(manager_port_, "/metrics"));
  EXPECT_TRUE(absl::StartsWith(manager.head, "HTTP/1.1 200 OK")) << manager.head;
  EXPECT_OK(Promtool(manager.body)) << manager.body;
  for (const char* protocol : {"get", "pin"}) {
    const std::string labels = absl::StrCat("{protocol=\"", protocol, "\",transport=\"tcp\"");
    EXPECT_EQ(SampleValue(manager.body, absl::StrCat("rplasma_manager_fetch_seconds_count", labels, "}")), 1)
        << manager.body;
    EXPECT_EQ(SampleValue(manager.body, absl::StrCat("rplasma_manager_fetch_seconds_bucket", labels, ",le=\"+Inf\"}")),
              1)
        << manager.body;
    EXPECT_GT(SampleValue(manager.body, absl::StrCat("rplasma_manager_fetch_seconds_sum", labels, "}")), 0)
        << manager.body;
  }
  // Per-phase time: the transfer phase of each protocol took some time; a Pin read its 1 MiB.
  for (const char* protocol : {"get", "pin"}) {
    for (const char* phase : {"lookup", "connect", "transfer", "verify", "seal"}) {
      EXPECT_GE(SampleValue(manager.body, absl::StrCat("rplasma_manager_fetch_phase_seconds_total{protocol=\"",
                                                       protocol, "\",phase=\"", phase, "\"}")),
                0)
          << protocol << " " << phase << ": " << manager.body;
    }
    EXPECT_GT(SampleValue(manager.body, absl::StrCat("rplasma_manager_fetch_phase_seconds_total{protocol=\"", protocol,
                                                     "\",phase=\"transfer\"}")),
              0)
        << manager.body;
  }
  // The publish phase is there (B publishes its copies lazily: maybe none yet).
  EXPECT_GE(SampleValue(manager.body, "rplasma_manager_publish_seconds_total"), 0) << manager.body;
  EXPECT_GE(SampleValue(manager.body, "rplasma_manager_publish_updates_total"), 0) << manager.body;
  EXPECT_EQ(SampleValue(manager.body, "rplasma_manager_fetched_bytes_total{protocol=\"get\"}"), 1000);
  EXPECT_EQ(SampleValue(manager.body, "rplasma_manager_fetched_bytes_total{protocol=\"pin\"}"), 1u << 20);
  EXPECT_EQ(SampleValue(manager.body, "rplasma_manager_fetch_requests_total"), 2);
  // The Pin path's 1 MiB arrived in messages over tcp: the NIC's received bytes are at least that.
  EXPECT_GE(SampleValue(manager.body, "rplasma_manager_transport_received_bytes_total{transport=\"tcp\"}"),
            1000 + (1u << 20));
  EXPECT_EQ(
      SampleValue(manager.body, absl::StrCat("rplasma_manager_info{node_id=\"", b_->node_id, "\",transport=\"tcp\"}")),
      1);

  // Anything but GET /metrics is refused, and the endpoint still serves afterwards.
  ASSERT_OK_AND_ASSIGN(HttpReply other, HttpGet(manager_port_, "/"));
  EXPECT_TRUE(absl::StartsWith(other.head, "HTTP/1.1 404")) << other.head;

  // The textfile (rewritten every 100 ms) catches up with the fetches and passes promtool too.
  std::string text;
  ASSERT_TRUE(WaitFor(
      [&] {
        text = bench::ReadWholeFile(metrics_file_);
        return SampleValue(text, "rplasma_manager_fetch_requests_total") == 2;
      },
      absl::Seconds(10)))
      << text;
  EXPECT_OK(Promtool(text));
  ASSERT_OK(WaitStoreReleasedEverything(*b_->client, absl::Seconds(10)));
}

}  // namespace
}  // namespace rplasma::testing
