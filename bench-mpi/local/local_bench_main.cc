// rplasma-bench: benchmarks of one rplasma node against its peers (see local_bench.h).
#include <iostream>

#if RPLASMA_BENCH_HAS_FETCH
#include "bench-mpi/local/fetch_bench.h"
#endif
#include "bench-mpi/local/local_bench.h"
#include "bench-mpi/local/local_bench_options.h"
#include "protocol/status.h"

int main(int argc, char** argv) {
  bool help = false;
  absl::StatusOr<rplasma::bench::LocalBenchOptions> options =
      rplasma::bench::ParseLocalBenchOptions(argc, argv, &help);
  if (help) {
    std::cout << rplasma::bench::LocalBenchUsage();
    return 0;
  }
  if (!options.ok()) {
    std::cerr << "rplasma-bench: " << options.status().message() << "\n" << rplasma::bench::LocalBenchUsage();
    return 2;
  }
#if RPLASMA_BENCH_HAS_FETCH
  absl::Status status = options->mode == "fetch" ? rplasma::bench::RunFetchBench(*options, std::cout)
                                                 : rplasma::bench::RunLocalBench(*options, std::cout);
#else
  if (options->mode == "fetch") {
    std::cerr << "rplasma-bench: --mode fetch needs Client::Fetch, which this build's client lacks\n";
    return 2;
  }
  absl::Status status = rplasma::bench::RunLocalBench(*options, std::cout);
#endif
  if (!status.ok()) {
    std::cerr << "rplasma-bench: " << rplasma::ErrorCodeName(rplasma::ErrorCodeOf(status)) << ": "
              << status.message() << "\n";
    return 1;
  }
  return 0;
}
