// RedisDirectory reading garbage that someone else wrote into its keys: wrong types, huge and
// non-decimal numbers, oversized strings, bad node ids. Garbage is skipped and counted; good
// entries still come back; nothing crashes; writes repair keys of the wrong type.
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "bench-mpi/launch/redis_server.h"
#include "manager/directory/redis_connection.h"
#include "manager/directory/redis_directory.h"
#include "tests/integration/directory_test_values.h"
#include "tests/support/skip.h"
#include "tests/support/status_matchers.h"

namespace rplasma {
namespace {

using ::rplasma::testing::HasErrorCode;
using ::rplasma::testing::NodeIds;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

class RedisDirectoryGarbageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RPLASMA_SKIP_IF_NO_REDIS_SERVER();
    ASSERT_OK_AND_ASSIGN(redis_, bench::RedisServer::Start());
    RedisDirectoryOptions options;
    options.address = redis_->address();
    ASSERT_OK_AND_ASSIGN(directory_, RedisDirectory::Create(options));
    ASSERT_OK(directory_->RegisterNode(NodeRecord{"node-a", "127.0.0.1:7000", "", 1}));
    ASSERT_OK_AND_ASSIGN(raw_, RedisConnection::Connect(redis_->address(), absl::Seconds(2)));
  }

  void Raw(std::vector<RedisCommand> commands) {
    auto replies = raw_->Pipeline(commands, absl::Now() + absl::Seconds(5));
    ASSERT_OK(replies);
    for (size_t i = 0; i < replies->size(); ++i) {
      ASSERT_FALSE((*replies)[i].view().is_error()) << commands[i][0] << ": " << (*replies)[i].view().str();
    }
  }

  std::unique_ptr<bench::RedisServer> redis_;
  std::unique_ptr<RedisDirectory> directory_;
  std::unique_ptr<RedisConnection> raw_;
};

TEST_F(RedisDirectoryGarbageTest, MalformedEntriesAreSkippedAndGoodOnesStillReturn) {
  ObjectID id = ObjectID::FromLabel("mixed");
  ASSERT_OK(directory_->PublishObject(id, ObjectLocation{"", {10, 1, 3, 4}}));
  const std::string key = "rplasma:obj:" + id.Hex();
  Raw({
      {"HSET", key, "bad node id!", "1,2,3,4"},
      {"HSET", key, std::string(200, 'n'), "1,2,3,4"},
      {"HSET", key, std::string("nul\0id", 6), "1,2,3,4"},
      {"HSET", key, "node-b", "abc"},
      {"HSET", key, "node-c", "1,2,3"},
      {"HSET", key, "node-d", "99999999999999999999999,0,0,0"},
      {"HSET", key, "node-e", "18446744073709551616,0,0,0"},
      {"HSET", key, "node-f", "-1,0,0,0"},
      {"HSET", key, "node-g", std::string(1 << 20, '7')},
      {"HSET", key, "node-h", " 1,2,3,4"},
      // node-i is well formed and alive: it must come back next to node-a.
      {"SET", "rplasma:node:node-i", "epoch=1|tcp=127.0.0.1:7001|verbs="},
      {"HSET", key, "node-i", "5,6,7,8"},
  });
  // Make every malformed node "alive" so that nothing is filtered for liveness instead.
  for (const char* node : {"node-b", "node-c", "node-d", "node-e", "node-f", "node-g", "node-h"}) {
    Raw({{"SET", std::string("rplasma:node:") + node, "epoch=1|tcp=|verbs="}});
  }

  const uint64_t garbage_before = directory_->stats()["garbage_values"];
  ASSERT_OK_AND_ASSIGN(auto found, directory_->Lookup({id}));
  EXPECT_THAT(NodeIds(found[0]), ::testing::UnorderedElementsAre("node-a", "node-i"));
  for (const ObjectLocation& location : found[0]) {
    if (location.node_id == "node-i") {
      EXPECT_EQ(location.object.data_size, 5u);
      EXPECT_EQ(location.object.checksum, 8u);
    }
  }
  EXPECT_EQ(directory_->stats()["garbage_values"] - garbage_before, 10u);
}

