// Manager fault tests over real processes: a serving manager killed mid-fetch, the owner deleting
// or re-creating during a fetch, Redis killed and restarted, a node killed, garbage in Redis,
// malformed and unauthenticated peers, and fetches that only fit thanks to eviction.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <atomic>
#include <cstring>
#include <thread>

#include "absl/base/config.h"
#include "absl/strings/str_cat.h"
#include <gtest/gtest.h>

#include "manager/peer/peer_messages.h"
#include "manager/transport/tcp/tcp_transport.h"
#include "protocol/base/socket_io.h"
#include "tests/integration/manager_test_cluster.h"
#include "tests/support/status_matchers.h"
#include "tests/support/wait_for.h"

namespace rplasma::testing {
namespace {

// Runs redis-cli against the cluster's Redis; returns its exit status.
int RedisCli(ManagerTestCluster& cluster, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"/usr/bin/redis-cli", "-h", cluster.redis().host(), "-p",
                                   std::to_string(cluster.redis().port())};
  argv.insert(argv.end(), args.begin(), args.end());
  absl::StatusOr<bench::ChildProcess> p = bench::ChildProcess::Start(argv, cluster.dir() + "/redis-cli.log");
  if (!p.ok()) return -1;
  std::optional<int> status = p->Wait(absl::Seconds(10));
  return status.value_or(-1);
}

class ManagerFaultTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RPLASMA_SKIP_IF_NO_REDIS_SERVER();
    ASSERT_OK_AND_ASSIGN(cluster_, ManagerTestCluster::Start());
  }

  TestNode* AddNode(std::vector<std::string> extra, uint64_t memory = 256 * kMiB) {
    TestNodeOptions options;
    options.store_memory = memory;
    options.extra_manager_args = std::move(extra);
    return AddNodeWith(options);
  }

  // A node whose manager (tests/support/throttled_manager_main.cc) serves Get replies and tcp
  // Reads at `bytes_per_sec`, so a transfer from it lasts long enough to kill it part-way.
  TestNode* AddThrottledNode(uint64_t bytes_per_sec, std::vector<std::string> extra) {
    TestNodeOptions options;
    options.manager_binary = THROTTLED_MANAGER;
    options.extra_manager_args = std::move(extra);
    options.extra_manager_args.push_back(absl::StrCat("--serve_bytes_per_sec=", bytes_per_sec));
    return AddNodeWith(options);
  }

  TestNode* AddNodeWith(const TestNodeOptions& options) {
    absl::StatusOr<TestNode*> node = cluster_->AddNode(options);
    EXPECT_OK(node.status());
    return node.ok() ? *node : nullptr;
  }

  // The store of `node` holds no unsealed object and no reference (leak audit).
  void ExpectNoLeaks(TestNode* node) {
    EXPECT_OK(WaitStoreReleasedEverything(*node->client, absl::Seconds(10))) << node->name << "'s store";
  }

  std::unique_ptr<ManagerTestCluster> cluster_;
};

TEST_F(ManagerFaultTest, ServingManagerKilledMidFetchGivesAnErrorAndNoVisibleObject) {
  // A serves at 32 MiB/s, so a 32 MiB object takes about a second to move.
  TestNode* a = AddThrottledNode(32 * kMiB, {"--node_ttl=1s"});
  TestNode* b = AddNode({"--read_chunk_bytes=1048576"});
  ASSERT_TRUE(a && b);
  for (double fraction : {0.1, 0.5, 0.9}) {
    const ObjectID id = ObjectID::FromLabel(absl::StrCat("kill-", fraction));
    ASSERT_OK(PutTestObject(*a->client, id, 7, 32 * kMiB));
    // A fetch of a not-yet-published id would just wait: start once A's publisher announced it.
    ASSERT_OK(cluster_->WaitPublished(*a, {id}));
    std::vector<absl::Status> result;
    const absl::Time start = absl::Now();
    std::thread fetcher([&] {
      absl::StatusOr<std::vector<absl::Status>> r = FetchVia(b->client_socket, {id}, absl::Seconds(10));
      result = r.ok() ? *r : std::vector<absl::Status>{r.status()};
    });
    absl::SleepFor(absl::Seconds(fraction));  // the kill point: this far into a ~1 s transfer
    a->manager->Kill();
    fetcher.join();
    EXPECT_LT(absl::Now() - start, absl::Seconds(12)) << "error within the deadline";
    ASSERT_EQ(result.size(), 1u);
    EXPECT_FALSE(result[0].ok()) << "fraction " << fraction;
    EXPECT_FALSE(*b->client->Contains(id)) << "a partial object must never be visible";
    ExpectNoLeaks(b);
    ExpectNoLeaks(a);  // the dead manager's references were dropped by A's store
    ASSERT_OK(cluster_->RestartManager(a));
    ASSERT_OK(a->client->Delete({id}));
  }
  EXPECT_OK(StatsVia(b->client_socket).status()) << "B's manager is alive";
}

