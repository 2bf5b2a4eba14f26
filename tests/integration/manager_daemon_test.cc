// rplasma-manager as a daemon (issue 12): SIGHUP does not stop it, and a node configured with
// dashed flags and the size syntax serves like one configured the old way.
#include <signal.h>

#include <gtest/gtest.h>

#include "tests/integration/manager_test_cluster.h"
#include "tests/support/skip.h"
#include "tests/support/status_matchers.h"

namespace rplasma::testing {
namespace {

TEST(ManagerDaemonTest, SighupLeavesTheManagerServing) {
  RPLASMA_SKIP_IF_NO_REDIS_SERVER();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<ManagerTestCluster> cluster, ManagerTestCluster::Start());
  // The cluster spells its flags with underscores; these two with dashes and sizes with decimals.
  TestNodeOptions options;
  options.name = "hup";
  options.extra_manager_args = {"--read-chunk-bytes=1.5M", "--lease-ttl=20s"};
  ASSERT_OK_AND_ASSIGN(TestNode * node, cluster->AddNode(options));
  ASSERT_TRUE(node->manager->running());
  node->manager->Signal(SIGHUP);
  // SIGHUP's default action would have ended it at once; give it the chance, then ask it.
  EXPECT_FALSE(node->manager->Wait(absl::Milliseconds(300)).has_value()) << node->manager_log;
  ASSERT_OK_AND_ASSIGN(std::string stats, StatsVia(node->client_socket));
  EXPECT_NE(stats.find(node->node_id), std::string::npos) << stats;
}

}  // namespace
}  // namespace rplasma::testing
