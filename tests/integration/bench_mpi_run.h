// Runs `mpirun -np N rplasma-bench-mpi ...` for the bench_mpi_* tests: root-safe environment,
// --oversubscribe, output to a log; and small helpers to read what it wrote.
#ifndef RPLASMA_TESTS_INTEGRATION_BENCH_MPI_RUN_H_
#define RPLASMA_TESTS_INTEGRATION_BENCH_MPI_RUN_H_

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include <gtest/gtest.h>

#include "bench-mpi/launch/child_process.h"
#include "tests/support/skip.h"
#include "tests/support/status_matchers.h"

namespace rplasma::testing {

inline std::string FindMpirun() {
  for (const char* p : {"/usr/bin/mpirun", "/usr/local/bin/mpirun"}) {
    if (access(p, X_OK) == 0) return p;
  }
  return "";
}

// The plot needs gnuplot (Debian gnuplot-nox); without it the run still measures and says so.
inline bool HaveGnuplot() {
  return access("/usr/bin/gnuplot", X_OK) == 0 || access("/usr/local/bin/gnuplot", X_OK) == 0;
}

#define RPLASMA_SKIP_IF_NO_MPI()                                                                    \
  do {                                                                                              \
    if (FindMpirun().empty()) RPLASMA_SKIP_TEST("mpirun", "mpirun is not installed (openmpi-bin)"); \
    RPLASMA_SKIP_IF_NO_REDIS_SERVER();                                                              \
  } while (0)

struct MpiRun {
  int exit_code = -1;
  std::string output;
};

// mpirun -np `ranks` --oversubscribe rplasma-bench-mpi --start-redis `args`, output in dir/mpirun.log;
// killed after `timeout`.
inline MpiRun RunBenchMpi(const bench::ScratchDir& dir, int ranks, const std::vector<std::string>& args,
                          absl::Duration timeout = absl::Seconds(200)) {
  setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
  setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
  setenv("OMPI_MCA_rmaps_base_oversubscribe", "1", 1);
  // Under ASan, Open MPI's dlopened components leave allocations that LeakSanitizer cannot even
  // attribute (their modules are unloaded at MPI_Finalize). Leak checking stays off in the ranks
  // (and their store and manager, which have their own leak-checked tests); every other ASan check
  // stays on.
  // Appended, so it wins over an inherited ASAN_OPTIONS (scripts/test.sh sets detect_leaks=1).
  const char* inherited = std::getenv("ASAN_OPTIONS");
  std::string asan_options = inherited != nullptr && *inherited != '\0' ? std::string(inherited) + ":" : "";
  asan_options += "detect_leaks=0";
  setenv("ASAN_OPTIONS", asan_options.c_str(), 1);
  std::vector<std::string> argv = {FindMpirun(),
                                   "-np",
                                   std::to_string(ranks),
                                   "--oversubscribe",
                                   absl::StrCat(RPLASMA_BIN_DIR, "/rplasma-bench-mpi"),
                                   "--start_redis"};
  argv.insert(argv.end(), args.begin(), args.end());
  MpiRun run;
  const std::string log = dir.Join("mpirun.log");
  auto process = bench::ChildProcess::Start(argv, log);
  EXPECT_OK(process.status());
  if (!process.ok()) return run;
  std::optional<int> status = process->Wait(timeout);
  if (!status.has_value()) process->Kill();
  EXPECT_TRUE(status.has_value()) << "mpirun did not finish:\n" << bench::ReadWholeFile(log);
  if (status.has_value() && WIFEXITED(*status)) run.exit_code = WEXITSTATUS(*status);
  run.output = bench::ReadWholeFile(log);
  return run;
}

}  // namespace rplasma::testing

#endif  // RPLASMA_TESTS_INTEGRATION_BENCH_MPI_RUN_H_
