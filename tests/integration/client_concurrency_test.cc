// Many threads on the client library at once: a seal waking 1000 waiters, threads sharing one
// Client while another blocks in a long Get, and eviction churn at 8x the store's capacity while
// readers hold references.
#include <atomic>
#include <map>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>

#include "tests/integration/client_test_fixture.h"

namespace rplasma::testing {
namespace {

class ClientConcurrencyTest : public ClientStoreTest {};

TEST_F(ClientConcurrencyTest, OneSealWakesAThousandWaitersSpreadOverFourClients) {
  ASSERT_NO_FATAL_FAILURE(StartStore());
  constexpr int kClients = 4;
  constexpr int kWaitersPerClient = 250;
  std::vector<std::unique_ptr<Client>> clients;
  for (int c = 0; c < kClients; ++c) clients.push_back(Connect(absl::StrCat("waiter-", c)));
  const ObjectID id = ObjectID::FromLabel("awaited");
  const std::vector<uint8_t> data = TestBytes<std::vector<uint8_t>>(42, 4096);
  std::atomic<int> served{0};
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int c = 0; c < kClients; ++c) {
    for (int w = 0; w < kWaitersPerClient; ++w) {
      threads.emplace_back([&, c] {
        absl::StatusOr<ObjectBuffer> buffer = clients[c]->GetOne(id, absl::Seconds(60));
        if (buffer.ok() && std::equal(data.begin(), data.end(), buffer->data().begin(), buffer->data().end())) {
          served.fetch_add(1);
        } else {
          wrong.fetch_add(1);
        }
      });
    }
  }
  ASSERT_TRUE(WaitForStats(
      [](const StatsReply& s) { return s.waiting_gets == static_cast<uint64_t>(kClients * kWaitersPerClient); },
      absl::Seconds(30)));
  ASSERT_OK(client_->Put(id, AsSpan(data)));
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(served.load(), kClients * kWaitersPerClient);
  EXPECT_EQ(wrong.load(), 0);
  clients.clear();
  ASSERT_OK(client_->Delete({id}));
  ExpectBackAtBaseline();
}

TEST_F(ClientConcurrencyTest, LongGetOnASharedClientDoesNotHoldUpOtherThreads) {
  ASSERT_NO_FATAL_FAILURE(StartStore());
  const ObjectID slow = ObjectID::FromLabel("slow");
  std::atomic<bool> long_get_returned{false};
  absl::Status long_status;
  std::thread long_get([&] {
    long_status = client_->GetOne(slow, absl::InfiniteDuration()).status();
    long_get_returned = true;
  });
  ASSERT_TRUE(WaitForStats([](const StatsReply& s) { return s.waiting_gets == 1; }));

  constexpr int kThreads = 4;
  constexpr int kRounds = 150;
  std::atomic<int> failures{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < kThreads; ++t) {
    workers.emplace_back([&, t] {
      for (int r = 0; r < kRounds; ++r) {
        const ObjectID id = ObjectID::FromLabel(absl::StrCat("worker-", t, "-", r));
        const std::vector<uint8_t> data = TestBytes<std::vector<uint8_t>>(t * 1000 + r, 256 + r);
        absl::StatusOr<CreatedObject> created = client_->Create(id, data.size());
        if (!created.ok()) {
          failures++;
          continue;
        }
        std::copy(data.begin(), data.end(), created->data.begin());
        if (!client_->Seal(id).ok() || !client_->Release(id).ok()) {
          failures++;
          continue;
        }
        absl::StatusOr<ObjectBuffer> got = client_->GetOne(id);
        if (!got.ok() || got->info().checksum != ObjectChecksum(AsSpan(data), {}) ||
            !std::equal(data.begin(), data.end(), got->data().begin(), got->data().end())) {
          failures++;
        }
        got = absl::UnknownError("released");
        if (!client_->Delete({id}).ok()) failures++;
      }
    });
  }
  for (std::thread& w : workers) w.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_FALSE(long_get_returned.load()) << "the long Get must still be waiting";
  ASSERT_OK(client_->Put(slow, AsSpan(TestBytes<std::vector<uint8_t>>(1, 10))));
  long_get.join();
  EXPECT_OK(long_status);
  ASSERT_OK(client_->Delete({slow}));
  ExpectBackAtBaseline();
}

TEST_F(ClientConcurrencyTest, EvictionChurnNeverEvictsReferencedObjectsAndEveryReadMatchesItsChecksum) {
  constexpr uint64_t kCapacity = 4 << 20;
  constexpr size_t kSize = 64 << 10;
  constexpr int kObjects = 8 * kCapacity / kSize;  // 8x the capacity goes through the store
  ASSERT_NO_FATAL_FAILURE(StartStore(kCapacity));
  std::mutex mu;                      // std::mutex: visible to TSan (the system abseil is not instrumented)
  std::map<int, uint64_t> checksums;  // object index -> checksum, once put
  std::atomic<int> written{0};
  std::atomic<bool> done{false};
  std::atomic<int> reads{0};
  std::atomic<int> bad{0};

  std::vector<std::thread> readers;
  for (int r = 0; r < 3; ++r) {
    readers.emplace_back([&, r] {
      std::unique_ptr<Client> reader = Connect(absl::StrCat("reader-", r));
      uint64_t x = 12345 + r;
      while (!done.load()) {
        const int newest = written.load();
        if (newest == 0) continue;
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        const int index = newest - 1 - static_cast<int>((x >> 33) % std::min(newest, 16));
        uint64_t expected;
        {
          std::lock_guard<std::mutex> lock(mu);
          expected = checksums.at(index);
        }
        absl::StatusOr<ObjectBuffer> held = reader->GetOne(ObjectID::FromLabel(absl::StrCat("churn-", index)));
        if (!held.ok()) continue;  // already evicted: fine
        reads++;
        if (ObjectChecksum(held->data(), held->metadata()) != expected || held->info().checksum != expected) bad++;
        // Hold it while the writer keeps evicting: it must neither vanish nor change.
        absl::SleepFor(absl::Milliseconds(2));
        absl::StatusOr<bool> present = reader->Contains(held->id());
        if (!present.ok() || !*present || ObjectChecksum(held->data(), held->metadata()) != expected) bad++;
      }
    });
  }
  std::unique_ptr<Client> writer = Connect("writer");
  for (int i = 0; i < kObjects; ++i) {
    const std::vector<uint8_t> data = TestBytes<std::vector<uint8_t>>(i, kSize);
    {
      std::lock_guard<std::mutex> lock(mu);
      checksums[i] = ObjectChecksum(AsSpan(data), {});
    }
    ASSERT_OK(writer->Put(ObjectID::FromLabel(absl::StrCat("churn-", i)), AsSpan(data))) << i;
    written = i + 1;
  }
  done = true;
  for (std::thread& t : readers) t.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_GT(reads.load(), 0);
  ASSERT_OK_AND_ASSIGN(StatsReply stats, client_->Stats());
  EXPECT_GE(stats.evictions, static_cast<uint64_t>(kObjects - kCapacity / kSize));
  writer.reset();
  ASSERT_OK(client_->Evict(kCapacity).status());
  ExpectBackAtBaseline();
}

}  // namespace
}  // namespace rplasma::testing
