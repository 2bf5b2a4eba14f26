// The performance targets of the local benchmark, evaluated as ratios within one run:
//
//   get latency            get p50 (smallest size) <= 1.3 x unix-socket ping-pong p50
//   get size-independent   get p50 (largest size)  <= 1.2 x get p50 (smallest size)
//   write bandwidth        create_write_seal GB/s (64 MiB, else largest) >= 0.7 x memcpy GB/s
//   small round trip       create_seal_get ops/s (smallest) >= 5 x Redis SET+GET ops/s
//   (both throughputs from medians: size / p50 and 1 / p50)
//   batch get              batch_get p50 per id <= 2 us
//   memory per object      store anon bytes per object <= 200 B
//
// A target whose inputs were not measured in this run is reported as SKIPPED with the reason.
// With several rounds (--rounds), CombineRounds takes each target's median per-round ratio.
#ifndef RPLASMA_BENCH_MPI_LOCAL_TARGET_SUMMARY_H_
#define RPLASMA_BENCH_MPI_LOCAL_TARGET_SUMMARY_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "bench-mpi/common/result_reporter.h"

namespace rplasma::bench {

struct TargetCheck {
  enum class Outcome { kPass, kShort, kSkipped };

  std::string name;
  std::string goal;      // "get p50 <= 1.3x ping-pong p50"
  std::string measured;  // the numbers it is computed from
  double ratio = 0;      // measured / reference (or the value itself for absolute targets)
  double limit = 0;
  bool at_most = true;   // passes when ratio <= limit (else when ratio >= limit)
  Outcome outcome = Outcome::kSkipped;
};

// REQUIRES: sizes non-empty.
std::vector<TargetCheck> EvaluateLocalTargets(const ResultReporter& results,
                                              const std::vector<uint64_t>& sizes);
// Fetch mode (fetch_bench.h): fetch(64 MiB, else largest) >= 0.85x raw TCP stream and >= 4x Redis
// GET (medians); fetch(1 KiB, else smallest) p50 <= 2.5x the TCP round trip of the same bytes.
std::vector<TargetCheck> EvaluateFetchTargets(const ResultReporter& results);
// One check per name from several rounds' checks: the median of the ratios of the rounds that
// measured it, judged against the same limit; `measured` lists every round's ratio and the
// median round's numbers. A check no round measured stays SKIPPED (with the last round's reason).
std::vector<TargetCheck> CombineRounds(const std::vector<std::vector<TargetCheck>>& rounds);
void PrintTargets(const std::vector<TargetCheck>& checks, std::ostream& out);

}  // namespace rplasma::bench

#endif  // RPLASMA_BENCH_MPI_LOCAL_TARGET_SUMMARY_H_