TEST_F(ManagerFaultTest, OwnerKilledMidBatchKeepsWhatWasSealedAndFailsTheRestCleanly) {
  // A serves at 32 MiB/s: a batch of 16 small and 16 x 4 MiB objects takes about two seconds.
  TestNode* a = AddThrottledNode(32 * kMiB, {"--node_ttl=1s"});
  TestNode* b = AddNode({"--read_chunk_bytes=1048576"});
  ASSERT_TRUE(a && b);
  std::vector<ObjectID> ids;
  std::vector<uint64_t> sizes;
  for (int i = 0; i < 32; ++i) {
    ids.push_back(ObjectID::FromLabel(absl::StrCat("kill-batch-", i)));
    sizes.push_back(i < 16 ? 1000 + i : 4 * kMiB);
    ASSERT_OK(PutTestObject(*a->client, ids.back(), i, sizes.back()));
  }
  ASSERT_OK(cluster_->WaitPublished(*a, ids));
  std::vector<absl::Status> result;
  const absl::Time start = absl::Now();
  std::thread fetcher([&] {
    absl::StatusOr<std::vector<absl::Status>> r = FetchVia(b->client_socket, ids, absl::Seconds(10));
    result = r.ok() ? *r : std::vector<absl::Status>(ids.size(), r.status());
  });
  // The kill point: the small objects (inline in the batch's reply) are sealed on B, the large
  // ones (pinned, read at A's throttled rate) still coming. Waited for, not slept: a loaded
  // machine may take longer than any fixed pause to get there.
  EXPECT_TRUE(WaitFor(
      [&] {
        for (int i = 0; i < 16; ++i) {
          absl::StatusOr<bool> here = b->client->Contains(ids[i]);
          if (!here.ok() || !*here) return false;
        }
        return true;
      },
      absl::Seconds(10)));
  a->manager->Kill();
  fetcher.join();
  EXPECT_LT(absl::Now() - start, absl::Seconds(12)) << "every id answered within the deadline";
  const int sealed = ExpectSealedIntactAndFailedAbsent(*b->client, ids, sizes, result);
  EXPECT_LT(sealed, static_cast<int>(ids.size())) << "the kill came before the batch was done";
  EXPECT_GT(sealed, 0) << "the small objects came first, in one Get batch";
  ExpectNoLeaks(b);
  ExpectNoLeaks(a);  // the dead manager's references and leases were dropped by A's store
}

