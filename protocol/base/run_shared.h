// RunShared: runs work(0) .. work(n - 1), each exactly once, on up to `threads` threads — the
// caller's and up to threads - 1 started here — each taking the next item not yet started. Returns
// when every item is done and every thread it started has finished. `work` is called concurrently
// for different items: it must be safe to.
#ifndef RPLASMA_PROTOCOL_BASE_RUN_SHARED_H_
#define RPLASMA_PROTOCOL_BASE_RUN_SHARED_H_

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

#include "absl/functional/function_ref.h"

namespace rplasma {

inline void RunShared(size_t n, size_t threads, absl::FunctionRef<void(size_t)> work) {
  std::atomic<size_t> next{0};
  auto take = [&] {
    for (size_t i = next.fetch_add(1); i < n; i = next.fetch_add(1)) work(i);
  };
  std::vector<std::thread> started;
  for (size_t t = 1; t < std::min(n, threads); ++t) started.emplace_back(take);
  take();
  for (std::thread& t : started) t.join();
}

}  // namespace rplasma

#endif  // RPLASMA_PROTOCOL_BASE_RUN_SHARED_H_
