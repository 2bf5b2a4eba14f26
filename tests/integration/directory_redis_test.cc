// RedisDirectory against a real redis-server: node records, object locations, liveness, cleaning.
#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "bench-mpi/launch/redis_server.h"
#include "manager/directory/redis_connection.h"
#include "manager/directory/redis_directory.h"
#include "tests/integration/directory_test_values.h"
#include "tests/support/fake_clock.h"
#include "tests/support/skip.h"
#include "tests/support/status_matchers.h"
#include "tests/support/wait_for.h"

namespace rplasma {
namespace {

using ::rplasma::testing::HasErrorCode;
using ::rplasma::testing::Location;
using ::rplasma::testing::NodeIds;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

NodeRecord Node(const std::string& id) { return NodeRecord{id, "127.0.0.1:7000", "", 42}; }

class RedisDirectoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RPLASMA_SKIP_IF_NO_REDIS_SERVER();
    ASSERT_OK_AND_ASSIGN(redis_, bench::RedisServer::Start());
  }

  RedisDirectoryOptions Options(absl::Duration ttl = absl::Seconds(5)) const {
    RedisDirectoryOptions options;
    options.address = redis_->address();
    options.node_ttl = ttl;
    return options;
  }

  // A directory with a registered node `node_id`, on `clock` (its liveness cache, deadlines, sweeps).
  std::unique_ptr<RedisDirectory> NewNode(const std::string& node_id, absl::Duration ttl = absl::Seconds(5),
                                          Clock* clock = &Clock::Real()) {
    RedisDirectoryOptions options = Options(ttl);
    options.clock = clock;
    absl::StatusOr<std::unique_ptr<RedisDirectory>> directory = RedisDirectory::Create(options);
    EXPECT_OK(directory);
    if (!directory.ok()) return nullptr;
    EXPECT_OK((*directory)->RegisterNode(Node(node_id)));
    return std::move(directory).value();
  }

  // One raw command, for inspecting what the directory left in Redis: its integer reply, or -1
  // (and a test failure) if the command failed.
  int64_t Raw(RedisCommand command) {
    if (raw_ == nullptr) {
      auto connected = RedisConnection::Connect(redis_->address(), absl::Seconds(2));
      if (!connected.ok()) {
        ADD_FAILURE() << connected.status();
        return -1;
      }
      raw_ = std::move(connected).value();
    }
    auto replies = raw_->Pipeline({command}, absl::Now() + absl::Seconds(2));
    if (!replies.ok() || (*replies)[0].view().is_error()) {
      ADD_FAILURE() << command[0] << " failed";
      raw_.reset();
      return -1;
    }
    return (*replies)[0].view().integer();
  }

  std::unique_ptr<bench::RedisServer> redis_;
  std::unique_ptr<RedisConnection> raw_;
};

TEST_F(RedisDirectoryTest, PublishedObjectIsFoundAndRemovedObjectIsNot) {
  std::unique_ptr<RedisDirectory> a = NewNode("node-a");
  ASSERT_NE(a, nullptr);
  ObjectID id = ObjectID::FromLabel("round-trip");
  ASSERT_OK(a->PublishObject(id, ObjectLocation{"", {1000, 16, 77, 12345}}));

  ASSERT_OK_AND_ASSIGN(auto found, a->Lookup({id}));
  ASSERT_EQ(found.size(), 1u);
  ASSERT_EQ(found[0].size(), 1u);
  EXPECT_EQ(found[0][0].node_id, "node-a");
  EXPECT_EQ(found[0][0].object.data_size, 1000u);
  EXPECT_EQ(found[0][0].object.metadata_size, 16u);
  EXPECT_EQ(found[0][0].object.generation, 77u);
  EXPECT_EQ(found[0][0].object.checksum, 12345u);

  ASSERT_OK(a->RemoveObject(id));
  ASSERT_OK_AND_ASSIGN(auto after, a->Lookup({id}));
  EXPECT_THAT(after[0], IsEmpty());
  EXPECT_EQ(Raw({"EXISTS", "rplasma:obj:" + id.Hex()}), 0);
  EXPECT_EQ(Raw({"SISMEMBER", "rplasma:node-objects:node-a", id.Hex()}), 0);
}

