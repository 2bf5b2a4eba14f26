// The daemons behave like daemons (issue 12): every daemon's and the CLI's --help lists its flags and
// --version its version and revision; dashed and underscored flags both work and errors name the
// flag as typed; a bad size names its flag; SIGHUP does not stop the store; the store tells
// systemd READY=1 only once its socket accepts; the systemd units pass `systemd-analyze verify`.
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "bench-mpi/launch/child_process.h"
#include "protocol/base/socket_io.h"
#include "protocol/base/unique_fd.h"
#include "tests/support/run_binary.h"
#include "tests/support/skip.h"
#include "tests/support/status_matchers.h"
#include "tests/support/store_process.h"
#include "tests/support/wait_for.h"

namespace rplasma::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(DaemonCliTest, EveryBinaryPrintsItsVersionAndGitRevision) {
  for (const char* name : {"rplasma-store", "rplasma-manager", "rplasma"}) {
    ExpectVersionLine(name, RPLASMA_TEST_PROJECT_VERSION);
  }
}

TEST(DaemonCliTest, StoreHelpListsEveryFlagWithItsDefault) {
  const Ran ran = RunBinary("rplasma-store", "--help");
  EXPECT_EQ(ran.exit_code, 0) << ran.output;
  EXPECT_THAT(ran.output, Not(HasSubstr("No flags matched")));
  for (const char* flag : {"--memory", "--socket", "--hugepages", "--name", "--partial-frame-timeout",
                           "--max-partial-frame-bytes", "--max-output-bytes", "--flagfile", "--version"}) {
    EXPECT_THAT(ran.output, HasSubstr(flag)) << flag;
  }
  EXPECT_THAT(ran.output, HasSubstr("(default 5s)"));
  EXPECT_THAT(ran.output, HasSubstr("(default \"64MiB\")"));
}

TEST(DaemonCliTest, ManagerHelpListsEveryFlag) {
  const Ran ran = RunBinary("rplasma-manager", "-h");
  EXPECT_EQ(ran.exit_code, 0) << ran.output;
  for (const char* flag : {"--store-socket", "--redis", "--listen", "--client-socket", "--transport", "--pin-threshold",
                           "--rdma-threshold", "--secret-file", "--node-name", "--lease-ttl", "--read-chunk-bytes",
                           "--cq-spin", "--reconcile-interval", "--copy-publish-delay", "--guess-owner"}) {
    EXPECT_THAT(ran.output, HasSubstr(flag)) << flag;
  }
}

TEST(DaemonCliTest, CliHelpListsItsFlags) {
  const Ran cli = RunBinary("rplasma", "--help");
  EXPECT_EQ(cli.exit_code, 0) << cli.output;
  EXPECT_THAT(cli.output, HasSubstr("--store-socket"));
  EXPECT_THAT(cli.output, HasSubstr("--manager-socket"));
  EXPECT_THAT(cli.output, HasSubstr("--version"));
}

TEST(DaemonCliTest, ABadSizeNamesTheFlagAsTyped) {
  ExpectRefused("rplasma-store", "--socket=/nonexistent/s.sock --memory=1.5X", "--memory: size '1.5X'");
  ExpectRefused("rplasma-store", "--memory=1G --max_output_bytes=lots", "--max_output_bytes: size 'lots'");
  ExpectRefused("rplasma-manager", "--read-chunk-bytes=4X", "--read-chunk-bytes: size '4X'");
}

TEST(DaemonCliTest, UnknownFlagsAndBadDurationsAreNamedAsTyped) {
  ExpectRefused("rplasma-manager", "--store-sockett=/x", "--store-sockett: unknown flag");
  ExpectRefused("rplasma-manager", "--lease_ttl=soon", "--lease_ttl: 'soon' is not a duration");
  ExpectRefused("rplasma", "--store_sockett=/x stats", "--store_sockett");
}

// Starts rplasma-store with `args` (its socket in `dir`) and returns once it accepts.
absl::StatusOr<bench::ChildProcess> StartStore(const bench::ScratchDir& dir, const std::vector<std::string>& args,
                                               const std::vector<std::string>& env = {}) {
  std::vector<std::string> argv = {absl::StrCat(RPLASMA_BIN_DIR, "/rplasma-store")};
  argv.insert(argv.end(), args.begin(), args.end());
  ASSIGN_OR_RETURN(bench::ChildProcess store,
                   bench::ChildProcess::Start(argv, {.log_path = dir.Join("store.log"), .env = env}));
  if (!WaitFor([&] { return UnixConnect(dir.Join("store.sock")).ok(); }, absl::Seconds(10))) {
    return absl::DeadlineExceededError("the store did not listen");
  }
  return store;
}

