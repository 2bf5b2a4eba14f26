// rplasma-bench: benchmarks of one rplasma node against its peers (see local_bench.h).
#include <iostream>
#include <optional>
#include <string>

#include "bench-mpi/local/directory_bench.h"
#include "bench-mpi/local/fetch_bench.h"
#include "bench-mpi/local/local_bench.h"
#include "bench-mpi/local/local_bench_options.h"
#include "bench-mpi/local/scrape_bench.h"
#include "protocol/base/status.h"
#include "protocol/command_line/flag_spelling.h"

int main(int argc, char** argv) {
  for (int i = 1; i < argc && std::string(argv[i]) != "--"; ++i) {
    if (std::optional<rplasma::FlagArg> flag = rplasma::SplitFlagArg(argv[i]); flag && flag->name == "version") {
      std::cout << rplasma::VersionLine("rplasma-bench") << "\n";
      return 0;
    }
  }
  bool help = false;
  absl::StatusOr<rplasma::bench::LocalBenchOptions> options = rplasma::bench::ParseLocalBenchOptions(argc, argv, &help);
  if (help) {
    std::cout << rplasma::bench::LocalBenchUsage();
    return 0;
  }
  if (!options.ok()) {
    std::cerr << "rplasma-bench: " << options.status().message() << "\n" << rplasma::bench::LocalBenchUsage();
    return 2;
  }
  absl::Status status = options->mode == "fetch"       ? rplasma::bench::RunFetchBench(*options, std::cout)
                        : options->mode == "scrape"    ? rplasma::bench::RunScrapeBench(*options, std::cout)
                        : options->mode == "directory" ? rplasma::bench::RunDirectoryBench(*options, std::cout)
                                                       : rplasma::bench::RunLocalBench(*options, std::cout);
  if (!status.ok()) {
    std::cerr << "rplasma-bench: " << rplasma::ErrorCodeName(rplasma::ErrorCodeOf(status)) << ": " << status.message()
              << "\n";
    return 1;
  }
  return 0;
}
