// bench-mpi/launch's ChildProcess (the launcher of benchmarks and tests), with real processes: a
// child's output goes to its log, its environment gets the extra entries, Wait returns its exit
// status, an exec failure is Start's error, Stop ends it gracefully or by force, and a child dies with its parent even
// when the parent is SIGKILLed (PR_SET_PDEATHSIG: an MPI rank killed by mpirun must not leave its store or manager
// behind).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include <gtest/gtest.h>

#include "bench-mpi/launch/child_process.h"
#include "tests/support/status_matchers.h"
#include "tests/support/wait_for.h"

namespace rplasma::bench {
namespace {

using ::rplasma::testing::WaitFor;

// True while `pid` exists and is not a zombie.
bool Alive(pid_t pid) {
  const std::string stat = ReadWholeFile(absl::StrCat("/proc/", pid, "/stat"));
  if (stat.empty()) return false;
  const size_t paren = stat.rfind(')');
  return paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] != 'Z';
}

TEST(ChildProcessTest, OutputGoesToTheLogAndTheChildIsReaped) {
  ScratchDir dir = ScratchDir::CreateOrDie();
  const std::string log = dir.Join("echo.log");
  ASSERT_OK_AND_ASSIGN(ChildProcess child, ChildProcess::Start({"/bin/sh", "-c", "echo out; echo err >&2"}, log));
  EXPECT_TRUE(WaitFor([&] { return !child.running(); }, absl::Seconds(10)));
  EXPECT_EQ(ReadWholeFile(log), "out\nerr\n");
}

TEST(ChildProcessTest, StartReportsAMissingBinary) {
  ScratchDir dir = ScratchDir::CreateOrDie();
  absl::StatusOr<ChildProcess> child = ChildProcess::Start({dir.Join("no-such-binary")}, dir.Join("log"));
  ASSERT_FALSE(child.ok());
  EXPECT_NE(child.status().message().find("no-such-binary"), absl::string_view::npos) << child.status();
}

TEST(ChildProcessTest, StopEndsALongRunningChild) {
  ScratchDir dir = ScratchDir::CreateOrDie();
  ASSERT_OK_AND_ASSIGN(ChildProcess child, ChildProcess::Start({"/bin/sleep", "60"}, dir.Join("log")));
  const pid_t pid = child.pid();
  EXPECT_TRUE(Alive(pid));
  child.Stop();
  EXPECT_FALSE(child.running());
  EXPECT_FALSE(Alive(pid));
}

TEST(ChildProcessTest, ExtraEnvironmentReachesTheChildAndWaitReturnsItsExitStatus) {
  ScratchDir dir = ScratchDir::CreateOrDie();
  const std::string log = dir.Join("env.log");
  ASSERT_OK_AND_ASSIGN(ChildProcess child,
                       ChildProcess::Start({"/bin/sh", "-c", "echo \"$RPLASMA_CHILD_TEST\"; exit 7"},
                                           SpawnOptions{.log_path = log, .env = {"RPLASMA_CHILD_TEST=hello"}}));
  std::optional<int> status = child.Wait(absl::Seconds(10));
  ASSERT_TRUE(status.has_value());
  EXPECT_TRUE(WIFEXITED(*status));
  EXPECT_EQ(WEXITSTATUS(*status), 7);
  EXPECT_EQ(child.pid(), -1);
  EXPECT_EQ(child.Wait(absl::ZeroDuration()), status) << "the status is kept once reaped";
  EXPECT_EQ(ReadWholeFile(log), "hello\n");
}

TEST(ChildProcessTest, WaitTimesOutWhileTheChildRuns) {
  ScratchDir dir = ScratchDir::CreateOrDie();
  ASSERT_OK_AND_ASSIGN(ChildProcess child, ChildProcess::Start({"/bin/sleep", "60"}, dir.Join("log")));
  EXPECT_EQ(child.Wait(absl::Milliseconds(50)), std::nullopt);
  EXPECT_TRUE(child.running());
  child.Kill();
  EXPECT_FALSE(child.running());
  std::optional<int> status = child.Wait(absl::ZeroDuration());
  ASSERT_TRUE(status.has_value());
  EXPECT_TRUE(WIFSIGNALED(*status));
  EXPECT_EQ(WTERMSIG(*status), SIGKILL);
}

TEST(ChildProcessTest, StopReturnsTheStatusOfAChildThatExitsOnSigterm) {
  ScratchDir dir = ScratchDir::CreateOrDie();
  ASSERT_OK_AND_ASSIGN(ChildProcess child, ChildProcess::Start({"/bin/sleep", "60"}, dir.Join("log")));
  std::optional<int> status = child.Stop(absl::Seconds(10));
  ASSERT_TRUE(status.has_value()) << "sleep exits on SIGTERM; it should not have needed SIGKILL";
  EXPECT_TRUE(WIFSIGNALED(*status));
  EXPECT_EQ(WTERMSIG(*status), SIGTERM);
}

TEST(ChildProcessTest, StopKillsAChildThatIgnoresSigterm) {
  ScratchDir dir = ScratchDir::CreateOrDie();
  const std::string ready = dir.Join("ready");
  ASSERT_OK_AND_ASSIGN(
      ChildProcess child,
      ChildProcess::Start({"/bin/sh", "-c", "trap '' TERM; touch \"$0\"; while :; do sleep 1; done", ready},
                          dir.Join("log")));
  ASSERT_TRUE(WaitFor([&] { return ::access(ready.c_str(), F_OK) == 0; }, absl::Seconds(10)))
      << "the shell never set its trap";
  const pid_t pid = child.pid();
  EXPECT_EQ(child.Stop(absl::Milliseconds(100)), std::nullopt);
  EXPECT_FALSE(Alive(pid));
}

TEST(ChildProcessTest, ChildDiesWhenItsParentIsKilled) {
  ScratchDir dir = ScratchDir::CreateOrDie();
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  // The "rank": spawns a long sleeper, reports its pid, then waits to be SIGKILLed.
  const pid_t rank = ::fork();
  ASSERT_GE(rank, 0);
  if (rank == 0) {
    ::close(pipe_fds[0]);
    absl::StatusOr<ChildProcess> child = ChildProcess::Start({"/bin/sleep", "60"}, dir.Join("sleep.log"));
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