TEST_F(ManagerFaultTest, OwnerDeletingOrEvictingDuringAFetchNeverYieldsWrongBytes) {
  TestNode* a = AddThrottledNode(64 * kMiB, {});
  TestNode* b = AddNode({"--read_chunk_bytes=1048576"});
  ASSERT_TRUE(a && b);
  for (int round = 0; round < 4; ++round) {
    const ObjectID id = ObjectID::FromLabel(absl::StrCat("delete-during-", round));
    const uint64_t size = round % 2 ? 16 * kMiB : 60000;  // Pin and Get paths
    ASSERT_OK(PutTestObject(*a->client, id, round, size));
    ASSERT_OK(cluster_->WaitPublished(*a, {id}));
    std::vector<absl::Status> result;
    std::thread fetcher([&] { result = *FetchVia(b->client_socket, {id}, absl::Seconds(2)); });
    absl::SleepFor(absl::Milliseconds(20));  // the delete lands early in the fetch (either outcome is checked)
    if (round < 2) {
      ASSERT_OK(a->client->Delete({id}));
    } else {
      ASSERT_OK(a->client->Evict(64 * kMiB).status());
    }
    fetcher.join();
    if (result[0].ok()) {
      EXPECT_OK(CheckTestObject(*b->client, id, round, size)) << "a successful fetch has the owner's bytes";
    } else {
      EXPECT_FALSE(*b->client->Contains(id));
    }
    ExpectNoLeaks(b);
  }
}

TEST_F(ManagerFaultTest, IdRecreatedWithNewBytesIsFetchedWholeNeverMixed) {
  TestNode* a = AddNode({});
  TestNode* b = AddNode({"--read_chunk_bytes=65536"});
  ASSERT_TRUE(a && b);
  const ObjectID id = ObjectID::FromLabel("recreated");
  const uint64_t size = 4 * kMiB;
  std::atomic<bool> stop{false};
  // The newest version the writer has tried to put. A put may fail (a fetch still holds the old
  // version), so the versions that existed are a subset of 0..latest, and it is set before the put.
  std::atomic<int> latest{0};
  ASSERT_OK(PutTestObject(*a->client, id, 0, size));
  // Most versions live 10 ms, so fetches meet deletes and re-creations mid-transfer; every fifth
  // lives 150 ms, so that some fetch can finish on a loaded machine too (under TSan beside other
  // tests, a lookup and a pin can take longer than a 10 ms version lives: CI saw 12 of 12 fail).
  std::thread writer([&] {
    for (int v = 1; !stop.load() && v < 150; ++v) {
      (void)a->client->Delete({id});
      latest.store(v);
      (void)PutTestObject(*a->client, id, v, size);
      absl::SleepFor(absl::Milliseconds(v % 5 == 0 ? 150 : 10));
    }
  });
  int fetched = 0;
  absl::Status last_failure;
  for (int i = 0; i < 12; ++i) {
    absl::StatusOr<std::vector<absl::Status>> result = FetchVia(b->client_socket, {id}, absl::Seconds(2));
    ASSERT_OK(result.status());
    if (!(*result)[0].ok()) {
      last_failure = (*result)[0];
      continue;
    }
    ++fetched;
    // The object must be exactly one version: find it from its first bytes (each version's bytes
    // start differently), then check all of them against that version.
    ASSERT_OK_AND_ASSIGN(ObjectBuffer buffer, b->client->GetOne(id));
    bool matched = false;
    constexpr size_t kPrefix = 64;
    for (int v = 0; v <= latest.load() && !matched; ++v) {
      if (std::memcmp(buffer.data().data(), TestBytes(v, kPrefix).data(), kPrefix) != 0) continue;
      const std::string expected = TestBytes(v, size);
      matched = std::memcmp(buffer.data().data(), expected.data(), size) == 0;
    }
    EXPECT_TRUE(matched) << "fetched bytes match no single version";
    ASSERT_OK(buffer.Release());
    ASSERT_OK(b->client->Delete({id}));
  }
  stop.store(true);
  writer.join();
  EXPECT_GT(fetched, 0) << "every fetch failed, the last with " << last_failure;
}

