#include "protocol/base/worker_pool.h"

#include <atomic>
#include <filesystem>
#include <set>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include <gtest/gtest.h>

#include "protocol/base/mutex_lock.h"
#include "protocol/base/notification.h"

namespace rplasma {
namespace {

size_t ThreadsOfThisProcess() {
  size_t n = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/task")) {
    (void)entry;
    ++n;
  }
  return n;
}

TEST(WorkerPoolTest, EveryItemRunsExactlyOnceOnAtMostTheThreadsAskedAndNoThreadIsStartedPerCall) {
  WorkerPool pool(4);
  const size_t threads = ThreadsOfThisProcess();
  for (int call = 0; call < 200; ++call) {
    std::vector<std::atomic<int>> runs(50);
    absl::Mutex mu;
    std::set<std::thread::id> seen;
    std::atomic<int> running{0};
    std::atomic<int> most{0};
    pool.RunShared(runs.size(), 3, [&](size_t i) {
      const int now = running.fetch_add(1) + 1;
      int before = most.load();
      while (now > before && !most.compare_exchange_weak(before, now)) {
      }
      runs[i].fetch_add(1);
      {
        MutexLock lock(&mu);
        seen.insert(std::this_thread::get_id());
      }
      running.fetch_sub(1);
    });
    for (const std::atomic<int>& r : runs) ASSERT_EQ(r.load(), 1);
    ASSERT_LE(seen.size(), 3u);
    ASSERT_LE(most.load(), 3);
  }
  EXPECT_EQ(ThreadsOfThisProcess(), threads) << "the pool's threads only";
}

TEST(WorkerPoolTest, NestedCallsAndABusyPoolStillFinishOnTheCallersThread) {
  WorkerPool pool(2);
  // Both pool threads are held by the items of an outer call, each of which runs a nested call:
  // the nested items must run on their callers.
  std::atomic<int> inner{0};
  pool.RunShared(3, 3, [&](size_t) { pool.RunShared(10, 4, [&](size_t) { inner.fetch_add(1); }); });
  EXPECT_EQ(inner.load(), 30);

  // Every pool thread blocked elsewhere: a new call runs everything itself.
  Notification release;
  std::atomic<int> blocked{0};
  std::thread holder([&] {
    pool.RunShared(3, 3, [&](size_t) {
      blocked.fetch_add(1);
      release.WaitForNotification();
    });
  });
  while (blocked.load() < 2) std::this_thread::yield();  // the holder's caller thread and one pool thread at least
  std::atomic<int> done{0};
  pool.RunShared(20, 3, [&](size_t) { done.fetch_add(1); });
  EXPECT_EQ(done.load(), 20);
  release.Notify();
  holder.join();
}

TEST(WorkerPoolTest, WithoutAPoolRunSharedOnStartsItsOwnThreads) {
  std::atomic<int> count{0};
  RunSharedOn(nullptr, 7, 3, [&](size_t) { count.fetch_add(1); });
  EXPECT_EQ(count.load(), 7);
}

}  // namespace
}  // namespace rplasma
