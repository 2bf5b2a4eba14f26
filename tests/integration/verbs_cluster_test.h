// VerbsClusterTest (VerbsClusterTestOn<Base>): the fixture of the manager tests over verbs (label rdma-guest, run
// inside tests/rdma-vm's Soft-RoCE guest): the RDMA netdev's address (the test skips without a device, and fails inside
// the guest), a redis-server, and nodes whose managers speak verbs on it.
#ifndef RPLASMA_TESTS_INTEGRATION_VERBS_CLUSTER_TEST_H_
#define RPLASMA_TESTS_INTEGRATION_VERBS_CLUSTER_TEST_H_

#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/integration/manager_test_cluster.h"
#include "tests/support/status_matchers.h"
#include "tests/unit/transport_verbs/verbs_test_env.h"

namespace rplasma::testing {

// `Base`: ::testing::Test, or a ::testing::TestWithParam<T> for a parameterized suite.
template <typename Base = ::testing::Test>
class VerbsClusterTestOn : public Base {
 protected:
  void SetUp() override {
    RPLASMA_REQUIRE_VERBS_IP(ip);
    ip_ = ip;
    RPLASMA_SKIP_IF_NO_REDIS_SERVER();
    ASSERT_OK_AND_ASSIGN(cluster_, ManagerTestCluster::Start());
  }

  // A node whose manager speaks verbs on the RDMA netdev with `threshold`; `extra` flags come after
  // the fixture's (a later flag wins). Stores MAP_POPULATE their arena: keep `store_memory` small,
  // the guest may run under TCG.
  TestNode* AddVerbsNode(const std::string& threshold, uint64_t store_memory, const std::vector<std::string>& extra) {
    TestNodeOptions options;
    options.threshold = threshold;
    options.store_memory = store_memory;
    options.extra_manager_args = {"--transport=verbs", "--listen=" + ip_ + ":0"};
    options.extra_manager_args.insert(options.extra_manager_args.end(), extra.begin(), extra.end());
    absl::StatusOr<TestNode*> node = cluster_->AddNode(options);
    EXPECT_OK(node.status());
    return node.ok() ? *node : nullptr;
  }

  std::string ip_;
  std::unique_ptr<ManagerTestCluster> cluster_;
};

using VerbsClusterTest = VerbsClusterTestOn<>;

}  // namespace rplasma::testing

#endif  // RPLASMA_TESTS_INTEGRATION_VERBS_CLUSTER_TEST_H_
