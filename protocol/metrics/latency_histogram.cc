#include "protocol/metrics/latency_histogram.h"

#include <algorithm>
#include <cmath>

#include "protocol/base/logging.h"

namespace rplasma {

std::vector<double> LatencyHistogram::FetchBounds() {
  std::vector<double> bounds;
  for (double decade = 1e-5; decade < 10; decade *= 10) {
    for (double step : {1.0, 2.5, 5.0}) bounds.push_back(decade * step);
  }
  bounds.push_back(10);
  return bounds;
}

LatencyHistogram::LatencyHistogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)), buckets_(new std::atomic<uint64_t>[bounds_.size() + 1]) {
  CHECK(!bounds_.empty());
  for (size_t i = 0; i < bounds_.size(); ++i) {
    CHECK(std::isfinite(bounds_[i]));
    if (i > 0) CHECK(bounds_[i] > bounds_[i - 1]);
  }
  for (size_t i = 0; i <= bounds_.size(); ++i) buckets_[i].store(0, std::memory_order_relaxed);
}

void LatencyHistogram::Observe(absl::Duration d) {
  const double seconds = std::max(0.0, absl::ToDoubleSeconds(d));
  // The first bound >= seconds: Prometheus buckets are "less than or equal".
  const size_t bucket =
      static_cast<size_t>(std::lower_bound(bounds_.begin(), bounds_.end(), seconds) - bounds_.begin());
  buckets_[bucket].fetch_add(1, std::memory_order_relaxed);
  sum_nanos_.fetch_add(static_cast<uint64_t>(std::max<int64_t>(0, absl::ToInt64Nanoseconds(d))),
                       std::memory_order_relaxed);
}

HistogramSnapshot LatencyHistogram::Snapshot() const {
  HistogramSnapshot s;
  s.bounds = bounds_;
  s.cumulative.reserve(bounds_.size());
  uint64_t running = 0;
  for (size_t i = 0; i < bounds_.size(); ++i) {
    running += buckets_[i].load(std::memory_order_relaxed);
    s.cumulative.push_back(running);
  }
  s.count = running + buckets_[bounds_.size()].load(std::memory_order_relaxed);
  s.sum = static_cast<double>(sum_nanos_.load(std::memory_order_relaxed)) / 1e9;
  return s;
}

}  // namespace rplasma
