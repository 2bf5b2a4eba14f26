// The benchmarks' command lines behave like the daemons' (issue 12; daemon_cli_test has the
// daemons and the CLI): rplasma-bench and rplasma-bench-mpi print their version and revision, list
// their flags in --help, take dashed and underscored flags and name a bad one as typed, without
// mpirun. Label bench: the sanitizer stages, which build no benchmark, leave it out.
#include <string>

#include "absl/strings/str_cat.h"
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/support/run_binary.h"

namespace rplasma::testing {
namespace {

using ::testing::HasSubstr;

TEST(BenchCliTest, BenchPrintsItsVersionAndListsItsFlags) {
  ExpectVersionLine("rplasma-bench", RPLASMA_TEST_PROJECT_VERSION);
  const Ran help = RunBinary("rplasma-bench", "--help");
  EXPECT_EQ(help.exit_code, 0) << help.output;
  for (const char* flag : {"--mode", "--sizes", "--duration", "--store-socket", "--memory", "--flagfile"}) {
    EXPECT_THAT(help.output, HasSubstr(flag)) << flag;
  }
}

TEST(BenchCliTest, BenchNamesABadFlagAsTyped) {
  ExpectRefused("rplasma-bench", "--memory_size_typo=1 ", "--memory_size_typo: unknown flag");
  ExpectRefused("rplasma-bench", "--batch_bytes 1.5Q", "--batch_bytes: size '1.5Q'");
}

#ifdef RPLASMA_TEST_WITH_MPI
TEST(BenchCliTest, BenchMpiHelpVersionAndSpellingsNeedNoMpirun) {
  const Ran help = RunBinary("rplasma-bench-mpi", "--help");
  EXPECT_EQ(help.exit_code, 0) << help.output;
  for (const char* flag :
       {"--patterns", "--protocols", "--sizes", "--min-size", "--fetch-timeout", "--start-redis", "--tune-out"}) {
    EXPECT_THAT(help.output, HasSubstr(flag)) << flag;
  }
  const Ran version = RunBinary("rplasma-bench-mpi", "--version");
  EXPECT_EQ(version.exit_code, 0) << version.output;
  EXPECT_THAT(version.output, HasSubstr(absl::StrCat("rplasma-bench-mpi ", RPLASMA_TEST_PROJECT_VERSION, " (git ")));
  // Both spellings are the flag: each is rejected for its value, under the name typed.
  ExpectRefused("rplasma-bench-mpi", "--tcp-baseline=maybe", "--tcp-baseline: 'maybe'");
  ExpectRefused("rplasma-bench-mpi", "--tcp_baseline=maybe", "--tcp_baseline: 'maybe'");
  ExpectRefused("rplasma-bench-mpi", "--start-redis --min-size=0.3", "--min-size: size '0.3'");
}
#endif

}  // namespace
}  // namespace rplasma::testing
