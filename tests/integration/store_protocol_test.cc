// The store's request/reply behaviour over the raw protocol, against a real rplasma-store.
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "protocol/store_messages.h"
#include "tests/support/status_matchers.h"
#include "tests/support/store_process.h"

namespace rplasma {
namespace {

using ::rplasma::testing::RawStoreClient;
using ::rplasma::testing::StoreProcess;

class StoreProtocolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(store_, StoreProcess::Start());
    ASSERT_OK_AND_ASSIGN(client_, RawStoreClient::Connect(store_->socket_path()));
  }
  void TearDown() override {
    if (HasFailure() && store_ != nullptr) std::cerr << "store log:\n" << store_->ReadLog();
  }

  std::unique_ptr<StoreProcess> store_;
  std::unique_ptr<RawStoreClient> client_;
};

TEST_F(StoreProtocolTest, CreateSealGetRoundTripsBytesThroughTheArena) {
  ObjectID id = ObjectID::FromLabel("round-trip");
  ASSERT_OK_AND_ASSIGN(Reply created, client_->Call(CreateRequest{id, 100, 10, true}));
  ASSERT_OK(created.status());
  auto* c = std::get_if<CreateReply>(&created.body);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->offset % 64, 0u);

  uint64_t arena = client_->connect_reply().arena_size;
  void* base = ::mmap(nullptr, arena, PROT_READ | PROT_WRITE, MAP_SHARED, client_->arena_fd(), 0);
  ASSERT_NE(base, MAP_FAILED);
  std::memset(static_cast<char*>(base) + c->offset, 0xab, 110);

  ASSERT_OK_AND_ASSIGN(Reply sealed, client_->Call(SealRequest{id, 42}));
  ASSERT_OK(sealed.status());

  ASSERT_OK_AND_ASSIGN(auto reader, RawStoreClient::Connect(store_->socket_path(), "reader"));
  ASSERT_OK_AND_ASSIGN(Reply got, reader->Call(GetRequest{{id}, 0}));
  ASSERT_OK(got.status());
  auto* objects = std::get_if<ObjectsReply>(&got.body);
  ASSERT_NE(objects, nullptr);
  ASSERT_EQ(objects->objects.size(), 1u);
  const ObjectInfo& info = objects->objects[0];
  EXPECT_EQ(info.error, ErrorCode::kOk);
  EXPECT_EQ(info.offset, c->offset);
  EXPECT_EQ(info.data_size, 100u);
  EXPECT_EQ(info.metadata_size, 10u);
  EXPECT_EQ(info.checksum, 42u);
  EXPECT_EQ(info.generation, c->generation);
  void* rbase = ::mmap(nullptr, arena, PROT_READ, MAP_SHARED, reader->arena_fd(), 0);
  ASSERT_NE(rbase, MAP_FAILED);
  EXPECT_EQ(static_cast<unsigned char*>(rbase)[info.offset + 109], 0xab);
  ::munmap(base, arena);
  ::munmap(rbase, arena);
}

}  // namespace
}  // namespace rplasma
