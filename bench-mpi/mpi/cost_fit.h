// The tuner's arithmetic, pure: fit each protocol's cost t(s) = latency + s / bandwidth by
// relative-error least squares (weights 1/t², so 1 KiB points count as much as 32 MiB ones), find
// the measured crossover of the two curves, pick the threshold, and render the threshold file in
// the manager's format (manager/fetch/threshold_file.h).
//
// Threshold choice: the measured crossover T_m is the swept size that minimises the summed
// relative excess cost (each point's capped at 100%) of "get up to T, pin above" over the
// swept sizes. The fitted crossover
// (where the two lines meet) is rounded to the nearest swept size and then clamped to within one
// step of T_m, so the file never strays from what was measured in the same run.
#ifndef RPLASMA_BENCH_MPI_MPI_COST_FIT_H_
#define RPLASMA_BENCH_MPI_MPI_COST_FIT_H_

#include <cstdint>
#include <string>
#include <vector>

namespace rplasma::bench {

struct LinearCost {
  double latency_us = 0;     // intercept
  double us_per_byte = 0;    // slope (1 / bandwidth)
  double rms_rel_error = 0;  // spread: RMS of (fit - measured) / measured
  double At(double bytes) const { return latency_us + us_per_byte * bytes; }
};

// REQUIRES: sizes.size() == times_us.size() >= 2, times positive.
LinearCost FitCost(const std::vector<uint64_t>& sizes, const std::vector<double>& times_us);

struct ThresholdChoice {
  LinearCost get, pin;
  double fit_crossover = 0;         // bytes where the lines meet (0: pin always; huge: get always)
  uint64_t measured_crossover = 0;  // T_m (0 = pin at every swept size)
  uint64_t threshold = 0;           // what the file says
  int measured_index = -1;          // index of T_m in sizes (-1 = 0)
  int chosen_index = -1;            // index of threshold in sizes (-1 = 0)
  bool within_one_step = false;     // |chosen_index - measured_index| <= 1
};

// sizes ascending; get_us / pin_us: one p50 per size.
ThresholdChoice ChooseThreshold(const std::vector<uint64_t>& sizes, const std::vector<double>& get_us,
                                const std::vector<double>& pin_us);

// One measured pair (fetcher's view of a peer).
struct PeerChoice {
  std::string fetcher_node;  // node names (--node_name)
  std::string peer_node;
  ThresholdChoice choice;
};

// The threshold file: a header comment, `fit` lines per pair, `peer` lines keyed by the peer's node
// name (the manager matches it to any node id of that name; the smallest per-peer threshold when
// several fetchers measured one peer), and `default`.
std::string RenderThresholdFile(const ThresholdChoice& cluster, const std::vector<PeerChoice>& peers,
                                const std::string& header);

}  // namespace rplasma::bench

#endif  // RPLASMA_BENCH_MPI_MPI_COST_FIT_H_