// Each pipeline is bounded by its own deadline, whatever the one before it had: a short one
// first must not cut a later, longer one short (the socket timeout is kept between pipelines), and
// a reply that comes too late fails the pipeline by its deadline, not by the reply's.
TEST_F(RedisDirectoryTest, EveryPipelineWaitsUntilItsOwnDeadlineAndNoLonger) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<RedisConnection> connection,
                       RedisConnection::Connect(redis_->address(), absl::Seconds(2)));
  ASSERT_OK(connection->Pipeline({{"PING"}}, absl::Now() + absl::Milliseconds(50)).status());
  // BLPOP on an absent list answers nil when its 0.2 s are up: after the 50 ms of the call before.
  absl::Time start = absl::Now();
  ASSERT_OK_AND_ASSIGN(std::vector<RedisReply> replies,
                       connection->Pipeline({{"BLPOP", "absent-list", "0.2"}}, absl::Now() + absl::Seconds(5)));
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(150));
  EXPECT_TRUE(replies[0].view().is_nil());
  ASSERT_OK(connection->Pipeline({{"PING"}}, absl::Now() + absl::Seconds(5)).status());
  start = absl::Now();
  const absl::Status late =
      connection->Pipeline({{"BLPOP", "absent-list", "3"}}, absl::Now() + absl::Milliseconds(200)).status();
  const absl::Duration took = absl::Now() - start;
  EXPECT_EQ(ErrorCodeOf(late), ErrorCode::kUnavailable) << late;
  EXPECT_GE(took, absl::Milliseconds(195)) << late;
  EXPECT_LT(took, absl::Seconds(2)) << late;
  EXPECT_TRUE(connection->broken());
}

TEST_F(RedisDirectoryTest, RepublishingReplacesTheNodesOlderEntry) {
  std::unique_ptr<RedisDirectory> a = NewNode("node-a");
  ASSERT_NE(a, nullptr);
  ObjectID id = ObjectID::FromLabel("replaced");
  ASSERT_OK(a->PublishObject(id, Location(10, 1)));
  ASSERT_OK(a->PublishObject(id, Location(20, 2)));
  ASSERT_OK_AND_ASSIGN(auto found, a->Lookup({id}));
  ASSERT_EQ(found[0].size(), 1u);
  EXPECT_EQ(found[0][0].object.generation, 2u);
  EXPECT_EQ(found[0][0].object.data_size, 20u);
}

TEST_F(RedisDirectoryTest, ObjectHeldByTwoNodesReturnsBothLocations) {
  std::unique_ptr<RedisDirectory> a = NewNode("node-a");
  std::unique_ptr<RedisDirectory> b = NewNode("node-b");
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  ObjectID shared = ObjectID::FromLabel("shared");
  ObjectID only_b = ObjectID::FromLabel("only-b");
  ASSERT_OK(a->PublishObject(shared, Location(5, 1)));
  ASSERT_OK(b->PublishObject(shared, Location(5, 2)));
  ASSERT_OK(b->PublishObject(only_b, Location(6, 3)));

  ASSERT_OK_AND_ASSIGN(auto found, a->Lookup({shared, only_b, ObjectID::FromLabel("nowhere")}));
  ASSERT_EQ(found.size(), 3u);
  EXPECT_THAT(NodeIds(found[0]), UnorderedElementsAre("node-a", "node-b"));
  EXPECT_THAT(NodeIds(found[1]), ElementsAre("node-b"));
  EXPECT_THAT(found[2], IsEmpty());
}

TEST_F(RedisDirectoryTest, GetNodeReturnsTheRecordOfALiveNode) {
  std::unique_ptr<RedisDirectory> a = NewNode("node-a");
  ASSERT_NE(a, nullptr);
  ASSERT_OK_AND_ASSIGN(NodeRecord record, a->GetNode("node-a"));
  EXPECT_EQ(record.node_id, "node-a");
  EXPECT_EQ(record.tcp_address, "127.0.0.1:7000");
  EXPECT_EQ(record.verbs_address, "");
  EXPECT_EQ(record.epoch, 42u);
  EXPECT_THAT(a->GetNode("node-z"), HasErrorCode(ErrorCode::kObjectNotFound));
  EXPECT_THAT(a->GetNode("bad id"), HasErrorCode(ErrorCode::kInvalidArgument));
}