TEST_F(ManagerFaultTest, RedisDownFailsFastAndLocationsAreRepublishedAfterItReturns) {
  TestNode* a = AddNode({"--node_ttl=2s"});
  TestNode* b = AddNode({"--node_ttl=2s"});
  ASSERT_TRUE(a && b);
  const ObjectID before = ObjectID::FromLabel("before outage");
  ASSERT_OK(PutTestObject(*a->client, before, 1, 1000));
  ASSERT_OK(cluster_->WaitPublished(*a, {before}));
  cluster_->redis().Kill();
  // Ops fail fast with Unavailable, not after the fetch timeout.
  const absl::Time start = absl::Now();
  ASSERT_OK_AND_ASSIGN(std::vector<absl::Status> result,
                       FetchVia(b->client_socket, {ObjectID::FromLabel("anything")}, absl::Seconds(20)));
  EXPECT_THAT(result[0], HasErrorCode(ErrorCode::kUnavailable));
  EXPECT_LT(absl::Now() - start, absl::Seconds(3));
  const ObjectID during = ObjectID::FromLabel("during outage");
  ASSERT_OK(PutTestObject(*a->client, during, 2, 200000));
  // A 20 s outage: longer than the node TTL, so the fresh Redis has nothing of either node.
  absl::SleepFor(absl::Seconds(20));
  // Still failing fast at the end of the outage (reconnect backoff is capped, never a hang).
  const absl::Time late = absl::Now();
  ASSERT_OK_AND_ASSIGN(std::vector<absl::Status> late_result,
                       FetchVia(b->client_socket, {ObjectID::FromLabel("anything")}, absl::Seconds(20)));
  EXPECT_THAT(late_result[0], HasErrorCode(ErrorCode::kUnavailable));
  EXPECT_LT(absl::Now() - late, absl::Seconds(3));
  ASSERT_OK(cluster_->redis().Restart());  // a fresh, empty Redis on the same port
  const absl::Time back = absl::Now();
  bool both = false;
  while (!both && absl::Now() - back < absl::Seconds(10)) {
    absl::StatusOr<std::vector<absl::Status>> r = FetchVia(b->client_socket, {before, during}, absl::Seconds(1));
    both = r.ok() && (*r)[0].ok() && (*r)[1].ok();
  }
  EXPECT_TRUE(both) << "locations republished within 10 s of Redis returning";
  EXPECT_OK(CheckTestObject(*b->client, before, 1, 1000));
  EXPECT_OK(CheckTestObject(*b->client, during, 2, 200000));
}

// A directory that loses its data (issue 23) is rebuilt by the stores: after a Redis restarted
// empty at once, or emptied while it stays up, every object still in a store is fetchable again
// within 5 s (the heartbeat finds its node record gone, the manager re-publishes what its store
// holds).
TEST_F(ManagerFaultTest, AnEmptiedDirectoryIsRebuiltFromTheStoresWithinFiveSeconds) {
  TestNode* a = AddNode({"--node_ttl=2s"});
  TestNode* b = AddNode({"--node_ttl=2s"});
  ASSERT_TRUE(a && b);
  std::vector<ObjectID> ids;
  for (int i = 0; i < 200; ++i) {
    ids.push_back(ObjectID::FromLabel(absl::StrCat("resident ", i)));
    ASSERT_OK(PutTestObject(*a->client, ids.back(), i, 1000 + i));
  }
  ASSERT_OK(cluster_->WaitPublished(*a, ids));
  // Fetched by a node that never fetched them (its location cache cannot answer for the
  // directory) and holds no copy: each round asks the directory, then A.
  // Returns how long it took, or InfiniteDuration if `limit` passed first.
  auto all_fetchable_within = [&](TestNode* reader, absl::Duration limit) {
    const absl::Time start = absl::Now();
    const bool all = WaitFor(
        [&] {
          absl::StatusOr<std::vector<absl::Status>> r = FetchVia(reader->client_socket, ids, absl::Milliseconds(500));
          if (!r.ok()) return false;
          for (const absl::Status& s : *r) {
            if (!s.ok()) return false;
          }
          return true;
        },
        limit);
    return all ? absl::Now() - start : absl::InfiniteDuration();
  };
  cluster_->redis().Kill();
  ASSERT_OK(cluster_->redis().Restart());  // at once: no outage longer than a node's record
  const absl::Duration after_restart = all_fetchable_within(b, absl::Seconds(5));
  EXPECT_LE(after_restart, absl::Seconds(5)) << "after an empty restart";
  for (int i = 0; i < 200; i += 37) EXPECT_OK(CheckTestObject(*b->client, ids[i], i, 1000 + i));

  TestNode* c = AddNode({"--node_ttl=2s"});
  ASSERT_TRUE(c);
  ASSERT_OK(cluster_->redis().Command({"FLUSHALL"}).status());  // emptied while it stays up
  const absl::Duration after_flush = all_fetchable_within(c, absl::Seconds(5));
  EXPECT_LE(after_flush, absl::Seconds(5)) << "after FLUSHALL";
  for (int i = 0; i < 200; i += 37) EXPECT_OK(CheckTestObject(*c->client, ids[i], i, 1000 + i));
  RecordProperty("after_restart_ms", static_cast<int>(absl::ToInt64Milliseconds(after_restart)));
  RecordProperty("after_flush_ms", static_cast<int>(absl::ToInt64Milliseconds(after_flush)));
}