TEST(DaemonCliTest, DashedUnderscoredAndFlagfileSpellingsAllConfigureTheStore) {
  bench::ScratchDir dir = bench::ScratchDir::CreateOrDie();
  std::ofstream(dir.Join("store.flags")) << "# the store's flags\n--max-partial-frame-bytes=32M\n--name=from-file\n";
  ASSERT_OK_AND_ASSIGN(bench::ChildProcess store,
                       StartStore(dir, {"--socket", dir.Join("store.sock"), "--memory=1.5M", "--max_output_bytes=8M",
                                        "--partial-frame-timeout=500ms", "--flagfile=" + dir.Join("store.flags")}));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<RawStoreClient> client, RawStoreClient::Connect(dir.Join("store.sock")));
  EXPECT_EQ(client->connect_reply().store_name, "from-file");
  EXPECT_EQ(client->connect_reply().arena_size, 1536u << 10);
  EXPECT_EQ(store.Stop(), 0) << bench::ReadWholeFile(dir.Join("store.log"));
}

TEST(DaemonCliTest, SighupDoesNotStopTheStore) {
  bench::ScratchDir dir = bench::ScratchDir::CreateOrDie();
  ASSERT_OK_AND_ASSIGN(bench::ChildProcess store,
                       StartStore(dir, {"--socket=" + dir.Join("store.sock"), "--memory=4M"}));
  store.Signal(SIGHUP);
  // A signal's default action would have ended it at once; give it the chance, then ask it.
  EXPECT_FALSE(store.Wait(absl::Milliseconds(300)).has_value()) << bench::ReadWholeFile(dir.Join("store.log"));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<RawStoreClient> client, RawStoreClient::Connect(dir.Join("store.sock")));
  EXPECT_EQ(client->connect_reply().arena_size, 4u << 20);
  EXPECT_EQ(store.Stop(), 0);
}

TEST(DaemonCliTest, TheStoreSaysReadyOnlyOnceItsSocketAcceptsAndStoppingOnShutdown) {
  bench::ScratchDir dir = bench::ScratchDir::CreateOrDie();
  const std::string notify_path = dir.Join("notify.sock");
  UniqueFd notify(::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  ASSERT_TRUE(notify);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  ASSERT_LT(notify_path.size(), sizeof(addr.sun_path));
  std::memcpy(addr.sun_path, notify_path.c_str(), notify_path.size() + 1);
  ASSERT_EQ(::bind(notify.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  const timeval timeout{10, 0};
  ASSERT_EQ(::setsockopt(notify.get(), SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout)), 0);

  ASSERT_OK_AND_ASSIGN(
      bench::ChildProcess store,
      bench::ChildProcess::Start(
          {absl::StrCat(RPLASMA_BIN_DIR, "/rplasma-store"), "--socket=" + dir.Join("store.sock"), "--memory=4M"},
          {.log_path = dir.Join("store.log"), .env = {"NOTIFY_SOCKET=" + notify_path}}));
  char message[256];
  const ssize_t n = ::recv(notify.get(), message, sizeof(message), 0);
  ASSERT_GT(n, 0) << "no READY=1 within 10 s; " << bench::ReadWholeFile(dir.Join("store.log"));
  EXPECT_EQ(std::string(message, static_cast<size_t>(n)), "READY=1");
  // Ready means ready: the first connection, made at once, is served.
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<RawStoreClient> client, RawStoreClient::Connect(dir.Join("store.sock")));
  client.reset();
  store.Signal(SIGTERM);
  const ssize_t stopping = ::recv(notify.get(), message, sizeof(message), 0);
  ASSERT_GT(stopping, 0);
  EXPECT_EQ(std::string(message, static_cast<size_t>(stopping)), "STOPPING=1");
  EXPECT_EQ(store.Wait(absl::Seconds(10)), 0);
}

TEST(DaemonCliTest, TheSystemdUnitsVerifyClean) {
  const char* analyze = "/usr/bin/systemd-analyze";
  if (::access(analyze, X_OK) != 0) RPLASMA_SKIP_TEST("systemd-analyze", "systemd-analyze is not installed");
  // The configured units name the install paths; verify checks that ExecStart exists, so point
  // it at the binaries of this build.
  bench::ScratchDir dir = bench::ScratchDir::CreateOrDie();
  std::string units;
  for (const std::string unit : {RPLASMA_TEST_STORE_UNIT, RPLASMA_TEST_MANAGER_UNIT}) {
    const std::string text = bench::ReadWholeFile(unit);
    ASSERT_THAT(text, HasSubstr(absl::StrCat(RPLASMA_TEST_INSTALL_BINDIR, "/rplasma-")));
    ASSERT_THAT(text, HasSubstr("Type=notify"));
    ASSERT_THAT(text, HasSubstr("LimitMEMLOCK=infinity"));
    const std::string copy = dir.Join(unit.substr(unit.rfind('/') + 1));
    std::ofstream(copy) << absl::StrReplaceAll(
        text, {{absl::StrCat(RPLASMA_TEST_INSTALL_BINDIR, "/rplasma-"), absl::StrCat(RPLASMA_BIN_DIR, "/rplasma-")}});
    absl::StrAppend(&units, " ", copy);
  }
  const Ran verify = RunShell(absl::StrCat(analyze, " verify", units));
  EXPECT_EQ(verify.exit_code, 0) << verify.output;
  EXPECT_EQ(verify.output, "") << "systemd-analyze verify found something to say";
}

}  // namespace
}  // namespace rplasma::testing
