// RunTuner: `rplasma-bench-mpi --tune`. Measures every ordered rank pair (rounds of the shift
// plan: rank r fetches from r+k) at power-of-two sizes from --tune-min-size to --tune-max-size with
// the managers forced to `get` and then to `pin`, fits each protocol's cost per pair and for the
// cluster (cost_fit.h), writes the threshold file (--tune-out) and prints what it chose and why.
// Then it restarts the managers with that file, measures `auto` at the same sizes, checks that each
// manager's stats report the file's thresholds, and prints auto / best-fixed per size.
//
// Collective. Rows (benchmark "tune") go to `rows` on rank 0.
#ifndef RPLASMA_BENCH_MPI_MPI_TUNER_H_
#define RPLASMA_BENCH_MPI_MPI_TUNER_H_

#include <vector>

#include "absl/status/status.h"

#include "bench-mpi/mpi/result_table.h"

namespace rplasma::bench {

class BenchMpi;

absl::Status RunTuner(BenchMpi& bench, std::vector<ResultRow>* rows);

}  // namespace rplasma::bench

#endif  // RPLASMA_BENCH_MPI_MPI_TUNER_H_
