// The measurement loop shared by the benchmarks: run an operation a bounded number of times or
// for a bounded time, whichever ends first, after a short untimed warm-up.
#ifndef RPLASMA_BENCH_MPI_COMMON_MEASURE_LOOP_H_
#define RPLASMA_BENCH_MPI_COMMON_MEASURE_LOOP_H_

#include <chrono>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace rplasma::bench {

struct LoopLimits {
  int64_t iterations = 1000;                   // at most this many timed runs
  absl::Duration duration = absl::Seconds(1);  // stop starting new runs after this long...
  int64_t min_iterations = 3;                  // ...but only once this many ran
  int64_t warmup = 2;                          // untimed runs first (page faults, caches)
};

// Monotonic nanoseconds (steady_clock: vDSO, ~20 ns per call).
inline int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Calls body(timed) warmup times with timed=false, then with timed=true until `limits` say stop.
// The body records its own samples (only when timed), so untimed clean-up can sit inside it.
// Returns the first error of the body.
template <typename Body>
absl::Status RunLoop(const LoopLimits& limits, Body body) {
  for (int64_t i = 0; i < limits.warmup; ++i) {
    absl::Status status = body(false);
    if (!status.ok()) return status;
  }
  const int64_t start = NowNs();
  const int64_t budget = absl::ToInt64Nanoseconds(limits.duration);
  for (int64_t i = 0; i < limits.iterations; ++i) {
    if (i >= limits.min_iterations && NowNs() - start > budget) break;
    absl::Status status = body(true);
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

}  // namespace rplasma::bench

#endif  // RPLASMA_BENCH_MPI_COMMON_MEASURE_LOOP_H_
