// The rplasma CLI against a real store: put/get round trips through files and stdin/stdout,
// list and stats output, and errors (one line, non-zero exit).
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include <gtest/gtest.h>

#include "bench-mpi/launch/child_process.h"
#include "nlohmann/json.hpp"
#include "tests/integration/client_test_fixture.h"

namespace rplasma::testing {
namespace {

struct CliResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
}

class ClientCliTest : public ClientStoreTest {
 protected:
  // Runs `rplasma --store-socket S <args>` with stdin from `stdin_path` (or /dev/null).
  CliResult Run(const std::string& args, const std::string& stdin_path = "/dev/null") {
    return Execute("", args, absl::StrCat(" <", stdin_path, " >", Out(), " 2>", Err()));
  }

  // Runs `rplasma --store-socket S <args>` with standard fd `closed` (0, 1 or 2) closed, under
  // timeout(1) so a hang ends as exit code 124. The other two go to files.
  CliResult RunWithClosedFd(int closed, const std::string& args) {
    const std::string in_redirect = closed == 0 ? " <&-" : " </dev/null";
    const std::string out_redirect = closed == 1 ? " >&-" : absl::StrCat(" >", Out());
    const std::string err_redirect = closed == 2 ? " 2>&-" : absl::StrCat(" 2>", Err());
    WriteFile(Out(), "");
    WriteFile(Err(), "");
    return Execute("timeout -s KILL 10 ", args, in_redirect + out_redirect + err_redirect);
  }

  std::string Out() const { return dir_.Join("out"); }
  std::string Err() const { return dir_.Join("err"); }
  // `<prefix>rplasma --store-socket S <args><redirects>` through the shell; stdout and stderr are
  // read back from Out() and Err() (empty when a redirect closed them).
  CliResult Execute(const std::string& prefix, const std::string& args, const std::string& redirects) {
    const std::string command =
        absl::StrCat(prefix, RPLASMA_BIN_DIR, "/rplasma --store-socket ", store_->socket_path(), " ", args, redirects);
    const int status = std::system(command.c_str());
    CliResult result;
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    result.out = bench::ReadWholeFile(Out());
    result.err = bench::ReadWholeFile(Err());
    return result;
  }

  // Every CLI connection the store has logged ended by the client closing it, never by bytes
  // that were not a request (what a CLI writing its output into the socket would send).
  void ExpectCliConnectionsEndedCleanly(int connections) {
    auto cli_lines = [&] {
      std::vector<std::string> lines;
      for (absl::string_view line : absl::StrSplit(store_->ReadLog(), '\n')) {
        if (absl::StrContains(line, "(rplasma-cli, pid") && absl::StrContains(line, "disconnected")) {
          lines.emplace_back(line);
        }
      }
      return lines;
    };
    ASSERT_TRUE(WaitFor([&] { return cli_lines().size() >= static_cast<size_t>(connections); }, absl::Seconds(5)))
        << store_->ReadLog();
    for (const std::string& line : cli_lines()) {
      EXPECT_TRUE(absl::StrContains(line, "connection closed")) << line;
    }
  }

