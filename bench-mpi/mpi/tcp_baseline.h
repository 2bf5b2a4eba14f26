// The raw-transport peer of the fetch benchmark: an iperf-style TCP stream between the same rank
// pairs as the `pairs` pattern (rank 2k serves, rank 2k+1 asks), object-sized transfers with no
// store, no manager and no protocol: the fetcher sends the size (8 bytes), the server streams that
// many bytes from a reused buffer, the fetcher receives them into a reused buffer. One transfer
// per round, timed from request to last byte, so its numbers read like a fetch's.
//
// Collective (every rank calls it with the same sizes). Main thread only.
#ifndef RPLASMA_BENCH_MPI_MPI_TCP_BASELINE_H_
#define RPLASMA_BENCH_MPI_MPI_TCP_BASELINE_H_

#include <string>
#include <vector>

#include "absl/status/status.h"

#include "bench-mpi/mpi/fetch_phase.h"
#include "bench-mpi/mpi/mpi_world.h"
#include "bench-mpi/mpi/result_table.h"

namespace rplasma::bench {

// Appends one row set per size (aggregate and, with per_rank_rows, per rank) to `rows` on rank 0.
absl::Status RunTcpBaseline(const MpiWorld& world, const std::string& listen_host, const std::vector<uint64_t>& sizes,
                            int warmup, int repeat, bool per_rank_rows, std::vector<ResultRow>* rows);

}  // namespace rplasma::bench

#endif  // RPLASMA_BENCH_MPI_MPI_TCP_BASELINE_H_
