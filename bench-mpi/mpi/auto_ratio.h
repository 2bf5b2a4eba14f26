// auto / best fixed: how close the `auto` protocol (the manager's threshold, e.g. a tuned file)
// comes to the better of the two forced protocols, `get` and `pin`, at one point. It is the
// ratio of throughputs at the medians, size / p50(auto) over size / min(p50(get), p50(pin)),
// i.e. min(p50 get, p50 pin) / p50 auto: 1.0 = as fast as the better one, above 1 = faster
// (noise, or a threshold that beats both), below 0.95 = short of issue #5's target.
//
// PairedAutoVsBest is the sturdier form the sweep reports: the lanes of a point run round by
// round, one batch each within a few milliseconds, so each round's fixed-protocol time over the
// same round's auto time compares the two under the same machine conditions. Its median over
// rounds (and ranks) does not move when the machine's speed flips between regimes mid-point,
// which moves the medians of the separate lanes apart: with two identical lanes (auto forced to
// get), their ratio of medians ranged 0.80-1.24 over one run in a slow regime.
//
// Pure functions; no MPI. Thread-safe.
#ifndef RPLASMA_BENCH_MPI_MPI_AUTO_RATIO_H_
#define RPLASMA_BENCH_MPI_MPI_AUTO_RATIO_H_

#include <cstdint>
#include <string>
#include <vector>

namespace rplasma::bench {

inline constexpr double kAutoVsBestTarget = 0.95;

// One point's medians in microseconds; 0 = not measured (e.g. `get` above 64 MiB).
struct AutoRatioPoint {
  std::string label;  // what the point is, e.g. "pairs c=1"
  uint64_t size = 0;
  double get_p50_us = 0;
  double pin_p50_us = 0;
  double auto_p50_us = 0;
  double paired = -1;  // PairedAutoVsBest when the point has per-round times, else -1
};

// min(get, pin) / auto over the measured ones; -1 if auto or both fixed ones are missing.
double AutoVsBest(double get_p50_us, double pin_p50_us, double auto_p50_us);

// One time per (rank, round) in each vector, aligned: entry i of each is the same rank's same
// round; 0 = that rank fetched nothing in that round (skipped); an empty vector = the protocol
// did not run. The smaller over get and pin of the median of fixed[i] / auto[i]: auto against
// the fixed protocol it compares worst with, round by round. -1 if auto or both fixed ones are
// missing, or no entry is measured in both.
double PairedAutoVsBest(const std::vector<int64_t>& get_ns, const std::vector<int64_t>& pin_ns,
                        const std::vector<int64_t>& auto_ns);

// A table, one line per point with a ratio ("<label> <size>: get .. pin .. auto .. auto/best
// 0.973", the paired ratio where the point has one, then "medians 0.951"), then "auto/best worst case 0.912 (<label>
// <size>), 11 of 13 points >= 0.95: SHORT" (or PASS when every point reaches `target`). "" when no point has a ratio.
std::string AutoRatioSummary(const std::vector<AutoRatioPoint>& points, double target = kAutoVsBestTarget);

}  // namespace rplasma::bench

#endif  // RPLASMA_BENCH_MPI_MPI_AUTO_RATIO_H_