TEST_F(RedisDirectoryTest, NodeWhoseRecordExpiredIsNotReturnedAndItsEntriesAreCleaned) {
  // a's liveness cache runs on a fake clock: the test moves its time past the cache, not waits.
  testing::FakeClock a_clock;
  std::unique_ptr<RedisDirectory> a = NewNode("node-a", absl::Seconds(5), &a_clock);
  std::unique_ptr<RedisDirectory> b = NewNode("node-b", absl::Milliseconds(200));
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  ObjectID id = ObjectID::FromLabel("expiring");
  ASSERT_OK(a->PublishObject(id, Location(5, 1)));
  ASSERT_OK(b->PublishObject(id, Location(5, 2)));
  ASSERT_OK_AND_ASSIGN(auto before, a->Lookup({id}));
  EXPECT_EQ(before[0].size(), 2u);

  // node-b stops heartbeating: its record expires after its TTL.
  ASSERT_TRUE(testing::WaitFor([&] { return !a->GetNode("node-b").ok(); }, absl::Seconds(5)));
  // a's lookup above saw node-b alive: it may trust that for liveness_cache, and no longer.
  ASSERT_OK_AND_ASSIGN(auto cached, a->Lookup({id}));
  EXPECT_THAT(NodeIds(cached[0]), UnorderedElementsAre("node-a", "node-b"));
  a_clock.Advance(Options().liveness_cache);
  ASSERT_OK_AND_ASSIGN(auto after, a->Lookup({id}));
  EXPECT_THAT(NodeIds(after[0]), ElementsAre("node-a"));
  EXPECT_EQ(Raw({"HEXISTS", "rplasma:obj:" + id.Hex(), "node-b"}), 0);
  EXPECT_EQ(Raw({"HEXISTS", "rplasma:obj:" + id.Hex(), "node-a"}), 1);
  EXPECT_GE(a->stats()["cleaned_entries"], 1u);
}

TEST_F(RedisDirectoryTest, HeartbeatKeepsTheRecordAliveBeyondItsTtl) {
  // A TTL of 900 ms, beaten every 300 ms (ttl / 3) for 3 TTLs: each beat has 600 ms to land
  // before the record would expire, room for a loaded machine.
  std::unique_ptr<RedisDirectory> a = NewNode("node-a", absl::Milliseconds(900));
  std::unique_ptr<RedisDirectory> observer = NewNode("observer");
  ASSERT_NE(a, nullptr);
  ASSERT_NE(observer, nullptr);
  for (int i = 0; i < 9; ++i) {
    ASSERT_OK(a->Heartbeat());
    absl::SleepFor(absl::Milliseconds(300));
  }
  EXPECT_OK(observer->GetNode("node-a"));
  ASSERT_TRUE(testing::WaitFor([&] { return !observer->GetNode("node-a").ok(); }, absl::Seconds(5)));
}

TEST_F(RedisDirectoryTest, UnregisterNodeRemovesItsRecordAndEveryLocation) {
  std::unique_ptr<RedisDirectory> a = NewNode("node-a");
  std::unique_ptr<RedisDirectory> b = NewNode("node-b");
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  std::vector<std::pair<ObjectID, ObjectLocation>> objects;
  std::vector<ObjectID> ids;
  for (int i = 0; i < 2500; ++i) {  // more than one SPOP batch
    ids.push_back(ObjectID::FromLabel("unregister-" + std::to_string(i)));
    objects.emplace_back(ids.back(), Location(i, i + 1));
  }
  ASSERT_OK(a->PublishObjects(objects));
  ASSERT_OK(b->PublishObject(ids[0], Location(1, 1)));

  ASSERT_OK(a->UnregisterNode());
  EXPECT_THAT(b->GetNode("node-a"), HasErrorCode(ErrorCode::kObjectNotFound));
  ASSERT_OK_AND_ASSIGN(auto found, b->Lookup(ids));
  EXPECT_THAT(NodeIds(found[0]), ElementsAre("node-b"));
  for (size_t i = 1; i < found.size(); ++i) ASSERT_THAT(found[i], IsEmpty()) << i;
  EXPECT_EQ(Raw({"EXISTS", "rplasma:node-objects:node-a"}), 0);
  EXPECT_EQ(Raw({"SISMEMBER", "rplasma:nodes", "node-a"}), 0);
  // Only node-b's record, set, node list and its one object remain.
  EXPECT_EQ(Raw({"DBSIZE"}), 4);
  EXPECT_THAT(a->PublishObject(ids[0], Location(1, 1)), HasErrorCode(ErrorCode::kInvalidArgument));
}

