#include "bench-mpi/common/latency_recorder.h"

#include <algorithm>
#include <cmath>

namespace rplasma::bench {
namespace {

// Nearest rank: the smallest sample with at least `q` of all samples at or below it.
double Percentile(const std::vector<int64_t>& sorted, double q) {
  size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  if (rank == 0) rank = 1;
  return static_cast<double>(sorted[std::min(rank, sorted.size()) - 1]) / 1e3;
}

}  // namespace

LatencySummary LatencySummary::PerItem(int64_t n) const {
  LatencySummary s = *this;
  const double d = static_cast<double>(n);
  s.count = count * n;
  s.mean_us /= d;
  s.min_us /= d;
  s.p50_us /= d;
  s.p95_us /= d;
  s.p99_us /= d;
  s.max_us /= d;
  return s;
}

LatencySummary LatencyRecorder::Summarize() const {
  LatencySummary s;
  if (samples_ns_.empty()) return s;
  std::vector<int64_t> sorted = samples_ns_;
  std::sort(sorted.begin(), sorted.end());
  double total_ns = 0;
  for (int64_t v : sorted) total_ns += static_cast<double>(v);
  s.count = static_cast<int64_t>(sorted.size());
  s.total_us = total_ns / 1e3;
  s.mean_us = s.total_us / static_cast<double>(s.count);
  s.min_us = static_cast<double>(sorted.front()) / 1e3;
  s.max_us = static_cast<double>(sorted.back()) / 1e3;
  s.p50_us = Percentile(sorted, 0.50);
  s.p95_us = Percentile(sorted, 0.95);
  s.p99_us = Percentile(sorted, 0.99);
  return s;
}

}  // namespace rplasma::bench