  bench::ScratchDir dir_ = bench::ScratchDir::CreateOrDie();
};

TEST_F(ClientCliTest, PutFromStdinAndGetToStdoutRoundTripsBinaryData) {
  ASSERT_NO_FATAL_FAILURE(StartStore());
  const std::string payload = TestBytes(7, 300000);
  WriteFile(dir_.Join("in"), payload);
  const CliResult put = Run("put --label blob -", dir_.Join("in"));
  ASSERT_EQ(put.exit_code, 0) << put.err;
  EXPECT_EQ(put.out, ObjectID::FromLabel("blob").Hex() + "\n");
  const CliResult get = Run("get --label blob -");
  ASSERT_EQ(get.exit_code, 0) << get.err;
  EXPECT_EQ(get.out, payload);
  // The library sees the same object.
  ASSERT_OK_AND_ASSIGN(ObjectBuffer buffer, client_->GetOne(ObjectID::FromLabel("blob")));
  EXPECT_EQ(std::string(buffer.data().begin(), buffer.data().end()), payload);
  buffer = ObjectBuffer();
  ASSERT_EQ(Run("delete --label blob").exit_code, 0);
  ExpectBackAtBaseline();
}

TEST_F(ClientCliTest, PutAndGetWithFilesAndHexIds) {
  ASSERT_NO_FATAL_FAILURE(StartStore());
  const std::string payload = TestBytes(8, 12345);
  WriteFile(dir_.Join("file"), payload);
  const std::string hex = ObjectID::FromLabel("file").Hex();
  ASSERT_EQ(Run(absl::StrCat("put ", hex, " ", dir_.Join("file"))).exit_code, 0);
  const CliResult get = Run(absl::StrCat("get ", hex, " ", dir_.Join("copy")));
  ASSERT_EQ(get.exit_code, 0) << get.err;
  EXPECT_EQ(bench::ReadWholeFile(dir_.Join("copy")), payload);
  // An empty object works too.
  WriteFile(dir_.Join("empty"), "");
  ASSERT_EQ(Run(absl::StrCat("put --label empty ", dir_.Join("empty"))).exit_code, 0);
  const CliResult empty = Run("get --label empty");
  EXPECT_EQ(empty.exit_code, 0) << empty.err;
  EXPECT_EQ(empty.out, "");
  ASSERT_EQ(Run(absl::StrCat("delete ", hex, " --label empty")).exit_code, 0);
  ExpectBackAtBaseline();
}

TEST_F(ClientCliTest, ListAndStatsShowObjectsWithHumanReadableSizes) {
  ASSERT_NO_FATAL_FAILURE(StartStore());
  ASSERT_OK(client_->Put(ObjectID::FromLabel("mib"), AsSpan(TestBytes<std::vector<uint8_t>>(1, 3 << 19))));
  ASSERT_OK(client_->Put(ObjectID::FromLabel("tiny"), AsSpan(TestBytes<std::vector<uint8_t>>(2, 10))));
  const CliResult list = Run("list");
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_NE(list.out.find(ObjectID::FromLabel("mib").Hex()), std::string::npos) << list.out;
  EXPECT_NE(list.out.find("1.5 MiB"), std::string::npos) << list.out;
  EXPECT_NE(list.out.find("10 B"), std::string::npos) << list.out;
  EXPECT_NE(list.out.find("2 objects"), std::string::npos) << list.out;
  const CliResult stats = Run("stats");
  ASSERT_EQ(stats.exit_code, 0) << stats.err;
  EXPECT_NE(stats.out.find("capacity:       64.0 MiB"), std::string::npos) << stats.out;
  EXPECT_NE(stats.out.find("2 sealed"), std::string::npos) << stats.out;
  ASSERT_OK(client_->Delete({ObjectID::FromLabel("mib"), ObjectID::FromLabel("tiny")}));
  ExpectBackAtBaseline();
}

TEST_F(ClientCliTest, ListAndStatsWithJsonPrintOneDocumentWithExactNumbers) {
  ASSERT_NO_FATAL_FAILURE(StartStore());
  ASSERT_OK(client_->Put(ObjectID::FromLabel("mib"), AsSpan(TestBytes<std::vector<uint8_t>>(1, 3 << 19))));
  ASSERT_OK(client_->Put(ObjectID::FromLabel("tiny"), AsSpan(TestBytes<std::vector<uint8_t>>(2, 10)),
                         AsSpan(TestBytes<std::vector<uint8_t>>(4, 3))));
  const CliResult list = Run("list --json");
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_EQ(std::count(list.out.begin(), list.out.end(), '\n'), 1) << list.out;
  const nlohmann::json objects = nlohmann::json::parse(list.out, nullptr, false);
  ASSERT_FALSE(objects.is_discarded()) << list.out;
  EXPECT_EQ(objects.at("count"), 2);
  EXPECT_EQ(objects.at("bytes"), (3 << 19) + 10 + 3);
  ASSERT_EQ(objects.at("objects").size(), 2u);
  for (const nlohmann::json& o : objects.at("objects")) {
    EXPECT_EQ(o.at("state"), "sealed");
    EXPECT_EQ(o.at("ref_count"), 0);
    if (o.at("id") == ObjectID::FromLabel("tiny").Hex()) {
      EXPECT_EQ(o.at("data_size"), 10);
      EXPECT_EQ(o.at("metadata_size"), 3);
    } else {
      EXPECT_EQ(o.at("id"), ObjectID::FromLabel("mib").Hex());
      EXPECT_EQ(o.at("data_size"), 3 << 19);
    }
  }
  const CliResult stats = Run("stats --json");
  ASSERT_EQ(stats.exit_code, 0) << stats.err;
  const nlohmann::json s = nlohmann::json::parse(stats.out, nullptr, false);
  ASSERT_FALSE(s.is_discarded()) << stats.out;
  EXPECT_EQ(s.at("capacity"), 64u << 20);
  EXPECT_EQ(s.at("objects_sealed"), 2);
  EXPECT_EQ(s.at("objects_created"), 0);
  EXPECT_GE(s.at("used_bytes").get<uint64_t>(), (3u << 19) + 13);
  EXPECT_GE(s.at("clients").get<uint64_t>(), 2u);  // this test's client and the CLI
  // --manager without a manager socket is a usage error, not a hang or a crash.
  const CliResult no_manager = Run("stats --manager");
  EXPECT_EQ(no_manager.exit_code, 2);
  EXPECT_NE(no_manager.err.find("--manager-socket"), std::string::npos) << no_manager.err;
  EXPECT_EQ(Run("list --bogus").exit_code, 2);
  EXPECT_EQ(Run("list --manager").exit_code, 2);
  ASSERT_OK(client_->Delete({ObjectID::FromLabel("mib"), ObjectID::FromLabel("tiny")}));
  ExpectBackAtBaseline();
}

TEST_F(ClientCliTest, ErrorsAreOneLineWithNonZeroExit) {
  ASSERT_NO_FATAL_FAILURE(StartStore());
  const CliResult missing = Run("get --label nothing-here");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_EQ(missing.out, "");
  EXPECT_NE(missing.err.find("ObjectNotFound"), std::string::npos) << missing.err;
  EXPECT_EQ(std::count(missing.err.begin(), missing.err.end(), '\n'), 1) << missing.err;

  const CliResult bad_id = Run("get 1234");
  EXPECT_EQ(bad_id.exit_code, 2);
  EXPECT_NE(bad_id.err.find("40 hex digits"), std::string::npos) << bad_id.err;

  EXPECT_EQ(Run("frobnicate").exit_code, 2);
  EXPECT_EQ(Run("delete --label nothing-here").exit_code, 1);
  const CliResult no_file = Run("put --label x /nonexistent/file");
  EXPECT_EQ(no_file.exit_code, 1);
  EXPECT_NE(no_file.err.find("/nonexistent/file"), std::string::npos) << no_file.err;

  const std::string command =
      absl::StrCat(RPLASMA_BIN_DIR, "/rplasma --store-socket ", dir_.Join("none.sock"), " stats >/dev/null 2>&1");
  const int status = std::system(command.c_str());
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1);
  ExpectBackAtBaseline();
}

