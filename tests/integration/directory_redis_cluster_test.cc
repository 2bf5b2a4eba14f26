// RedisDirectory against a real Redis Cluster (3 masters, 3 replicas on loopback): routing by hash
// slot with one pipeline per master, seeds that are dead or replicas, slot migration (-ASK, then
// -MOVED), a slot no master serves, and a master killed and replaced by its replica.
#include <signal.h>

#include <atomic>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "bench-mpi/launch/redis_cluster.h"
#include "bench-mpi/launch/redis_server.h"
#include "manager/directory/directory_codec.h"
#include "manager/directory/redis_cluster_slots.h"
#include "manager/directory/redis_directory.h"
#include "tests/integration/directory_test_values.h"
#include "tests/support/skip.h"
#include "tests/support/status_matchers.h"
#include "tests/support/wait_for.h"

namespace rplasma {
namespace {

using ::rplasma::testing::HasErrorCode;
using ::rplasma::testing::kFailFastSlack;
using ::rplasma::testing::Location;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr int kMasters = 3;

// How long this thread has waited for a CPU so far (the second field of
// /proc/thread-self/schedstat; zero where the kernel does not say). A bound on a lookup's wall time
// reports it beside a miss: the part of the time the process was starved, not waiting itself.
absl::Duration WaitedForCpu() {
  std::ifstream in("/proc/thread-self/schedstat");
  uint64_t run_ns = 0;
  uint64_t wait_ns = 0;
  if (!(in >> run_ns >> wait_ns)) return absl::ZeroDuration();
  return absl::Nanoseconds(wait_ns);
}

// Ids "<label>-<i>", i = 0..count-1.
std::vector<ObjectID> Ids(const std::string& label, int count) {
  std::vector<ObjectID> ids;
  for (int i = 0; i < count; ++i) ids.push_back(ObjectID::FromLabel(label + "-" + std::to_string(i)));
  return ids;
}

// An id whose object key (under `prefix`) hashes to `slot`.
ObjectID IdInSlot(const std::string& prefix, int slot, const std::string& label) {
  const DirectoryCodec codec(prefix);
  for (int i = 0;; ++i) {
    ObjectID id = ObjectID::FromLabel(label + "-" + std::to_string(i));
    if (KeyHashSlot(codec.ObjectKey(id)) == slot) return id;
  }
}

class ClusterTestBase : public ::testing::Test {
 protected:
  // A directory on the cluster's seeds (or `address`), under `prefix`; registered as `node_id`
  // unless that is empty.
  static std::unique_ptr<RedisDirectory> NewDirectory(const std::string& address, const std::string& prefix,
                                                      const std::string& node_id,
                                                      absl::Duration op_timeout = absl::Seconds(1)) {
    RedisDirectoryOptions options;
    options.address = address;
    options.key_prefix = prefix;
    options.op_timeout = op_timeout;
    options.liveness_cache = absl::Seconds(30);  // a lookup's second round trip only the first time
    absl::StatusOr<std::unique_ptr<RedisDirectory>> directory = RedisDirectory::Create(options);
    EXPECT_OK(directory);
    if (!directory.ok()) return nullptr;
    if (!node_id.empty()) {
      EXPECT_OK((*directory)->RegisterNode(NodeRecord{node_id, "127.0.0.1:7000", "", 1}));
    }
    return std::move(directory).value();
  }

  static void Publish(RedisDirectory& directory, const std::vector<ObjectID>& ids) {
    std::vector<std::pair<ObjectID, ObjectLocation>> objects;
    for (size_t i = 0; i < ids.size(); ++i) objects.emplace_back(ids[i], Location(i, 100 + i));
    ASSERT_OK(directory.PublishObjects(objects));
  }

