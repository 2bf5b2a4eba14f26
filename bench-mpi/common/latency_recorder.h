// LatencyRecorder: the samples of one measured operation, and their summary statistics.
//
// Samples are nanoseconds, all kept (a run is at most a few million samples), so percentiles are
// exact: nearest rank on the sorted samples. Not thread-safe: one recorder per measuring thread.
#ifndef RPLASMA_BENCH_MPI_COMMON_LATENCY_RECORDER_H_
#define RPLASMA_BENCH_MPI_COMMON_LATENCY_RECORDER_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace rplasma::bench {

// Summary in microseconds. All fields are 0 for an empty recorder.
struct LatencySummary {
  int64_t count = 0;
  double total_us = 0;  // sum of the samples
  double mean_us = 0;
  double min_us = 0;
  double p50_us = 0;
  double p95_us = 0;
  double p99_us = 0;
  double max_us = 0;

  // Operations per second of a single caller doing these operations back to back: count / total.
  double ops_per_s() const { return total_us > 0 ? count * 1e6 / total_us : 0; }
  // The same summary with every time divided by `n` and the count multiplied by it (per-item
  // costs of a batch of n items). REQUIRES: n > 0.
  LatencySummary PerItem(int64_t n) const;
};

class LatencyRecorder {
 public:
  LatencyRecorder() = default;

  void Reserve(size_t n) { samples_ns_.reserve(n); }
  void Record(int64_t nanoseconds) { samples_ns_.push_back(nanoseconds); }
  int64_t count() const { return static_cast<int64_t>(samples_ns_.size()); }
  void Clear() { samples_ns_.clear(); }

  LatencySummary Summarize() const;

 private:
  std::vector<int64_t> samples_ns_;
};

}  // namespace rplasma::bench

#endif  // RPLASMA_BENCH_MPI_COMMON_LATENCY_RECORDER_H_