TEST_F(RedisDirectoryGarbageTest, KeysOfTheWrongTypeAreSkippedOnReadAndReplacedOnWrite) {
  ObjectID good = ObjectID::FromLabel("good");
  ObjectID as_string = ObjectID::FromLabel("as-string");
  ObjectID as_list = ObjectID::FromLabel("as-list");
  ASSERT_OK(directory_->PublishObject(good, ObjectLocation{"", {1, 0, 1, 1}}));
  Raw({{"SET", "rplasma:obj:" + as_string.Hex(), "node-a"},
       {"RPUSH", "rplasma:obj:" + as_list.Hex(), "node-a", "1,0,1,1"}});

  ASSERT_OK_AND_ASSIGN(auto found, directory_->Lookup({as_string, good, as_list}));
  EXPECT_THAT(found[0], IsEmpty());
  EXPECT_THAT(NodeIds(found[1]), ElementsAre("node-a"));
  EXPECT_THAT(found[2], IsEmpty());
  EXPECT_GE(directory_->stats()["garbage_values"], 2u);

  ASSERT_OK(directory_->PublishObject(as_string, ObjectLocation{"", {2, 0, 2, 2}}));
  ASSERT_OK_AND_ASSIGN(auto repaired, directory_->Lookup({as_string}));
  ASSERT_EQ(repaired[0].size(), 1u);
  EXPECT_EQ(repaired[0][0].object.generation, 2u);
}

TEST_F(RedisDirectoryGarbageTest, MalformedNodeRecordsAreErrorsNotCrashes) {
  Raw({{"SET", "rplasma:node:node-x", "garbage"},
       {"SET", "rplasma:node:node-y", "epoch=99999999999999999999999|tcp=|verbs="},
       {"SET", "rplasma:node:node-z", "epoch=1|tcp=" + std::string(100000, 'a') + "|verbs="},
       {"HSET", "rplasma:node:node-w", "f", "v"}});
  for (const char* node : {"node-x", "node-y", "node-z", "node-w"}) {
    absl::StatusOr<NodeRecord> record = directory_->GetNode(node);
    EXPECT_THAT(record, HasErrorCode(ErrorCode::kProtocolError)) << node;
  }
  EXPECT_GE(directory_->stats()["garbage_values"], 4u);
  EXPECT_OK(directory_->GetNode("node-a"));
}

TEST_F(RedisDirectoryGarbageTest, GarbageInTheNodeSetsDoesNotStopUnregisterOrSweep) {
  std::vector<std::pair<ObjectID, ObjectLocation>> objects;
  for (int i = 0; i < 5; ++i)
    objects.emplace_back(ObjectID::FromLabel("g" + std::to_string(i)), ObjectLocation{"", {1, 0, 1, 1}});
  ASSERT_OK(directory_->PublishObjects(objects));
  Raw({{"SADD", "rplasma:node-objects:node-a", "not-hex", std::string(5000, 'f'), "zz" + std::string(38, '0')},
       {"SADD", "rplasma:nodes", "bad node", std::string(300, 'x'), "ghost"},
       {"SET", "rplasma:node-objects:ghost", "wrong type"}});

  ASSERT_OK(directory_->SweepExpiredNodes());  // "ghost" has no record: swept despite its bad set
  EXPECT_EQ(directory_->stats()["swept_nodes"], 1u);

  ASSERT_OK(directory_->UnregisterNode());
  std::vector<ObjectID> ids;
  for (const auto& [id, location] : objects) ids.push_back(id);
  RedisDirectoryOptions options;
  options.address = redis_->address();
  ASSERT_OK_AND_ASSIGN(auto observer, RedisDirectory::Create(options));
  ASSERT_OK_AND_ASSIGN(auto found, observer->Lookup(ids));
  for (const auto& locations : found) EXPECT_THAT(locations, IsEmpty());
  EXPECT_GE(directory_->stats()["garbage_values"], 5u);
}

TEST_F(RedisDirectoryGarbageTest, AHashWithTooManyEntriesIsReadOnlyUpToItsBound) {
  ObjectID id = ObjectID::FromLabel("crowded");
  const std::string key = "rplasma:obj:" + id.Hex();
  RedisCommand hset = {"HSET", key};
  for (int i = 0; i < 5000; ++i) {
    hset.push_back("ghost-" + std::to_string(i));
    hset.push_back("1,0,1,1");
  }
  Raw({hset});
  ASSERT_OK_AND_ASSIGN(auto found, directory_->Lookup({id}));
  EXPECT_THAT(found[0], IsEmpty());  // none of the ghosts is alive
  EXPECT_GE(directory_->stats()["garbage_values"], 1u);
  EXPECT_GE(directory_->stats()["cleaned_entries"], 4000u);  // the expired ghosts read were cleaned
}

}  // namespace
}  // namespace rplasma
