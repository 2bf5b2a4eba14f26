#include "protocol/base/run_shared.h"

#include <atomic>
#include <set>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include <gtest/gtest.h>

#include "protocol/base/mutex_lock.h"

namespace rplasma {
namespace {

TEST(RunSharedTest, EveryItemRunsExactlyOnceOnAtMostTheThreadsAsked) {
  std::vector<std::atomic<int>> runs(100);
  absl::Mutex mu;
  std::set<std::thread::id> seen;
  RunShared(runs.size(), 3, [&](size_t i) {
    runs[i].fetch_add(1);
    MutexLock lock(&mu);  // not absl::MutexLock: TSan cannot see that one (mutex_lock.h)
    seen.insert(std::this_thread::get_id());
  });
  for (const std::atomic<int>& r : runs) EXPECT_EQ(r.load(), 1);
  EXPECT_GE(seen.size(), 1u);
  EXPECT_LE(seen.size(), 3u);
}

TEST(RunSharedTest, NoItemsOrOneThreadRunOnTheCaller) {
  RunShared(0, 4, [](size_t) { ADD_FAILURE() << "no item to run"; });
  const std::thread::id caller = std::this_thread::get_id();
  int count = 0;
  RunShared(5, 1, [&](size_t) {
    EXPECT_EQ(std::this_thread::get_id(), caller);
    ++count;
  });
  EXPECT_EQ(count, 5);
}

}  // namespace
}  // namespace rplasma
