// Runs a built binary of this tree through the shell and keeps what it printed: the command-line
// tests (daemon_cli_test, bench_cli_test) check exit codes and messages of real processes.
#ifndef RPLASMA_TESTS_SUPPORT_RUN_BINARY_H_
#define RPLASMA_TESTS_SUPPORT_RUN_BINARY_H_

#include <string>

namespace rplasma::testing {

struct Ran {
  int exit_code = -1;  // -1 when the shell could not start or the process did not exit
  std::string output;  // stdout and stderr together
};

// Runs `command` through the shell, stdin from /dev/null.
Ran RunShell(const std::string& command);

// Runs the binary `name` from the build tree's bin/ with `args`. Open MPI may run as root (for
// rplasma-bench-mpi's singleton start; the CI runs as root).
Ran RunBinary(const std::string& name, const std::string& args);

// Runs `name --version` and checks that it printed exactly "<name> <version> (git <revision>)", the
// revision 7-40 hex digits or "unknown".
void ExpectVersionLine(const std::string& name, const std::string& version);

// Runs `name` with `args` and checks that it refused its command line: exit code 2 and `message`
// in what it printed (a gtest failure naming the command otherwise).
void ExpectRefused(const std::string& name, const std::string& args, const std::string& message);

}  // namespace rplasma::testing

#endif  // RPLASMA_TESTS_SUPPORT_RUN_BINARY_H_