TEST_F(ManagerFaultTest, PublishesRefusedByALiveRedisAreRetriedAndTheObjectsBecomeFetchable) {
  // A long node TTL: the records outlive the refusal, so no reconnect or lost record triggers a
  // republish; only the publisher's own retry can repair the refused publishes.
  TestNode* a = AddNode({"--node_ttl=60s"});
  TestNode* b = AddNode({"--node_ttl=60s"});
  ASSERT_TRUE(a && b);
  const ObjectID before = ObjectID::FromLabel("published before the refusal");
  ASSERT_OK(PutTestObject(*a->client, before, 3, 1000));
  ASSERT_OK(cluster_->WaitPublished(*a, {before}));
  // Redis stays up and connected but refuses every write that needs memory (OOM error replies).
  ASSERT_EQ(RedisCli(*cluster_, {"CONFIG", "SET", "maxmemory-policy", "noeviction"}), 0);
  ASSERT_EQ(RedisCli(*cluster_, {"CONFIG", "SET", "maxmemory", "1"}), 0);
  const ObjectID during = ObjectID::FromLabel("put while redis refuses writes");
  ASSERT_OK(PutTestObject(*a->client, during, 4, 5000));
  ASSERT_TRUE(WaitFor([&] { return JsonInt(*StatsVia(a->client_socket), "publish_errors") > 0; }, absl::Seconds(10)))
      << "the publish was not refused; the test proves nothing";
  ASSERT_EQ(RedisCli(*cluster_, {"CONFIG", "SET", "maxmemory", "0"}), 0);
  const absl::Time back = absl::Now();
  bool fetched = false;
  while (!fetched && absl::Now() - back < absl::Seconds(15)) {
    absl::StatusOr<std::vector<absl::Status>> r = FetchVia(b->client_socket, {during}, absl::Seconds(1));
    fetched = r.ok() && (*r)[0].ok();
  }
  EXPECT_TRUE(fetched) << "the refused publish was repaired within 15 s of Redis accepting writes";
  EXPECT_OK(CheckTestObject(*b->client, during, 4, 5000));
}

TEST_F(ManagerFaultTest, ClientFetchAfterItsManagerRestartedSucceedsOnAFreshConnection) {
  TestNode* a = AddNode({});
  TestNode* b = AddNode({});
  ASSERT_TRUE(a && b);
  const ObjectID first = ObjectID::FromLabel("before restart");
  const ObjectID second = ObjectID::FromLabel("after restart");
  ASSERT_OK(PutTestObject(*a->client, first, 5, 2000));
  ASSERT_OK(b->client->Fetch({first}, absl::Seconds(5)));  // leaves a kept connection to B's manager
  ASSERT_OK(cluster_->RestartManager(b));                  // which the restart closes
  ASSERT_TRUE(WaitFor([&] { return StatsVia(b->client_socket).ok(); }, absl::Seconds(5)));
  ASSERT_OK(PutTestObject(*a->client, second, 6, 2000));
  EXPECT_OK(b->client->Fetch({second}, absl::Seconds(5)));
  EXPECT_OK(CheckTestObject(*b->client, second, 6, 2000));
}

