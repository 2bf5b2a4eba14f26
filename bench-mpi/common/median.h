// Median: the middle of a set of measurements, the statistic the benchmarks report when a few
// rounds swing with the machine (the mean of the two middle values for an even count).
#ifndef RPLASMA_BENCH_MPI_COMMON_MEDIAN_H_
#define RPLASMA_BENCH_MPI_COMMON_MEDIAN_H_

#include <algorithm>
#include <vector>

namespace rplasma::bench {

// 0 for no values.
inline double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

}  // namespace rplasma::bench

#endif  // RPLASMA_BENCH_MPI_COMMON_MEDIAN_H_