  // Every id of `ids` is found on `node_id` alone, with what Publish wrote.
  static void ExpectAllFound(RedisDirectory& directory, const std::vector<ObjectID>& ids, const std::string& node_id) {
    ASSERT_OK_AND_ASSIGN(auto found, directory.Lookup(ids));
    ASSERT_EQ(found.size(), ids.size());
    for (size_t i = 0; i < ids.size(); ++i) {
      ASSERT_EQ(found[i].size(), 1u) << i;
      EXPECT_EQ(found[i][0].node_id, node_id);
      EXPECT_EQ(found[i][0].object.generation, 100 + i);
      EXPECT_EQ(found[i][0].object.data_size, i);
    }
  }
};

// One cluster for the whole suite; each test uses its own key prefix. Tests leave every slot
// served when they end.
class RedisClusterDirectoryTest : public ClusterTestBase {
 protected:
  static void SetUpTestSuite() {
    if (bench::RedisServer::FindBinary().empty()) return;
    absl::StatusOr<std::unique_ptr<bench::RedisCluster>> cluster = bench::RedisCluster::Start();
    if (cluster.ok()) {
      cluster_ = std::move(cluster).value().release();
    } else {
      start_error_ = new absl::Status(cluster.status());
    }
  }
  static void TearDownTestSuite() {
    delete cluster_;
    cluster_ = nullptr;
    delete start_error_;
    start_error_ = nullptr;
  }
  void SetUp() override {
    RPLASMA_SKIP_IF_NO_REDIS_SERVER();
    ASSERT_NE(cluster_, nullptr) << (start_error_ != nullptr ? start_error_->ToString() : "no cluster");
  }

