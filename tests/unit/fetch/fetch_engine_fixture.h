// FetchEngineTest: a fetch engine of node "a" over fakes (fetch_fakes.h): node "b"'s peer service
// on its own store (owner_), reached through an in-process channel; the directory and the clock
// are fakes too. Shared by the engine's test files.
#ifndef RPLASMA_TESTS_UNIT_FETCH_FETCH_ENGINE_FIXTURE_H_
#define RPLASMA_TESTS_UNIT_FETCH_FETCH_ENGINE_FIXTURE_H_

#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "manager/fetch/fetch_engine.h"
#include "manager/peer/peer_service.h"
#include "tests/support/fake_clock.h"
#include "tests/support/status_matchers.h"
#include "tests/support/test_bytes.h"
#include "tests/unit/fetch/fetch_fakes.h"

namespace rplasma::fetch {

using ::rplasma::testing::FakeChannel;
using ::rplasma::testing::FakeClock;
using ::rplasma::testing::FakeConnector;
using ::rplasma::testing::FakeDirectory;
using ::rplasma::testing::FakeLocalStore;
using ::rplasma::testing::HasErrorCode;

// A second owner, reachable as `name`.
struct OtherNode {
  OtherNode(FakeConnector& connector, const std::string& name) : connector(connector), name(name) {
    service = *peer::PeerService::Create(peer::PeerServiceOptions{}, &store, testing::ArenaRegion);
    channel = std::make_shared<FakeChannel>(service.get(), &store, 2);
    connector.Add(name, channel);
  }
  ~OtherNode() {
    connector.Add(name, nullptr);
    channel.reset();
    service->Shutdown();
  }
  FakeConnector& connector;
  const std::string name;
  FakeLocalStore store{16 << 20};
  std::unique_ptr<peer::PeerService> service;
  std::shared_ptr<FakeChannel> channel;
};

class FetchEngineTest : public ::testing::Test {
 protected:
  FetchEngineTest() : owner_(64 << 20), local_(64 << 20) {
    peer::PeerServiceOptions service_options;
    service_options.leases.ttl = absl::Seconds(30);
    service_ = *peer::PeerService::Create(service_options, &owner_, testing::ArenaRegion);
    channel_ = std::make_shared<FakeChannel>(service_.get(), &owner_, 1);
    connector_.Add("b", channel_);
    ThresholdPolicyOptions policy_options;
    policy_options.setting.table.default_bytes = 4096;
    UsePolicy(policy_options);
  }
  // A new engine (on the same stores, directory and peer) deciding by a policy of `policy_options`.
  // `guess_owner`: FetchEngineOptions::guess_owner.
  void UsePolicy(const ThresholdPolicyOptions& policy_options, bool guess_owner = true) {
    engine_.reset();
    policy_ = std::make_unique<ThresholdPolicy>(policy_options);
    FetchEngineOptions options;
    options.self_node_id = "a";
    options.read_chunk_bytes = 64 << 10;
    options.guess_owner = guess_owner;
    options.lease_ender = lease_ender_;
    engine_ =
        std::make_unique<FetchEngine>(options, &directory_, &local_, &connector_, policy_.get(), &stats_, &clock_);
  }
  ~FetchEngineTest() override {
    channel_.reset();
    connector_.Add("b", nullptr);
    service_->Shutdown();
  }

  // Puts `id` into the owner's store and publishes it (as node "b").
  FakeLocalStore::Entry PutRemote(const ObjectID& id, const std::string& data, const std::string& metadata = "") {
    FakeLocalStore::Entry e = owner_.Put(id, data, metadata);
    EXPECT_OK(directory_.PublishObject(id, ObjectLocation{"b", e.description()}));
    return e;
  }

  FakeClock clock_;  // the engine's: back-off sleeps take no real time
  FakeLocalStore owner_;
  FakeLocalStore local_;
  FakeDirectory directory_;
  FakeConnector connector_;
  manager::ManagerStats stats_;
  std::unique_ptr<peer::PeerService> service_;
  std::shared_ptr<FakeChannel> channel_;
  std::unique_ptr<ThresholdPolicy> policy_;
  peer::LeaseEnder* lease_ender_ = nullptr;  // the next UsePolicy's; nullptr: transfers unpin themselves
  std::unique_ptr<FetchEngine> engine_;
};

}  // namespace rplasma::fetch

#endif  // RPLASMA_TESTS_UNIT_FETCH_FETCH_ENGINE_FIXTURE_H_