TEST_F(ClientCliTest, ClosedStdinReadsAsEmptyInsteadOfWaitingOnTheStoreSocket) {
  ASSERT_NO_FATAL_FAILURE(StartStore());
  const CliResult put = RunWithClosedFd(0, "put --label from-closed-stdin -");
  ASSERT_EQ(put.exit_code, 0) << put.err;  // 124 or -1: it hung reading the socket
  EXPECT_EQ(put.out, ObjectID::FromLabel("from-closed-stdin").Hex() + "\n");
  ASSERT_OK_AND_ASSIGN(ObjectBuffer buffer, client_->GetOne(ObjectID::FromLabel("from-closed-stdin")));
  EXPECT_EQ(buffer.data().size(), 0u);
  buffer = ObjectBuffer();
  ASSERT_OK(client_->Delete({ObjectID::FromLabel("from-closed-stdin")}));
  ExpectCliConnectionsEndedCleanly(1);
  ExpectBackAtBaseline();
}

TEST_F(ClientCliTest, ClosedStdoutSendsNoObjectBytesIntoTheStoreSocket) {
  ASSERT_NO_FATAL_FAILURE(StartStore());
  const std::vector<uint8_t> payload = TestBytes<std::vector<uint8_t>>(11, 100000);
  ASSERT_OK(client_->Put(ObjectID::FromLabel("to-closed-stdout"), AsSpan(payload)));
  const CliResult get = RunWithClosedFd(1, "get --label to-closed-stdout -");
  EXPECT_EQ(get.exit_code, 0) << get.err;
  const CliResult stats = RunWithClosedFd(1, "stats");
  EXPECT_EQ(stats.exit_code, 0) << stats.err;
  ExpectCliConnectionsEndedCleanly(2);
  // The store is unharmed: the object is intact and served.
  ASSERT_OK_AND_ASSIGN(ObjectBuffer buffer, client_->GetOne(ObjectID::FromLabel("to-closed-stdout")));
  EXPECT_EQ(std::vector<uint8_t>(buffer.data().begin(), buffer.data().end()), payload);
  buffer = ObjectBuffer();
  ASSERT_OK(client_->Delete({ObjectID::FromLabel("to-closed-stdout")}));
  ExpectBackAtBaseline();
}

TEST_F(ClientCliTest, ClosedStderrSendsNoErrorTextIntoTheStoreSocket) {
  ASSERT_NO_FATAL_FAILURE(StartStore());
  const CliResult missing = RunWithClosedFd(2, "get --label nothing-here");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_EQ(missing.out, "");
  ExpectCliConnectionsEndedCleanly(1);
  ASSERT_OK(client_->Put(ObjectID::FromLabel("after"), AsSpan(TestBytes<std::vector<uint8_t>>(3, 10))));
  ASSERT_OK(client_->Delete({ObjectID::FromLabel("after")}));
  ExpectBackAtBaseline();
}

}  // namespace
}  // namespace rplasma::testing