  static bench::RedisCluster* cluster_;
  static absl::Status* start_error_;
};

bench::RedisCluster* RedisClusterDirectoryTest::cluster_ = nullptr;
absl::Status* RedisClusterDirectoryTest::start_error_ = nullptr;

TEST_F(RedisClusterDirectoryTest, PublishLookupAndRemoveWorkAcrossEverySlotOfEveryMaster) {
  std::unique_ptr<RedisDirectory> a = NewDirectory(cluster_->seeds(), "across", "node-a");
  std::unique_ptr<RedisDirectory> b = NewDirectory(cluster_->seeds(), "across", "node-b");
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  const std::vector<ObjectID> ids = Ids("across", 600);
  std::vector<int> per_master(static_cast<size_t>(cluster_->size()), 0);
  const DirectoryCodec codec("across");
  for (const ObjectID& id : ids) {
    ASSERT_OK_AND_ASSIGN(int master, cluster_->MasterOf(KeyHashSlot(codec.ObjectKey(id)), 0));
    ASSERT_GE(master, 0);
    per_master[static_cast<size_t>(master)]++;
  }
  for (int m = 0; m < kMasters; ++m) EXPECT_GT(per_master[static_cast<size_t>(m)], 100) << "master " << m;

  Publish(*a, ids);
  ExpectAllFound(*b, ids, "node-a");
  // Warm (node-a in the liveness cache): one pipeline per master, whatever the batch size.
  const uint64_t ops_before = b->stats()["ops"];
  ExpectAllFound(*b, ids, "node-a");
  EXPECT_EQ(b->stats()["ops"] - ops_before, static_cast<uint64_t>(kMasters));

  ASSERT_OK_AND_ASSIGN(NodeRecord record, b->GetNode("node-a"));
  EXPECT_EQ(record.tcp_address, "127.0.0.1:7000");
  ASSERT_OK_AND_ASSIGN(std::vector<ObjectID> own, a->ListOwnObjects());
  EXPECT_EQ(own.size(), ids.size());

  const std::vector<ObjectID> removed(ids.begin(), ids.begin() + 300);
  ASSERT_OK(a->RemoveObjects(removed));
  ASSERT_OK_AND_ASSIGN(auto after, b->Lookup(ids));
  for (size_t i = 0; i < ids.size(); ++i) EXPECT_EQ(after[i].size(), i < 300 ? 0u : 1u) << i;

  ASSERT_OK(a->UnregisterNode());
  EXPECT_THAT(b->GetNode("node-a"), HasErrorCode(ErrorCode::kObjectNotFound));
  ASSERT_OK_AND_ASSIGN(auto gone, b->Lookup(ids));
  for (size_t i = 0; i < ids.size(); ++i) ASSERT_THAT(gone[i], IsEmpty()) << i;
  for (RedisDirectory* d : {a.get(), b.get()}) {
    EXPECT_EQ(d->stats()["errors"], 0u);
    EXPECT_EQ(d->stats()["moved_redirects"], 0u);  // a stable cluster: the map was right
  }
}

TEST_F(RedisClusterDirectoryTest, SweepFindsExpiredNodesWhateverMasterTheirKeysLiveOn) {
  std::unique_ptr<RedisDirectory> a = NewDirectory(cluster_->seeds(), "sweep", "node-a");
  ASSERT_NE(a, nullptr);
  RedisDirectoryOptions options;
  options.address = cluster_->seeds();
  options.key_prefix = "sweep";
  options.node_ttl = absl::Milliseconds(100);
  ASSERT_OK_AND_ASSIGN(auto b, RedisDirectory::Create(options));
  ASSERT_OK(b->RegisterNode(NodeRecord{"node-b", "", "", 1}));
  const std::vector<ObjectID> ids = Ids("sweep", 60);
  Publish(*b, ids);
  ASSERT_TRUE(testing::WaitFor([&] { return !a->GetNode("node-b").ok(); }, absl::Seconds(5)));
  ASSERT_OK(a->SweepExpiredNodes());
  EXPECT_EQ(a->stats()["swept_nodes"], 1u);
  EXPECT_EQ(a->stats()["cleaned_entries"], ids.size());
}

TEST_F(RedisClusterDirectoryTest, ADeadFirstSeedIsSkipped) {
  ASSERT_OK_AND_ASSIGN(int dead_port, bench::PickFreeLoopbackPort());
  const std::string seeds = "127.0.0.1:" + std::to_string(dead_port) + "," + cluster_->seeds();
  std::unique_ptr<RedisDirectory> a = NewDirectory(seeds, "deadseed", "node-a");
  ASSERT_NE(a, nullptr);
  const std::vector<ObjectID> ids = Ids("deadseed", 50);
  Publish(*a, ids);
  ExpectAllFound(*a, ids, "node-a");
}

TEST_F(RedisClusterDirectoryTest, OneReplicaAsTheOnlySeedIsEnoughToLearnTheWholeCluster) {
  std::unique_ptr<RedisDirectory> a = NewDirectory(cluster_->node(kMasters).address(), "replicaseed", "node-a");
  ASSERT_NE(a, nullptr);
  const std::vector<ObjectID> ids = Ids("replicaseed", 50);
  Publish(*a, ids);
  ExpectAllFound(*a, ids, "node-a");
  EXPECT_EQ(a->stats()["moved_redirects"], 0u);
}

TEST_F(RedisClusterDirectoryTest, AMigratingSlotIsFollowedThroughAskThenMovedWhileLookupsRun) {
  const std::string prefix = "migrate";
  const DirectoryCodec codec(prefix);
  std::unique_ptr<RedisDirectory> a = NewDirectory(cluster_->seeds(), prefix, "node-a");
  std::unique_ptr<RedisDirectory> reader = NewDirectory(cluster_->seeds(), prefix, "");
  ASSERT_NE(a, nullptr);
  ASSERT_NE(reader, nullptr);
  const ObjectID old_id = ObjectID::FromLabel("migrating-old");
  const int slot = KeyHashSlot(codec.ObjectKey(old_id));
  const ObjectID new_id = IdInSlot(prefix, slot, "migrating-new");
  ASSERT_OK(a->PublishObject(old_id, Location(0, 100)));
  ASSERT_OK_AND_ASSIGN(const int source, cluster_->MasterOf(slot, 0));
  ASSERT_GE(source, 0);
  int target = -1;
  for (int probe = 0; probe < kRedisClusterSlots && target < 0; probe += kRedisClusterSlots / (2 * kMasters)) {
    ASSERT_OK_AND_ASSIGN(const int master, cluster_->MasterOf(probe, source));
    if (master >= 0 && master != source) target = master;
  }
  ASSERT_GE(target, 0);

  // A reader looks the old id up all along; not one lookup may fail or miss.
  std::atomic<bool> stop{false};
  std::atomic<int> lookups{0};
  std::atomic<int> failures{0};
  std::thread background([&] {
    while (!stop.load()) {
      absl::StatusOr<std::vector<std::vector<ObjectLocation>>> found = reader->Lookup({old_id});
      if (!found.ok() || (*found)[0].size() != 1) failures++;
      lookups++;
    }
  });

  const std::string slot_text = std::to_string(slot);
  ASSERT_OK(cluster_->Command(target, {"CLUSTER", "SETSLOT", slot_text, "IMPORTING", cluster_->node_id(source)}));
  ASSERT_OK(cluster_->Command(source, {"CLUSTER", "SETSLOT", slot_text, "MIGRATING", cluster_->node_id(target)}));
  // A key the source does not hold: written where the source's -ASK sends it.
  ASSERT_OK(a->PublishObject(new_id, Location(1, 101)));
  EXPECT_GE(a->stats()["ask_redirects"], 1u);
  ExpectAllFound(*a, {old_id, new_id}, "node-a");
  // Move the old key too: now both are asked for at the target.
  ASSERT_OK(cluster_->Command(
      source, {"MIGRATE", cluster_->node(target).host(), std::to_string(cluster_->node(target).port()), "", "0", "5000",
               "KEYS", codec.ObjectKey(old_id)}));
  const uint64_t asks_before = a->stats()["ask_redirects"];
  ExpectAllFound(*a, {old_id, new_id}, "node-a");
  EXPECT_GE(a->stats()["ask_redirects"] - asks_before, 2u);
  // The slot is the target's: the source answers -MOVED from now on.
  for (int i : {target, source}) {
    ASSERT_OK(cluster_->Command(i, {"CLUSTER", "SETSLOT", slot_text, "NODE", cluster_->node_id(target)}));
  }
  for (int i = 0; i < cluster_->size(); ++i) {
    if (i == target || i == source) continue;
    // Replicas refuse SETSLOT ("only with masters"): they learn it from their masters.
    (void)cluster_->Command(i, {"CLUSTER", "SETSLOT", slot_text, "NODE", cluster_->node_id(target)});
  }
  ExpectAllFound(*a, {old_id, new_id}, "node-a");
  EXPECT_GE(a->stats()["moved_redirects"], 1u);
  ASSERT_TRUE(testing::WaitFor([&] { return lookups.load() >= 20; }, absl::Seconds(5)));
  stop = true;
  background.join();
  EXPECT_EQ(failures.load(), 0) << "of " << lookups.load() << " lookups";
  EXPECT_EQ(a->stats()["errors"], 0u);
  EXPECT_EQ(reader->stats()["errors"], 0u);
  ASSERT_OK(cluster_->WaitForSlotServed(slot, absl::Seconds(10)));
}

TEST_F(RedisClusterDirectoryTest, ASlotNoMasterServesFailsClearlyWithinTheOperationTimeout) {
  const std::string prefix = "unserved";
  const DirectoryCodec codec(prefix);
  const absl::Duration op_timeout = absl::Milliseconds(300);
  std::unique_ptr<RedisDirectory> a = NewDirectory(cluster_->seeds(), prefix, "node-a", op_timeout);
  ASSERT_NE(a, nullptr);
  const ObjectID id = ObjectID::FromLabel("unserved");
  const int slot = KeyHashSlot(codec.ObjectKey(id));
  ASSERT_OK(a->PublishObject(id, Location(0, 100)));
  ASSERT_OK_AND_ASSIGN(const int owner, cluster_->MasterOf(slot, 0));
  ASSERT_GE(owner, 0);

  for (int i = 0; i < cluster_->size(); ++i) {
    ASSERT_OK(cluster_->Command(i, {"CLUSTER", "DELSLOTS", std::to_string(slot)}));
  }
  for (int attempt = 0; attempt < 2; ++attempt) {  // the stale map, then the refreshed one
    const absl::Time start = absl::Now();
    const absl::Duration starved_before = WaitedForCpu();
    absl::StatusOr<std::vector<std::vector<ObjectLocation>>> found = a->Lookup({id});
    EXPECT_THAT(found, HasErrorCode(ErrorCode::kUnavailable)) << attempt;
    EXPECT_THAT(std::string(found.status().message()), HasSubstr("hash slot " + std::to_string(slot))) << attempt;
    EXPECT_LT(absl::Now() - start, op_timeout + kFailFastSlack)
        << attempt << "; of which waiting for a CPU: " << WaitedForCpu() - starved_before;
  }
  // Other slots are still served.
  const ObjectID elsewhere = IdInSlot(prefix, (slot + kRedisClusterSlots / 2) % kRedisClusterSlots, "elsewhere");
  ASSERT_OK(a->PublishObject(elsewhere, Location(0, 100)));

  ASSERT_OK(cluster_->Command(owner, {"CLUSTER", "ADDSLOTS", std::to_string(slot)}));
  ASSERT_OK(cluster_->WaitForSlotServed(slot, absl::Seconds(10)));
  ExpectAllFound(*a, {id}, "node-a");  // DELSLOTS only unassigned the slot: its keys stayed
}

TEST_F(RedisClusterDirectoryTest, AHungMasterFailsOperationsWithinTheTimeoutAndIsUsedAgainWhenItAnswers) {
  const absl::Duration op_timeout = absl::Milliseconds(300);
  std::unique_ptr<RedisDirectory> a = NewDirectory(cluster_->seeds(), "hung", "node-a", op_timeout);
  ASSERT_NE(a, nullptr);
  const std::vector<ObjectID> ids = Ids("hung", 60);  // on every master
  Publish(*a, ids);
  ExpectAllFound(*a, ids, "node-a");
  ASSERT_OK_AND_ASSIGN(const int master, cluster_->MasterOf(KeyHashSlot(DirectoryCodec("hung").ObjectKey(ids[0])), 0));
  ASSERT_GE(master, 0);

  // Stopped for less than the cluster's node timeout: no failover, the master just does not answer.
  ASSERT_EQ(::kill(cluster_->node(master).pid(), SIGSTOP), 0);
  const absl::Time start = absl::Now();
  const absl::Duration starved_before = WaitedForCpu();
  absl::StatusOr<std::vector<std::vector<ObjectLocation>>> found = a->Lookup(ids);
  const absl::Duration took = absl::Now() - start;
  const absl::Duration starved = WaitedForCpu() - starved_before;
  ASSERT_EQ(::kill(cluster_->node(master).pid(), SIGCONT), 0);
  EXPECT_THAT(found, HasErrorCode(ErrorCode::kUnavailable));
  EXPECT_THAT(std::string(found.status().message()), HasSubstr("unanswered at the deadline"));
  EXPECT_LT(took, op_timeout + kFailFastSlack) << "of which waiting for a CPU: " << starved;

  ExpectAllFound(*a, ids, "node-a");
  EXPECT_EQ(a->stats()["reconnects"], 1u);  // a master stopped answering: the owner is asked to re-publish
  ASSERT_OK(cluster_->WaitForSlotServed(0, absl::Seconds(10)));
}

// A cluster of its own: it loses a master.
class RedisClusterFailoverTest : public ClusterTestBase {
 protected:
  void SetUp() override {
    RPLASMA_SKIP_IF_NO_REDIS_SERVER();
    ASSERT_OK_AND_ASSIGN(cluster_, bench::RedisCluster::Start());
  }

