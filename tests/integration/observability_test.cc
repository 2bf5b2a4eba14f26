// What an operator reads from real processes (two nodes: rplasma-store + rplasma-manager each, one
// redis-server): `rplasma stats --manager` (human and --json) after a fetch, through the CLI binary.
#include <sys/wait.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "tests/integration/manager_test_cluster.h"
#include "tests/support/status_matchers.h"

namespace rplasma::testing {
namespace {

struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class ObservabilityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RPLASMA_SKIP_IF_NO_REDIS_SERVER();
    ASSERT_OK_AND_ASSIGN(cluster_, ManagerTestCluster::Start());
    TestNodeOptions options;
    options.name = "a";
    ASSERT_OK_AND_ASSIGN(a_, cluster_->AddNode(options));
    options.name = "b";
    ASSERT_OK_AND_ASSIGN(b_, cluster_->AddNode(options));
  }

  // Runs `command` through the shell; stdout and stderr come back from files.
  CommandResult Shell(const std::string& command) {
    const std::string out = cluster_->dir() + "/cmd.out";
    const std::string err = cluster_->dir() + "/cmd.err";
    const int status = std::system(absl::StrCat(command, " >", out, " 2>", err).c_str());
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, ReadFile(out), ReadFile(err)};
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
  const CommandResult gone = Shell(absl::StrCat(RPLASMA_BIN_DIR, "/rplasma --store-socket ",
                                                b_->store->socket_path(), " --manager-socket ", cluster_->dir(),
                                                "/nobody.sock stats --manager"));
  EXPECT_EQ(gone.exit_code, 1);
  EXPECT_EQ(std::count(gone.err.begin(), gone.err.end(), '\n'), 1) << gone.err;
  ASSERT_OK(WaitStoreReleasedEverything(*b_->client, absl::Seconds(10)));
}

}  // namespace
}  // namespace rplasma::testing