TEST_F(RedisDirectoryTest, LookupOfAThousandIdsTakesAtMostTwoRoundTrips) {
  std::unique_ptr<RedisDirectory> a = NewNode("node-a");
  std::unique_ptr<RedisDirectory> b = NewNode("node-b");
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  std::vector<std::pair<ObjectID, ObjectLocation>> objects;
  std::vector<ObjectID> ids;
  for (int i = 0; i < 1000; ++i) {
    ids.push_back(ObjectID::FromLabel("many-" + std::to_string(i)));
    objects.emplace_back(ids.back(), Location(i, 1000 + i));
  }
  ASSERT_OK(a->PublishObjects(objects));
  const uint64_t ops_before = b->stats()["ops"];
  ASSERT_OK_AND_ASSIGN(auto found, b->Lookup(ids));
  EXPECT_LE(b->stats()["ops"] - ops_before, 2u);
  ASSERT_EQ(found.size(), ids.size());
  for (int i = 0; i < 1000; ++i) {
    ASSERT_EQ(found[i].size(), 1u) << i;
    EXPECT_EQ(found[i][0].object.generation, 1000u + i);
    EXPECT_EQ(found[i][0].object.data_size, static_cast<uint64_t>(i));
  }
}

TEST_F(RedisDirectoryTest, ANodeSeenAliveIsNotAskedAboutAgainWithinTheLivenessWindow) {
  std::unique_ptr<RedisDirectory> a = NewNode("node-a");
  ASSERT_NE(a, nullptr);
  RedisDirectoryOptions options = Options();
  options.liveness_cache = absl::Seconds(30);
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<RedisDirectory> cached, RedisDirectory::Create(options));
  options.liveness_cache = absl::ZeroDuration();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<RedisDirectory> uncached, RedisDirectory::Create(options));
  const ObjectID id = ObjectID::FromLabel("liveness");
  ASSERT_OK(a->PublishObject(id, Location(7, 1)));
  for (RedisDirectory* d : {cached.get(), uncached.get()}) {
    for (int round = 0; round < 3; ++round) {
      const uint64_t ops_before = d->stats()["ops"];
      ASSERT_OK_AND_ASSIGN(auto found, d->Lookup({id}));
      EXPECT_THAT(NodeIds(found[0]), ElementsAre("node-a"));
      const uint64_t expected = (d == cached.get() && round > 0) ? 1 : 2;
      EXPECT_EQ(d->stats()["ops"] - ops_before, expected)
          << (d == cached.get() ? "cached" : "uncached") << " round " << round;
    }
  }
  EXPECT_EQ(cached->stats()["liveness_cache_hits"], 2u);
  EXPECT_EQ(uncached->stats()["liveness_cache_hits"], 0u);
}