TEST_F(ManagerFaultTest, LocationsOfAKilledNodeStopBeingUsedWithinTtlPlusOneSecond) {
  TestNode* a = AddNode({"--node_ttl=1s"});
  TestNode* b = AddNode({});
  ASSERT_TRUE(a && b);
  const ObjectID id = ObjectID::FromLabel("orphan");
  ASSERT_OK(PutTestObject(*a->client, id, 3, 5000));
  ASSERT_OK(cluster_->WaitPublished(*a, {id}));
  a->manager->Kill();
  absl::SleepFor(absl::Seconds(2));  // TTL + 1 s
  ASSERT_OK_AND_ASSIGN(std::string before, StatsVia(b->client_socket));
  ASSERT_OK_AND_ASSIGN(std::vector<absl::Status> result, FetchVia(b->client_socket, {id}, absl::Milliseconds(500)));
  // No live location: the fetch waits for one and times out, without trying the dead node.
  EXPECT_THAT(result[0], HasErrorCode(ErrorCode::kDeadlineExceeded));
  ASSERT_OK_AND_ASSIGN(std::string after, StatsVia(b->client_socket));
  EXPECT_EQ(JsonInt(after, "transfer_failures"), JsonInt(before, "transfer_failures")) << after;
}

TEST_F(ManagerFaultTest, GarbageValuesInRedisAreRejectedAndTheManagerKeepsServing) {
  TestNode* a = AddNode({});
  TestNode* b = AddNode({});
  ASSERT_TRUE(a && b);
  const ObjectID id = ObjectID::FromLabel("garbage");
  const std::string key = "rplasma:obj:" + id.Hex();
  ASSERT_EQ(RedisCli(*cluster_, {"HSET", key, a->node_id, "not,a,location"}), 0);
  ASSERT_EQ(RedisCli(*cluster_, {"HSET", key, "ghost", "1,2,3,4"}), 0);
  ASSERT_EQ(RedisCli(*cluster_, {"SET", "rplasma:node:ghost", "\x01\xff garbage record"}), 0);
  ASSERT_EQ(RedisCli(*cluster_, {"HSET", key, b->node_id, "99999999999999999999999,0,1,1"}), 0);
  ASSERT_OK_AND_ASSIGN(std::vector<absl::Status> result, FetchVia(b->client_socket, {id}, absl::Milliseconds(500)));
  EXPECT_FALSE(result[0].ok());
  EXPECT_FALSE(*b->client->Contains(id));
  // A fetch that starts while only garbage is published skips the bad sources and waits; the real
  // object, published next to the garbage a moment later, arrives.
  absl::StatusOr<std::vector<absl::Status>> waited;
  ASSERT_OK_AND_ASSIGN(nlohmann::json stats_before, ParsedStatsVia(b->client_socket));
  const int64_t requests_before = stats_before.at("fetch_requests").get<int64_t>();
  std::thread fetcher([&] { waited = FetchVia(b->client_socket, {id}, absl::Seconds(5)); });
  EXPECT_TRUE(WaitFor(
      [&] {
        absl::StatusOr<nlohmann::json> stats = ParsedStatsVia(b->client_socket);
        return stats.ok() && stats->at("fetch_requests").get<int64_t>() > requests_before;
      },
      absl::Seconds(5)))
      << "B's manager took the fetch";
  EXPECT_OK(PutTestObject(*a->client, id, 4, 3000));
  fetcher.join();
  ASSERT_OK(waited.status());
  EXPECT_OK((*waited)[0]);
  EXPECT_OK(CheckTestObject(*b->client, id, 4, 3000));
}

