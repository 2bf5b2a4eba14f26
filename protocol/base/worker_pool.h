// WorkerPool: a fixed set of threads that help callers run items side by side, so that a fetch
// does not start threads of its own (RunShared in run_shared.h starts them per call).
//
// RunShared(n, parallel, work) runs work(0) .. work(n - 1), each exactly once: the caller takes
// items itself, and up to parallel - 1 of the pool's threads join it while items are left. It
// returns when every item is done. The caller never waits for a pool thread that has not started
// an item, so nested RunShared calls (an item that runs a RunShared of its own) and a pool whose
// threads are all busy elsewhere still make progress: the caller then runs every item itself.
//
// Thread-safety: thread-safe; `work` is called concurrently for different items.
#ifndef RPLASMA_PROTOCOL_BASE_WORKER_POOL_H_
#define RPLASMA_PROTOCOL_BASE_WORKER_POOL_H_

#include <cstddef>
#include <deque>
#include <memory>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "absl/synchronization/mutex.h"

namespace rplasma {

class WorkerPool {
 public:
  explicit WorkerPool(size_t threads);
  ~WorkerPool();  // REQUIRES: no RunShared in progress
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  void RunShared(size_t n, size_t parallel, absl::FunctionRef<void(size_t)> work);

  size_t threads() const { return threads_.size(); }

 private:
  struct Job;
  void Loop();

  absl::Mutex mu_;
  absl::CondVar wake_;
  std::deque<std::shared_ptr<Job>> wanted_ ABSL_GUARDED_BY(mu_);  // one entry per helper a job wants
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
};

// `pool`'s RunShared, or run_shared.h's (threads started for the call) when `pool` is null.
void RunSharedOn(WorkerPool* pool, size_t n, size_t parallel, absl::FunctionRef<void(size_t)> work);

}  // namespace rplasma

#endif  // RPLASMA_PROTOCOL_BASE_WORKER_POOL_H_
