// ClientStoreTest: a fixture for client integration tests — a real rplasma-store process, a
// connected Client, object helpers, and the leak audit every lifecycle test ends with (store
// used bytes, objects, references and open fds back at their values right after start).
#ifndef RPLASMA_TESTS_INTEGRATION_CLIENT_TEST_FIXTURE_H_
#define RPLASMA_TESTS_INTEGRATION_CLIENT_TEST_FIXTURE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include <gtest/gtest.h>

#include "client/checksum.h"
#include "client/client.h"
#include "tests/support/status_matchers.h"
#include "tests/support/store_process.h"
#include "tests/support/test_bytes.h"
#include "tests/support/wait_for.h"

namespace rplasma::testing {

class ClientStoreTest : public ::testing::Test {
 protected:
  // Starts a store with `memory` bytes, connects `client_`, records the audit baseline.
  void StartStore(uint64_t memory = 64ull << 20, std::vector<std::string> extra_args = {}) {
    StoreProcessOptions options;
    options.memory = memory;
    options.extra_args = std::move(extra_args);
    auto store = StoreProcess::Start(options);
    ASSERT_OK(store);
    store_ = std::move(store).value();
    client_ = Connect("test-main");
    ASSERT_NE(client_, nullptr);
    auto stats = client_->Stats();
    ASSERT_OK(stats);
    baseline_ = *stats;
    baseline_fds_ = store_->OpenFdCount();
    ASSERT_GT(baseline_fds_, 0);
  }

  void TearDown() override {
    if (HasFailure() && store_ != nullptr) std::cerr << "---- store log ----\n" << store_->ReadLog();
  }

  // `without_ipc`: gets of sealed objects through the shared index (the default); false: every
  // get is a store request, whose references the store counts (ref_count).
  std::unique_ptr<Client> Connect(const std::string& name, bool without_ipc = true) {
    ClientOptions options;
    options.store_socket = store_->socket_path();
    options.client_name = name;
    options.get_without_ipc = without_ipc;
    auto client = Client::Connect(options);
    EXPECT_OK(client);
    return client.ok() ? std::move(client).value() : nullptr;
  }

  // References clients hold: counted by the store, or through their slots.
  static uint64_t HeldReferences(const StatsReply& s) { return s.ref_count; }  // slots included

  static std::vector<ObjectID> Labels(const std::string& prefix, int count) {
    std::vector<ObjectID> ids;
    for (int i = 0; i < count; ++i) ids.push_back(ObjectID::FromLabel(absl::StrCat(prefix, "-", i)));
    return ids;
  }

  // Polls the store until `predicate(stats)` holds or `timeout` passes.
  template <typename Pred>
  bool WaitForStats(Pred predicate, absl::Duration timeout = absl::Seconds(10)) {
    return WaitFor(
        [&] {
          auto stats = client_->Stats();
          return stats.ok() && predicate(*stats);
        },
        timeout);
  }

  // The leak audit: back at the post-start baseline within `timeout`.
  void ExpectBackAtBaseline(absl::Duration timeout = absl::Seconds(10)) {
    bool ok = WaitFor(
        [&] {
          auto s = client_->Stats();
          return s.ok() && s->used_bytes == baseline_.used_bytes && s->objects_created == baseline_.objects_created &&
                 s->objects_sealed == baseline_.objects_sealed && s->ref_count == baseline_.ref_count &&
                 s->slot_references == baseline_.slot_references && s->reclaims_waiting == 0 &&
                 s->clients == baseline_.clients && s->waiting_gets == baseline_.waiting_gets &&
                 store_->OpenFdCount() == baseline_fds_;
        },
        timeout);
    auto s = client_->Stats();
    ASSERT_OK(s);
    EXPECT_TRUE(ok) << "store not back at baseline: used " << s->used_bytes << " (was " << baseline_.used_bytes
                    << "), created " << s->objects_created << ", sealed " << s->objects_sealed << ", refs "
                    << s->ref_count << ", clients " << s->clients << ", waiting gets " << s->waiting_gets << ", fds "
                    << store_->OpenFdCount() << " (was " << baseline_fds_ << ")";
  }

  std::unique_ptr<StoreProcess> store_;
  std::unique_ptr<Client> client_;
  StatsReply baseline_;
  int baseline_fds_ = -1;
};

inline absl::Span<const uint8_t> AsSpan(const std::vector<uint8_t>& v) { return absl::MakeConstSpan(v); }

}  // namespace rplasma::testing

#endif  // RPLASMA_TESTS_INTEGRATION_CLIENT_TEST_FIXTURE_H_