  std::unique_ptr<bench::RedisCluster> cluster_;
};

TEST_F(RedisClusterFailoverTest, AKilledMastersReplicaTakesOverAndLookupsSucceedAgainWithItsData) {
  std::unique_ptr<RedisDirectory> a = NewDirectory(cluster_->seeds(), "failover", "node-a");
  std::unique_ptr<RedisDirectory> b = NewDirectory(cluster_->seeds(), "failover", "node-b");
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  // c knows the cluster from one seed, a master other than the one killed, and stays idle until
  // the killed master is back as a replica: it never sees a connection fail.
  std::unique_ptr<RedisDirectory> c = NewDirectory(cluster_->node(1).address(), "failover", "");
  ASSERT_NE(c, nullptr);
  std::atomic<int> republish_requests{0};
  a->SetReconnectCallback([&] { republish_requests++; });
  const std::vector<ObjectID> ids = Ids("failover", 300);
  Publish(*a, ids);
  ExpectAllFound(*b, ids, "node-a");  // b holds a connection to every master
  ASSERT_OK(cluster_->WaitForReplicasInSync(absl::Seconds(5)));

  cluster_->Kill(0);
  const absl::Time killed = absl::Now();
  absl::StatusOr<std::vector<std::vector<ObjectLocation>>> found;
  do {
    found = b->Lookup(ids);
  } while (!found.ok() && absl::Now() - killed < absl::Seconds(10));
  const absl::Duration recovered_after = absl::Now() - killed;
  ASSERT_OK(found);
  EXPECT_LT(recovered_after, absl::Seconds(5));
  ExpectAllFound(*b, ids, "node-a");  // everything written before the kill, from the promoted replica
  EXPECT_GE(b->stats()["reconnects"], 1u);

  // a learns of the failover on its next call and asks its owner to re-publish.
  ASSERT_OK(a->Heartbeat());
  const std::vector<ObjectID> more = Ids("after-failover", 100);
  Publish(*a, more);
  ExpectAllFound(*b, more, "node-a");
  EXPECT_GE(republish_requests.load(), 1);

  // The killed master restarts and rejoins as a replica of its successor, at its old address.
  ASSERT_OK(cluster_->node(0).Restart());
  ASSERT_TRUE(testing::WaitFor(
      [&] {
        absl::StatusOr<int> master = cluster_->MasterOf(0, 0);
        return master.ok() && *master > 0;
      },
      absl::Seconds(10)));
  // c's map still names it for its old slots: its -MOVED answers lead c to the new master, and the
  // refreshed map shows the old master serving nothing: c asks for a re-publication too.
  ExpectAllFound(*c, ids, "node-a");
  EXPECT_GE(c->stats()["moved_redirects"], 1u) << c->stats().ToJson().str();
  EXPECT_EQ(c->stats()["reconnects"], 1u);
}

}  // namespace
}  // namespace rplasma
