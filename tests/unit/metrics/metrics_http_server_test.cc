#include "protocol/metrics/metrics_http_server.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "bench-mpi/launch/child_process.h"
#include "bench-mpi/launch/loopback_http.h"
#include "protocol/base/unique_fd.h"
#include "protocol/metrics/metrics_file_writer.h"
#include "tests/support/status_matchers.h"

namespace rplasma {
namespace {

UniqueFd Connect(uint16_t port) { return bench::LoopbackConnect(port).value_or(UniqueFd()); }

// Sends `request` and reads the reply to EOF (what went wrong, if it could not).
std::string Exchange(uint16_t port, const std::string& request) {
  absl::StatusOr<std::string> reply = bench::LoopbackHttpExchange(port, request);
  return reply.ok() ? *reply : reply.status().ToString();
}

void WriteText(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

std::vector<std::string> DirectoryEntries(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) names.push_back(entry.path().filename());
  return names;
}

std::unique_ptr<MetricsHttpServer> StartServer(absl::Duration deadline = absl::Seconds(1)) {
  MetricsHttpServerOptions options;
  options.request_deadline = deadline;
  absl::StatusOr<std::unique_ptr<MetricsHttpServer>> server =
      MetricsHttpServer::Start(options, [] { return std::string("rplasma_test_up 1\n"); });
  EXPECT_OK(server.status());
  return server.ok() ? std::move(*server) : nullptr;
}

TEST(MetricsHttpServerTest, GetMetricsAnswersTheRenderedTextWithTheExpositionContentType) {
  std::unique_ptr<MetricsHttpServer> server = StartServer();
  ASSERT_NE(server, nullptr);
  ASSERT_NE(server->port(), 0);
  const std::string reply = Exchange(server->port(), "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_TRUE(absl::StartsWith(reply, "HTTP/1.1 200 OK\r\n")) << reply;
  EXPECT_TRUE(absl::StrContains(reply, "Content-Type: text/plain; version=0.0.4")) << reply;
  EXPECT_TRUE(absl::StrContains(reply, "Content-Length: 18\r\n")) << reply;
  EXPECT_TRUE(absl::EndsWith(reply, "\r\n\r\nrplasma_test_up 1\n")) << reply;
  EXPECT_EQ(server->scrapes(), 1u);
}

TEST(MetricsHttpServerTest, OtherPathsMethodsAndGarbageAreRefusedAndServingGoesOn) {
  std::unique_ptr<MetricsHttpServer> server = StartServer();
  ASSERT_NE(server, nullptr);
  EXPECT_TRUE(absl::StartsWith(Exchange(server->port(), "GET / HTTP/1.0\r\n\r\n"), "HTTP/1.1 404"));
  EXPECT_TRUE(absl::StartsWith(Exchange(server->port(), "POST /metrics HTTP/1.1\r\n\r\n"), "HTTP/1.1 405"));
  EXPECT_TRUE(absl::StartsWith(Exchange(server->port(), "\x01\x02 garbage\r\n\r\n"), "HTTP/1.1 400"));
  // A head longer than the cap, never ending: refused, not buffered without end.
  EXPECT_TRUE(absl::StartsWith(Exchange(server->port(), "GET /metrics HTTP/1.1\r\nX: " + std::string(20000, 'a')),
                               "HTTP/1.1 400"));
  EXPECT_EQ(server->rejected(), 4u);
  EXPECT_TRUE(absl::StartsWith(Exchange(server->port(), "GET /metrics HTTP/1.1\r\n\r\n"), "HTTP/1.1 200"));
}

TEST(MetricsHttpServerTest, AStalledClientIsCutAtTheDeadlineAndTheNextIsServed) {
  std::unique_ptr<MetricsHttpServer> server = StartServer(absl::Milliseconds(200));
  ASSERT_NE(server, nullptr);
  UniqueFd stalled = Connect(server->port());
  ASSERT_TRUE(stalled);
  ASSERT_EQ(::send(stalled.get(), "GET /met", 8, MSG_NOSIGNAL), 8);  // then nothing
  const absl::Time start = absl::Now();
  const std::string reply = Exchange(server->port(), "GET /metrics HTTP/1.1\r\n\r\n");
  EXPECT_TRUE(absl::StartsWith(reply, "HTTP/1.1 200")) << reply;
  EXPECT_LT(absl::Now() - start, absl::Seconds(2));
  EXPECT_EQ(server->timed_out(), 1u);
  char byte;
  EXPECT_EQ(::recv(stalled.get(), &byte, 1, 0), 0);  // closed without a reply
}

TEST(MetricsHttpServerTest, ABadAddressIsAnErrorNamingIt) {
  MetricsHttpServerOptions options;
  options.address = "not-an-address";
  absl::StatusOr<std::unique_ptr<MetricsHttpServer>> server = MetricsHttpServer::Start(options, [] { return ""; });
  ASSERT_FALSE(server.ok());
  EXPECT_TRUE(absl::StrContains(server.status().message(), "not-an-address")) << server.status();
}

TEST(MetricsFileWriterTest, WritesAtStartAndAtShutdownThroughARename) {
  bench::ScratchDir dir = bench::ScratchDir::CreateOrDie();
  const std::string path = dir.Join("rplasma.prom");
  int renders = 0;
  {
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<MetricsFileWriter> writer, MetricsFileWriter::Start(path, absl::Hours(1), [&] {
                           return absl::StrCat("n ", ++renders, "\n");
                         }));
    std::ifstream first(path);
    std::stringstream text;
    text << first.rdbuf();
    EXPECT_EQ(text.str(), "n 1\n");
  }
  std::ifstream last(path);
  std::stringstream text;
  text << last.rdbuf();
  EXPECT_EQ(text.str(), "n 2\n");
  EXPECT_THAT(DirectoryEntries(dir.path()), ::testing::ElementsAre("rplasma.prom"));  // no temporary left behind
  EXPECT_FALSE(MetricsFileWriter::Start(dir.Join("missing/dir/x.prom"), absl::Seconds(1), [] { return ""; }).ok());
}

// Run as root on a directory others can write, the old "<path>.tmp" + O_TRUNC followed a planted
// symlink and truncated whatever it pointed to (issue 21).
TEST(MetricsFileWriterTest, PlantedSymlinksAreReplacedNeverFollowed) {
  bench::ScratchDir dir = bench::ScratchDir::CreateOrDie();
  const std::string path = dir.Join("rplasma.prom");
  const std::string victim = dir.Join("victim"), other_victim = dir.Join("other-victim");
  WriteText(victim, "precious\n");
  WriteText(other_victim, "also precious\n");
  ASSERT_EQ(::symlink(victim.c_str(), (path + ".tmp").c_str()), 0);
  ASSERT_EQ(::symlink(other_victim.c_str(), path.c_str()), 0);
  ASSERT_OK(MetricsFileWriter::WriteAtomically(path, "rplasma_up 1\n"));
  EXPECT_EQ(bench::ReadWholeFile(victim), "precious\n");
  EXPECT_EQ(bench::ReadWholeFile(other_victim), "also precious\n");
  struct stat st;
  ASSERT_EQ(::lstat(path.c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode)) << "the symlink at the path is replaced by the new file";
  EXPECT_EQ(st.st_mode & 0777, 0644u);
  EXPECT_EQ(bench::ReadWholeFile(path), "rplasma_up 1\n");
  EXPECT_THAT(DirectoryEntries(dir.path()),
              ::testing::UnorderedElementsAre("rplasma.prom", "rplasma.prom.tmp", "victim", "other-victim"));
}

}  // namespace
}  // namespace rplasma
