// FetchPlan: which objects one rank puts and which it fetches in one measured phase.
// C is the objects per (owner, fetcher): the concurrency times the batch (ids per Fetch call).
//
//   pairs      rank 2k puts C objects, rank 2k+1 fetches them (an odd last rank idles)
//   broadcast  rank 0 puts C objects, every other rank fetches all of them
//   gather     every rank but 0 puts C objects, rank 0 fetches all (N-1)*C
//   alltoall   every rank puts C objects for each other rank, and fetches the C each put for it
//   shift k    (tuner) every rank puts C objects for rank r-k, and fetches C from rank r+k (mod N)
//
// Ids are ObjectID::FromLabel of "<nonce>/<phase>/<owner>/<fetcher>/<slot>": every rank derives
// the same ids from the run's nonce (broadcast by rank 0), so no id has to cross MPI. Pure.
#ifndef RPLASMA_BENCH_MPI_MPI_FETCH_PLAN_H_
#define RPLASMA_BENCH_MPI_MPI_FETCH_PLAN_H_

#include <string>
#include <vector>

#include "bench-mpi/mpi/bench_mpi_options.h"
#include "protocol/base/object_id.h"

namespace rplasma::bench {

struct FetchPlan {
  std::vector<ObjectID> puts;
  std::vector<ObjectID> fetches;
  std::vector<int> fetch_owner;  // the rank that put fetches[i]
};

// REQUIRES: ranks >= 2, 0 <= rank < ranks, objects (C) >= 1.
FetchPlan MakeFetchPlan(FetchPattern pattern, int ranks, int rank, int objects, const std::string& phase);
// The tuner's plan: rank r fetches from (r + shift) mod ranks. REQUIRES: 0 < shift < ranks.
FetchPlan MakeShiftPlan(int shift, int ranks, int rank, int objects, const std::string& phase);

}  // namespace rplasma::bench

#endif  // RPLASMA_BENCH_MPI_MPI_FETCH_PLAN_H_
