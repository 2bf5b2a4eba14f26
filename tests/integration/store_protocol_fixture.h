// StoreProtocolTest: a fixture for tests that speak the raw store protocol to a real
// rplasma-store — the store process, a connected RawStoreClient, small request helpers, and the
// leak audit (no bytes, objects or references left, fds at baseline) every such test ends with.
#ifndef RPLASMA_TESTS_INTEGRATION_STORE_PROTOCOL_FIXTURE_H_
#define RPLASMA_TESTS_INTEGRATION_STORE_PROTOCOL_FIXTURE_H_

#include <iostream>
#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include "protocol/base/logging.h"
#include "protocol/store_messages.h"
#include "tests/support/status_matchers.h"
#include "tests/support/store_process.h"

namespace rplasma::testing {

template <typename T>
const T& BodyOf(const Reply& reply) {
  const T* body = std::get_if<T>(&reply.body);
  CHECK(body != nullptr) << "unexpected reply body";
  return *body;
}

class StoreProtocolTest : public ::testing::Test {
 protected:
  void SetUp() override { StartStore({}); }
  void StartStore(StoreProcessOptions options) {
    client_.reset();
    ASSERT_OK_AND_ASSIGN(store_, StoreProcess::Start(std::move(options)));
    baseline_fds_ = store_->OpenFdCount();
    ASSERT_GT(baseline_fds_, 0);
    ASSERT_OK_AND_ASSIGN(client_, RawStoreClient::Connect(store_->socket_path(), "main"));
  }
  void TearDown() override {
    // A clean SIGTERM exit also proves the store had no sanitizer finding or leak (LeakSanitizer
    // turns the exit status non-zero) in sanitizer builds.
    if (store_ != nullptr && store_->running()) {
      EXPECT_OK(store_->StopCleanly());
    }
    if (HasFailure() && store_ != nullptr) std::cerr << "store log:\n" << store_->ReadLog();
  }

  StatsReply Stats(RawStoreClient& c) {
    absl::StatusOr<Reply> r = c.Call(StatsRequest{});
    CHECK(r.ok()) << r.status();
    return BodyOf<StatsReply>(*r);
  }
  // Create + Seal by `c` (which keeps its creator reference); returns the offset.
  uint64_t CreateSealed(RawStoreClient& c, const ObjectID& id, uint64_t size = 1000) {
    absl::StatusOr<Reply> r = c.Call(CreateRequest{id, size, 0, true});
    CHECK(r.ok() && r->status().ok()) << r.status() << " / " << (r.ok() ? r->status() : absl::OkStatus());
    absl::StatusOr<Reply> s = c.Call(SealRequest{id, 5});
    CHECK(s.ok() && s->status().ok());
    return BodyOf<CreateReply>(*r).offset;
  }
  std::vector<ErrorCode> Codes(RawStoreClient& c, RequestBody body) {
    absl::StatusOr<Reply> r = c.Call(std::move(body));
    CHECK(r.ok() && r->status().ok()) << r.status();
    return BodyOf<CodesReply>(*r).codes;
  }
  // Drops every connection but a fresh auditor and checks the store is back at its baseline.
  void ExpectNoLeaks() {
    client_.reset();
    ASSERT_OK_AND_ASSIGN(auto auditor, RawStoreClient::Connect(store_->socket_path(), "auditor"));
    StatsReply s;
    EXPECT_TRUE(WaitFor(
        [&] {
          s = Stats(*auditor);
          return s.clients == 1 && s.ref_count == 0 && s.objects_created == 0;
        },
        absl::Seconds(5)));
    EXPECT_EQ(s.ref_count, 0u);
    EXPECT_EQ(s.objects_created, 0u);
    EXPECT_EQ(s.waiting_gets, 0u);
    EXPECT_EQ(s.subscribers, 0u);
    // Sealed leftovers are legitimate cache content; delete them, then nothing may remain.
    bool more = true;
    while (more) {
      ASSERT_OK_AND_ASSIGN(Reply page, auditor->Call(ListRequest{std::nullopt, kMaxListPage}));
      const ObjectsReply& objects = BodyOf<ObjectsReply>(page);
      more = objects.more;
      std::vector<ObjectID> ids;
      for (const ObjectInfo& o : objects.objects) ids.push_back(o.id);
      if (!ids.empty()) Codes(*auditor, DeleteRequest{ids});
    }
    s = Stats(*auditor);
    EXPECT_EQ(s.used_bytes, 0u);
    EXPECT_EQ(s.objects_sealed, 0u);
    EXPECT_EQ(s.free_blocks, 1u);
    auditor.reset();
    EXPECT_TRUE(WaitFor([&] { return store_->OpenFdCount() == baseline_fds_; }, absl::Seconds(5)))
        << store_->OpenFdCount() << " fds, baseline " << baseline_fds_;
  }

  std::unique_ptr<StoreProcess> store_;
  std::unique_ptr<RawStoreClient> client_;
  int baseline_fds_ = 0;
};

}  // namespace rplasma::testing

#endif  // RPLASMA_TESTS_INTEGRATION_STORE_PROTOCOL_FIXTURE_H_
