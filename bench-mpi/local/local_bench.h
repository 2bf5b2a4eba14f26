// RunLocalBench: the whole local-mode run of rplasma-bench. Starts (or attaches to) a store,
// starts a private redis-server if asked, measures the peers and then rplasma's operations by
// size, the store's memory per object, prints a table as results arrive and writes the CSV (which
// scripts/bench-targets.py judges against the targets). Everything it started is stopped before it
// returns.
#ifndef RPLASMA_BENCH_MPI_LOCAL_LOCAL_BENCH_H_
#define RPLASMA_BENCH_MPI_LOCAL_LOCAL_BENCH_H_

#include <ostream>

#include "absl/status/status.h"

#include "bench-mpi/local/local_bench_options.h"

namespace rplasma::bench {

// Errors of a single (benchmark, size) are printed and the run goes on; the returned status is
// the first such error (so a run with any failure exits non-zero) or a set-up failure.
absl::Status RunLocalBench(const LocalBenchOptions& options, std::ostream& out);

}  // namespace rplasma::bench

#endif  // RPLASMA_BENCH_MPI_LOCAL_LOCAL_BENCH_H_
