// bench-mpi/common's ChildProcess, with real processes: a child's output goes to its log, an exec
// failure is Spawn's error, and a child dies with its parent even when the parent is SIGKILLed
// (PR_SET_PDEATHSIG: an MPI rank killed by mpirun must not leave its store or manager behind).
#include "bench-mpi/common/child_process.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "tests/support/status_matchers.h"
#include "tests/support/temp_dir.h"

namespace rplasma::bench {
namespace {

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// True while `pid` exists and is not a zombie.
bool Alive(pid_t pid) {
  const std::string stat = Slurp(absl::StrCat("/proc/", pid, "/stat"));
  if (stat.empty()) return false;
  const size_t paren = stat.rfind(')');
  return paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] != 'Z';
}

TEST(ChildProcessTest, OutputGoesToTheLogAndTheChildIsReaped) {
  rplasma::testing::TempDir dir;
  const std::string log = dir.Join("echo.log");
  ASSERT_OK_AND_ASSIGN(ChildProcess child, ChildProcess::Spawn({"/bin/sh", "-c", "echo out; echo err >&2"}, log));
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (child.Running() && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(5));
  EXPECT_FALSE(child.Running());
  EXPECT_EQ(Slurp(log), "out\nerr\n");
}

TEST(ChildProcessTest, SpawnReportsAMissingBinary) {
  rplasma::testing::TempDir dir;
  absl::StatusOr<ChildProcess> child = ChildProcess::Spawn({dir.Join("no-such-binary")}, dir.Join("log"));
  ASSERT_FALSE(child.ok());
  EXPECT_NE(child.status().message().find("no-such-binary"), absl::string_view::npos) << child.status();
}

TEST(ChildProcessTest, StopEndsALongRunningChild) {
  rplasma::testing::TempDir dir;
  ASSERT_OK_AND_ASSIGN(ChildProcess child, ChildProcess::Spawn({"/bin/sleep", "60"}, dir.Join("log")));
  const pid_t pid = child.pid();
  EXPECT_TRUE(Alive(pid));
  child.Stop();
  EXPECT_FALSE(child.Running());
  EXPECT_FALSE(Alive(pid));
}

TEST(ChildProcessTest, ChildDiesWhenItsParentIsKilled) {
  rplasma::testing::TempDir dir;
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  // The "rank": spawns a long sleeper, reports its pid, then waits to be SIGKILLed.
  const pid_t rank = ::fork();
  ASSERT_GE(rank, 0);
  if (rank == 0) {
    ::close(pipe_fds[0]);
    absl::StatusOr<ChildProcess> child = ChildProcess::Spawn({"/bin/sleep", "60"}, dir.Join("sleep.log"));
    const std::string pid = child.ok() ? absl::StrCat(child->pid(), "\n") : "-1\n";
    (void)!::write(pipe_fds[1], pid.data(), pid.size());
    for (;;) ::pause();
  }
  ::close(pipe_fds[1]);
  char buffer[32] = {};
  const ssize_t n = ::read(pipe_fds[0], buffer, sizeof(buffer) - 1);
  ::close(pipe_fds[0]);
  int sleeper = -1;
  ASSERT_GT(n, 0);
  ASSERT_TRUE(absl::SimpleAtoi(absl::StripAsciiWhitespace(absl::string_view(buffer, n)), &sleeper));
  ASSERT_GT(sleeper, 0) << "the rank could not spawn";
  EXPECT_TRUE(Alive(sleeper));

  ::kill(rank, SIGKILL);
  int status = 0;
  ASSERT_EQ(::waitpid(rank, &status, 0), rank);
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (Alive(sleeper) && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(10));
  EXPECT_FALSE(Alive(sleeper)) << "the child outlived its SIGKILLed parent";
  if (Alive(sleeper)) ::kill(sleeper, SIGKILL);
}

}  // namespace
}  // namespace rplasma::bench
