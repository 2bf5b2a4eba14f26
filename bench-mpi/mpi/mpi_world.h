// MpiWorld: the one MPI_COMM_WORLD of an rplasma-bench-mpi run, and the few collectives the
// benchmark needs (strings, 64-bit samples, reductions). The only file besides its .cc that
// includes mpi.h, so the rest of the benchmark reads as plain C++.
//
// Init() calls MPI_Init; destruction calls MPI_Finalize. Collectives must be called by every rank
// in the same order (MPI's rule). Not thread-safe: call from the main thread only (MPI is
// initialised without thread support; fetch threads never touch MPI).
#ifndef RPLASMA_BENCH_MPI_MPI_MPI_WORLD_H_
#define RPLASMA_BENCH_MPI_MPI_MPI_WORLD_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace rplasma::bench {

class MpiWorld {
 public:
  // MPI_Init(argc, argv). Exits through MPI if MPI itself cannot start.
  static std::unique_ptr<MpiWorld> Init(int* argc, char*** argv);
  ~MpiWorld();  // MPI_Finalize
  MpiWorld(const MpiWorld&) = delete;
  MpiWorld& operator=(const MpiWorld&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  bool root() const { return rank_ == 0; }

  void Barrier() const;
  // Rank `from`'s `value` on every rank.
  std::string Broadcast(const std::string& value, int from = 0) const;
  // Every rank's `value`, indexed by rank, on every rank.
  std::vector<std::string> AllGather(const std::string& value) const;
  // Every rank's `values` concatenated in rank order, on rank 0 only (other ranks get {}).
  std::vector<int64_t> GatherToRoot(const std::vector<int64_t>& values) const;
  double MaxAll(double value) const;
  double SumAll(double value) const;
  // True on every rank iff `value` is true on every rank.
  bool AllTrue(bool value) const;
  // Ends every rank of the job (after a fatal error on one rank).
  [[noreturn]] void Abort(int code) const;

 private:
  MpiWorld(int rank, int size) : rank_(rank), size_(size) {}
  const int rank_;
  const int size_;
};

}  // namespace rplasma::bench

#endif  // RPLASMA_BENCH_MPI_MPI_MPI_WORLD_H_