TEST_F(ManagerFaultTest, MalformedAndUnauthenticatedPeersAreRefusedAndTheManagerStaysUp) {
  TestNode* a = AddNode({});
  ASSERT_TRUE(a);
  ASSERT_FALSE(a->listen_address.empty());
  // Raw garbage on the peer port.
  for (const std::string& garbage :
       {std::string(4096, '\xff'), std::string("GET / HTTP/1.0\r\n\r\n"), std::string(16, '\0')}) {
    const size_t colon = a->listen_address.rfind(':');
    const int port = std::stoi(a->listen_address.substr(colon + 1));
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    (void)!::write(fd, garbage.data(), garbage.size());
    ::shutdown(fd, SHUT_WR);
    char buf[256];
    while (::read(fd, buf, sizeof(buf)) > 0) {
    }
    ::close(fd);
  }
  // A peer with the wrong secret is refused.
  transport::TransportOptions wrong;
  wrong.secret = "not the cluster secret";
  ASSERT_OK_AND_ASSIGN(auto impostor, transport::tcp::TcpTransport::Create(wrong));
  std::vector<uint8_t> arena(1 << 20);
  ASSERT_OK(impostor->RegisterArena(arena.data(), arena.size()));
  EXPECT_FALSE(impostor->Connect(a->listen_address, absl::Now() + absl::Seconds(5)).ok());
  // An authenticated peer sending malformed requests gets error replies.
  transport::TransportOptions right;
  right.secret = TestNodeOptions().secret;
  ASSERT_OK_AND_ASSIGN(auto peer, transport::tcp::TcpTransport::Create(right));
  ASSERT_OK(peer->RegisterArena(arena.data(), arena.size()));
  ASSERT_OK_AND_ASSIGN(auto channel, peer->Connect(a->listen_address, absl::Now() + absl::Seconds(5)));
  for (const std::string& request :
       {std::string("nonsense"), std::string(100, '\0'), peer::EncodeRequest(peer::ProbeGetRequest{1ull << 40})}) {
    absl::StatusOr<std::string> reply = channel->Call(request, absl::Now() + absl::Seconds(5));
    if (reply.ok()) {
      EXPECT_FALSE(peer::DecodeReply(*reply).ok());
    }
  }
  // A read of a region never pinned is refused.
  EXPECT_FALSE(channel->Read(transport::RemoteRegion{0, 4096, 0}, arena.data(), absl::Now() + absl::Seconds(5)).ok());
  ASSERT_OK_AND_ASSIGN(std::string stats, StatsVia(a->client_socket));
  EXPECT_GE(JsonInt(stats, "bad_requests"), 2) << stats;
  EXPECT_GE(JsonInt(stats, "reads_refused"), 1) << stats;
  EXPECT_TRUE(a->manager->running());
}

// Under TSan, whose checks of every memory access make the 1 GiB of puts, copies and byte checks
// take 90 s, 30 objects: still 300 MiB through the 256 MiB store, so it must evict all the same.
#if defined(ABSL_HAVE_THREAD_SANITIZER)
constexpr int kTenMiBFetches = 30;
#else
constexpr int kTenMiBFetches = 100;
#endif

TEST_F(ManagerFaultTest, HundredTenMiBFetchesIntoA256MiBStoreAllCompleteByEviction) {
  TestNode* a = AddNode({}, (kTenMiBFetches * 10 + 100) * kMiB);
  TestNode* b = AddNode({}, 256 * kMiB);
  ASSERT_TRUE(a && b);
  std::vector<ObjectID> ids;
  for (int i = 0; i < kTenMiBFetches; ++i) {
    ids.push_back(ObjectID::FromLabel(absl::StrCat("ten-mib-", i)));
    ASSERT_OK(PutTestObject(*a->client, ids.back(), 500 + i, 10 * kMiB));
  }
  for (int i = 0; i < kTenMiBFetches; ++i) {
    ASSERT_OK_AND_ASSIGN(std::vector<absl::Status> result, FetchVia(b->client_socket, {ids[i]}, absl::Seconds(30)));
    ASSERT_OK(result[0]) << "fetch #" << i;
    ASSERT_OK(CheckTestObject(*b->client, ids[i], 500 + i, 10 * kMiB)) << "fetch #" << i;
  }
  ASSERT_OK_AND_ASSIGN(StatsReply stats, b->client->Stats());
  EXPECT_LE(stats.used_bytes, stats.capacity);
  EXPECT_GT(stats.evictions, 0u);
  ExpectNoLeaks(b);
}

}  // namespace
}  // namespace rplasma::testing
