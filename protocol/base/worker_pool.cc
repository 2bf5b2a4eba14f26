#include "protocol/base/worker_pool.h"

#include <algorithm>
#include <atomic>

#include "protocol/base/mutex_lock.h"
#include "protocol/base/run_shared.h"

namespace rplasma {

// One RunShared call, shared with the helpers it asked for: a helper that comes after the last
// item was taken only reads `next` (the job outlives it through its shared_ptr) and never calls
// `work`, whose target lives on the caller's stack.
struct WorkerPool::Job {
  Job(size_t n, absl::FunctionRef<void(size_t)> work) : n(n), work(work) {}

  // Runs items until none is left.
  void Take() {
    for (size_t i = next.fetch_add(1); i < n; i = next.fetch_add(1)) {
      work(i);
      MutexLock lock(&mu);
      if (++done == n) all_done.SignalAll();
    }
  }

  const size_t n;
  const absl::FunctionRef<void(size_t)> work;
  std::atomic<size_t> next{0};
  absl::Mutex mu;
  absl::CondVar all_done;
  size_t done ABSL_GUARDED_BY(mu) = 0;
};

WorkerPool::WorkerPool(size_t threads) {
  threads_.reserve(threads);
  for (size_t t = 0; t < threads; ++t) threads_.emplace_back([this] { Loop(); });
}

WorkerPool::~WorkerPool() {
  {
    MutexLock lock(&mu_);
    stopping_ = true;
    wake_.SignalAll();
  }
  for (std::thread& t : threads_) t.join();
}

void WorkerPool::Loop() {
  while (true) {
    std::shared_ptr<Job> job;
    {
      MutexLock lock(&mu_);
      while (!stopping_ && wanted_.empty()) lock.Wait(&wake_);
      if (stopping_) return;
      job = std::move(wanted_.front());
      wanted_.pop_front();
    }
    job->Take();
  }
}

void WorkerPool::RunShared(size_t n, size_t parallel, absl::FunctionRef<void(size_t)> work) {
  if (n == 0) return;
  auto job = std::make_shared<Job>(n, work);
  const size_t helpers = std::min({n, std::max<size_t>(parallel, 1), threads_.size() + 1}) - 1;
  if (helpers > 0) {
    MutexLock lock(&mu_);
    // One waiting thread per helper asked for (waking them all cost every idle thread a
    // pointless wake-up and context switch per call); a busy one looks at wanted_ before it waits.
    for (size_t h = 0; h < helpers; ++h) {
      wanted_.push_back(job);
      wake_.Signal();
    }
  }
  job->Take();
  if (helpers > 0) {
    // Helpers that have not come yet are not needed any more.
    MutexLock lock(&mu_);
    wanted_.erase(std::remove(wanted_.begin(), wanted_.end(), job), wanted_.end());
  }
  MutexLock lock(&job->mu);
  while (job->done < n) lock.Wait(&job->all_done);
}

void RunSharedOn(WorkerPool* pool, size_t n, size_t parallel, absl::FunctionRef<void(size_t)> work) {
  if (pool != nullptr) {
    pool->RunShared(n, parallel, work);
  } else {
    rplasma::RunShared(n, parallel, work);
  }
}

}  // namespace rplasma
