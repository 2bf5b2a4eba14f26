// LatencyHistogram: durations counted into fixed buckets, for Prometheus histograms
// (protocol/metrics/prometheus_text.h renders a snapshot).
//
// The bucket upper bounds are fixed at construction (seconds, strictly increasing); a value above
// the last bound counts only in the implicit +Inf bucket. Observe is wait-free (relaxed atomics),
// so a hot path may call it; Snapshot reads every bucket once and derives the count from them, so
// a snapshot's count always equals its +Inf bucket even while other threads observe.
//
// Thread-safety: Observe and Snapshot from any thread. Neither copyable nor movable.
#ifndef RPLASMA_PROTOCOL_METRICS_LATENCY_HISTOGRAM_H_
#define RPLASMA_PROTOCOL_METRICS_LATENCY_HISTOGRAM_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/time/time.h"

namespace rplasma {

// A histogram's values at one moment. cumulative[i] counts the values <= bounds[i];
// count (the +Inf bucket) counts them all.
struct HistogramSnapshot {
  std::vector<double> bounds;        // seconds, increasing
  std::vector<uint64_t> cumulative;  // one per bound, non-decreasing
  uint64_t count = 0;
  double sum = 0;  // seconds
};

class LatencyHistogram {
 public:
  // 10 µs to 10 s, 1-2.5-5 steps: what a fetch over loopback, tcp or verbs takes.
  static std::vector<double> FetchBounds();

  // REQUIRES: `bounds` non-empty, finite, strictly increasing (CHECKed: a caller's bug).
  explicit LatencyHistogram(std::vector<double> bounds);
  LatencyHistogram(const LatencyHistogram&) = delete;
  LatencyHistogram& operator=(const LatencyHistogram&) = delete;

  // Counts `d` (a negative duration counts as 0).
  void Observe(absl::Duration d);
  HistogramSnapshot Snapshot() const;

 private:
  const std::vector<double> bounds_;
  // Per-bucket (not cumulative) counts; the last one is the overflow above bounds_.back().
  const std::unique_ptr<std::atomic<uint64_t>[]> buckets_;
  std::atomic<uint64_t> sum_nanos_{0};
};

}  // namespace rplasma

#endif  // RPLASMA_PROTOCOL_METRICS_LATENCY_HISTOGRAM_H_