TEST_F(RedisDirectoryTest, ANodeSeenAliveBeforeTheWindowIsAskedAboutInTheSameRoundTripAsTheLocations) {
  // The reader's liveness cache runs on a fake clock: each lookup below comes "after a pause".
  testing::FakeClock clock;
  std::unique_ptr<RedisDirectory> a = NewNode("node-a");
  std::unique_ptr<RedisDirectory> b = NewNode("node-b", absl::Milliseconds(300));
  std::unique_ptr<RedisDirectory> reader = NewNode("reader", absl::Seconds(5), &clock);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  ASSERT_NE(reader, nullptr);
  const ObjectID first = ObjectID::FromLabel("early-1");
  const ObjectID second = ObjectID::FromLabel("early-2");
  const ObjectID third = ObjectID::FromLabel("early-3");
  ASSERT_OK(a->PublishObject(first, Location(7, 1)));
  ASSERT_OK(a->PublishObject(second, Location(7, 2)));
  ASSERT_OK(b->PublishObject(second, Location(7, 3)));
  ASSERT_OK(a->PublishObject(third, Location(7, 4)));

  // Never seen: the locations, then the node's liveness (two round trips).
  uint64_t ops = reader->stats()["ops"];
  ASSERT_OK_AND_ASSIGN(auto found, reader->Lookup({first}));
  EXPECT_THAT(NodeIds(found[0]), ElementsAre("node-a"));
  EXPECT_EQ(reader->stats()["ops"] - ops, 2u);

  // Seen alive longer ago than the liveness cache: asked along with the locations (one round
  // trip), and node-b, never seen, in a second.
  clock.Advance(Options().liveness_cache + absl::Milliseconds(1));
  ops = reader->stats()["ops"];
  ASSERT_OK_AND_ASSIGN(found, reader->Lookup({second}));
  EXPECT_THAT(NodeIds(found[0]), UnorderedElementsAre("node-a", "node-b"));
  EXPECT_EQ(reader->stats()["ops"] - ops, 2u);
  clock.Advance(Options().liveness_cache + absl::Milliseconds(1));
  ops = reader->stats()["ops"];
  ASSERT_OK_AND_ASSIGN(found, reader->Lookup({second}));
  EXPECT_THAT(NodeIds(found[0]), UnorderedElementsAre("node-a", "node-b"));
  EXPECT_EQ(reader->stats()["ops"] - ops, 1u);

  // node-b's record expires (it stops beating): the early question finds it gone, so its entry
  // is not returned, and cleaned, with no round trip to ask about it.
  ASSERT_TRUE(testing::WaitFor([&] { return !a->GetNode("node-b").ok(); }, absl::Seconds(5)));
  clock.Advance(Options().liveness_cache + absl::Milliseconds(1));
  ASSERT_OK_AND_ASSIGN(found, reader->Lookup({second}));
  EXPECT_THAT(NodeIds(found[0]), ElementsAre("node-a"));
  EXPECT_EQ(Raw({"HEXISTS", "rplasma:obj:" + second.Hex(), "node-b"}), 0);
  // ... and is not asked about again: one round trip for an id on node-a alone.
  clock.Advance(Options().liveness_cache + absl::Milliseconds(1));
  ops = reader->stats()["ops"];
  ASSERT_OK_AND_ASSIGN(found, reader->Lookup({third}));
  EXPECT_THAT(NodeIds(found[0]), ElementsAre("node-a"));
  EXPECT_EQ(reader->stats()["ops"] - ops, 1u);
  EXPECT_EQ(reader->stats()["liveness_cache_hits"], 0u);
}

TEST_F(RedisDirectoryTest, LookupOfMoreIdsThanOnePipelineIsSplitAndStillComplete) {
  RedisDirectoryOptions options = Options();
  options.max_pipeline = 16;
  ASSERT_OK_AND_ASSIGN(auto a, RedisDirectory::Create(options));
  ASSERT_OK(a->RegisterNode(Node("node-a")));
  std::vector<std::pair<ObjectID, ObjectLocation>> objects;
  std::vector<ObjectID> ids;
  for (int i = 0; i < 100; ++i) {
    ids.push_back(ObjectID::FromLabel("split-" + std::to_string(i)));
    objects.emplace_back(ids.back(), Location(i, i));
  }
  ASSERT_OK(a->PublishObjects(objects));
  ASSERT_OK_AND_ASSIGN(auto found, a->Lookup(ids));
  for (int i = 0; i < 100; ++i) ASSERT_EQ(found[i].size(), 1u) << i;
}

TEST_F(RedisDirectoryTest, SweepRemovesEveryEntryOfAnExpiredNode) {
  std::unique_ptr<RedisDirectory> a = NewNode("node-a");
  std::unique_ptr<RedisDirectory> b = NewNode("node-b", absl::Milliseconds(100));
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  std::vector<std::pair<ObjectID, ObjectLocation>> objects;
  for (int i = 0; i < 30; ++i) objects.emplace_back(ObjectID::FromLabel("sweep-" + std::to_string(i)), Location(1, 1));
  ASSERT_OK(b->PublishObjects(objects));
  ASSERT_TRUE(testing::WaitFor([&] { return !a->GetNode("node-b").ok(); }, absl::Seconds(5)));

  ASSERT_OK(a->SweepExpiredNodes());
  EXPECT_EQ(a->stats()["swept_nodes"], 1u);
  EXPECT_EQ(a->stats()["cleaned_entries"], 30u);
  EXPECT_EQ(Raw({"EXISTS", "rplasma:node-objects:node-b"}), 0);
  EXPECT_EQ(Raw({"SISMEMBER", "rplasma:nodes", "node-b"}), 0);
  EXPECT_EQ(Raw({"EXISTS", "rplasma:obj:" + objects[0].first.Hex()}), 0);
  EXPECT_OK(a->GetNode("node-a"));  // the sweeper's own node is untouched
}

