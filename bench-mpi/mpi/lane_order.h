// The order the lanes of an interleaved fetch phase (fetch_phase.h) run in, round after round.
#ifndef RPLASMA_BENCH_MPI_MPI_LANE_ORDER_H_
#define RPLASMA_BENCH_MPI_MPI_LANE_ORDER_H_

#include <cstddef>
#include <vector>

namespace rplasma::bench {

// The order the lanes run in, round after round (round r: entry r mod size): every lane as often
// in each place, and, for up to 3 lanes, right after each other lane equally often, the
// sequence's wrap-around included, and never right after itself (2 lanes: once each per cycle).
// A batch leaves the machine slower or faster for the next one: at 16 MiB a Get's 66-98 ms of
// copying slows the next batch. With the old order (round r starting with lane r mod n, every
// other block reversed) lane 2 came right after lane 0 three times in six and after lane 1
// twice, and a fixed threshold of 0 in the auto lane (every transfer by Pin, as the pin lane)
// reached 0.955-0.985 of the pin lane paired by round with the lanes get, pin, auto, and
// 1.020-1.046 with them in the order auto, pin, get.
std::vector<std::vector<size_t>> InterleavedLaneOrders(size_t n);

}  // namespace rplasma::bench

#endif  // RPLASMA_BENCH_MPI_MPI_LANE_ORDER_H_
