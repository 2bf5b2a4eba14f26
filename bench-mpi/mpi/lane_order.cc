#include "bench-mpi/mpi/lane_order.h"

#include <utility>

namespace rplasma::bench {

std::vector<std::vector<size_t>> InterleavedLaneOrders(size_t n) {
  switch (n) {
    case 0: return {{}};
    case 1: return {{0}};
    case 2: return {{0, 1}, {1, 0}};
    case 3: return {{0, 1, 2}, {0, 2, 1}, {2, 1, 0}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}};
    default: break;
  }
  // More lanes than the bench has protocols: rotations, every other block of n reversed.
  std::vector<std::vector<size_t>> orders;
  for (size_t r = 0; r < 2 * n; ++r) {
    std::vector<size_t> order;
    for (size_t k = 0; k < n; ++k) order.push_back(r < n ? (r + k) % n : (r + n - k) % n);
    orders.push_back(std::move(order));
  }
  return orders;
}

}  // namespace rplasma::bench