TEST_F(RedisDirectoryTest, HeartbeatRepublishesAVanishedRecordAndAsksForRepublication) {
  std::unique_ptr<RedisDirectory> a = NewNode("node-a");
  ASSERT_NE(a, nullptr);
  std::atomic<int> callbacks{0};
  a->SetReconnectCallback([&] { callbacks++; });
  ASSERT_OK(a->Heartbeat());
  EXPECT_EQ(callbacks.load(), 0);

  Raw({"DEL", "rplasma:node:node-a"});
  ASSERT_OK(a->Heartbeat());
  EXPECT_EQ(callbacks.load(), 1);
  EXPECT_OK(a->GetNode("node-a"));
}

TEST_F(RedisDirectoryTest, KeyPrefixesSeparateClustersSharingOneRedis) {
  RedisDirectoryOptions other = Options();
  other.key_prefix = "other";
  ASSERT_OK_AND_ASSIGN(auto x, RedisDirectory::Create(other));
  ASSERT_OK(x->RegisterNode(Node("node-x")));
  std::unique_ptr<RedisDirectory> a = NewNode("node-a");
  ASSERT_NE(a, nullptr);
  ObjectID id = ObjectID::FromLabel("prefixed");
  ASSERT_OK(x->PublishObject(id, Location(1, 1)));
  ASSERT_OK_AND_ASSIGN(auto seen_by_a, a->Lookup({id}));
  EXPECT_THAT(seen_by_a[0], IsEmpty());
  ASSERT_OK_AND_ASSIGN(auto seen_by_x, x->Lookup({id}));
  EXPECT_EQ(seen_by_x[0].size(), 1u);
  EXPECT_EQ(Raw({"EXISTS", "other:obj:" + id.Hex()}), 1);
}

TEST_F(RedisDirectoryTest, MisuseIsRejectedWithInvalidArgument) {
  ASSERT_OK_AND_ASSIGN(auto a, RedisDirectory::Create(Options()));
  ObjectID id = ObjectID::FromLabel("misuse");
  EXPECT_THAT(a->PublishObject(id, Location(1, 1)), HasErrorCode(ErrorCode::kInvalidArgument));
  EXPECT_THAT(a->RemoveObject(id), HasErrorCode(ErrorCode::kInvalidArgument));
  EXPECT_THAT(a->Heartbeat(), HasErrorCode(ErrorCode::kInvalidArgument));
  EXPECT_THAT(a->RegisterNode(Node("")), HasErrorCode(ErrorCode::kInvalidArgument));
  EXPECT_THAT(a->RegisterNode(Node("has space")), HasErrorCode(ErrorCode::kInvalidArgument));
  EXPECT_THAT(a->RegisterNode(Node(std::string(129, 'n'))), HasErrorCode(ErrorCode::kInvalidArgument));
  EXPECT_THAT(a->RegisterNode(NodeRecord{"n", "a|b:1", "", 0}), HasErrorCode(ErrorCode::kInvalidArgument));
  ASSERT_OK(a->RegisterNode(Node("node-a")));
  EXPECT_OK(a->RegisterNode(NodeRecord{"node-a", "127.0.0.1:7001", "127.0.0.1:7002", 43}));
  EXPECT_THAT(a->RegisterNode(Node("node-other")), HasErrorCode(ErrorCode::kInvalidArgument));
  EXPECT_THAT(a->PublishObject(id, ObjectLocation{"node-b", {1, 0, 1, 1}}), HasErrorCode(ErrorCode::kInvalidArgument));
  EXPECT_OK(a->PublishObject(id, ObjectLocation{"node-a", {1, 0, 1, 1}}));
  ASSERT_OK_AND_ASSIGN(NodeRecord record, a->GetNode("node-a"));
  EXPECT_EQ(record.verbs_address, "127.0.0.1:7002");
}

TEST_F(RedisDirectoryTest, ConcurrentCallersFromSeveralThreadsAllSucceed) {
  std::unique_ptr<RedisDirectory> a = NewNode("node-a");
  ASSERT_NE(a, nullptr);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 100; ++i) {
        ObjectID id = ObjectID::FromLabel("thread-" + std::to_string(t) + "-" + std::to_string(i));
        if (!a->PublishObject(id, Location(i, i)).ok()) failures++;
        auto found = a->Lookup({id});
        if (!found.ok() || (*found)[0].size() != 1) failures++;
        if (i % 10 == 0 && !a->Heartbeat().ok()) failures++;
        if (!a->RemoveObject(id).ok()) failures++;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(a->stats()["errors"], 0u);
}

}  // namespace
}  // namespace rplasma
