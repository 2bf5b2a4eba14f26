// rplasma-bench-mpi --tune under mpirun -np 2 over TCP: writes a threshold file in the manager's
// format whose default sits within one size step of the crossover measured in the same run; the
// run's own managers restarted with that file (new node ids) apply its per-peer line, keyed by node
// name, to their peer; and a fresh rplasma-manager started with --rdma_threshold=FILE loads it
// (stats say threshold_mode "file" and the file's default_threshold). That manager is given the
// old spelling of --pin_threshold on purpose: the alias must keep working.
#include <fcntl.h>
#include <unistd.h>

#include <set>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

#include "bench-mpi/launch/manager_launcher.h"
#include "nlohmann/json.hpp"
#include "protocol/base/socket_io.h"
#include "protocol/base/unique_fd.h"
#include "protocol/frame.h"
#include "protocol/manager_messages.h"
#include "tests/integration/bench_mpi_run.h"
#include "tests/support/store_process.h"

namespace rplasma::testing {
namespace {

// The value of `default` in a threshold file, or -1.
int64_t DefaultThreshold(const std::string& file) {
  for (absl::string_view line : absl::StrSplit(file, '\n', absl::SkipEmpty())) {
    std::vector<std::string> words = absl::StrSplit(line, ' ', absl::SkipEmpty());
    int64_t value = 0;
    if (words.size() == 2 && words[0] == "default" && absl::SimpleAtoi(words[1], &value)) return value;
  }
  return -1;
}

// The value of `peer <name>` in a threshold file, or -1.
int64_t PeerThreshold(const std::string& file, const std::string& name) {
  for (absl::string_view line : absl::StrSplit(file, '\n', absl::SkipEmpty())) {
    std::vector<std::string> words = absl::StrSplit(line, ' ', absl::SkipEmpty());
    int64_t value = 0;
    if (words.size() == 3 && words[0] == "peer" && words[1] == name && absl::SimpleAtoi(words[2], &value)) {
      return value;
    }
  }
  return -1;
}

absl::StatusOr<std::string> ManagerStats(const std::string& socket) {
  ASSIGN_OR_RETURN(UniqueFd fd, UnixConnect(socket));
  RETURN_IF_ERROR(WriteFrame(fd.get(), EncodeManagerRequest(ManagerRequest{1, ManagerStatsRequest{}})));
  ASSIGN_OR_RETURN(std::string payload, ReadFrame(fd.get(), kMaxManagerFrameBytes, absl::Now() + absl::Seconds(5)));
  ASSIGN_OR_RETURN(ManagerReply reply, DecodeManagerReply(payload));
  const auto* stats = std::get_if<ManagerStatsReply>(&reply.body);
  if (stats == nullptr) return absl::InternalError("not a stats reply");
  return stats->json;
}

TEST(BenchMpiTunerTest, TunedThresholdFileIsWithinOneStepOfTheCrossoverAndManagersLoadIt) {
  RPLASMA_SKIP_IF_NO_MPI();
  bench::ScratchDir dir = bench::ScratchDir::CreateOrDie();
  const std::string file_path = dir.Join("threshold.txt");
  MpiRun run = RunBenchMpi(
      dir, 2,
      // `--tune=true`, not `--tune`: mpirun takes a bare --tune as its own option.
      {"--tune=true", "--tune_out=" + file_path, "--tune_min_size=1K", "--tune_max_size=1M", "--fetch_timeout=20s",
       "--warmup=1", "--repeat=5", "--csv=" + dir.Join("tune.csv"), "--png=" + dir.Join("tune.png")});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const std::string file = bench::ReadWholeFile(file_path);
  const int64_t threshold = DefaultThreshold(file);
  ASSERT_GE(threshold, 0) << file;
  EXPECT_TRUE(absl::StrContains(file, "fit cluster")) << file;
  // The cluster choice (and every pair's) sits within one step of the measured crossover.
  EXPECT_FALSE(absl::StrContains(run.output, "NOT within one step")) << run.output;
  EXPECT_TRUE(absl::StrContains(run.output, "within one step")) << run.output;
  // Peer lines name nodes (--node_name rank<r>), so the run's managers, restarted with the file
  // (new node ids), apply the line for their peer, and report the file's default.
  for (int rank : {0, 1}) {
    const std::string peer = absl::StrCat("rank", 1 - rank);
    const int64_t peer_threshold = PeerThreshold(file, peer);
    ASSERT_GE(peer_threshold, 0) << "no line for " << peer << ":\n" << file;
    const std::string prefix =
        absl::StrCat("manager stats rank ", rank, ": threshold_mode=file default_threshold=", threshold,
                     " peer_thresholds={\"", peer, ".");
    const size_t at = run.output.find(prefix);
    ASSERT_NE(at, std::string::npos) << prefix << "\n" << run.output;
    const std::string rest = run.output.substr(at + prefix.size(), run.output.find('\n', at) - at - prefix.size());
    EXPECT_TRUE(absl::StrContains(rest, absl::StrCat("\":", peer_threshold, "}"))) << rest << " vs " << peer_threshold;
  }
  EXPECT_TRUE(absl::StrContains(run.output, "auto/best worst case")) << run.output;
  EXPECT_TRUE(absl::StrContains(run.output, ": PASS\n") || absl::StrContains(run.output, ": SHORT\n")) << run.output;
  // The check (auto with the file, interleaved with get and pin) has auto / best filled for
  // every size, on the aggregate shift-1 auto row (column 17; only that it is there and positive).
  std::set<std::string> with_ratio;
  for (absl::string_view line : absl::StrSplit(bench::ReadWholeFile(dir.Join("tune.csv")), '\n', absl::SkipEmpty())) {
    std::vector<std::string> f = absl::StrSplit(line, ',');
    if (f.size() != 17 || f[0] != "tune_check" || f[3] != "auto" || f[9] != "shift1" || f[15] != "1") continue;
    double ratio = 0;
    EXPECT_TRUE(absl::SimpleAtod(f[16], &ratio) && ratio > 0) << line;
    with_ratio.insert(f[4]);
  }
  for (uint64_t size = 1024; size <= (1u << 20); size *= 2) {
    EXPECT_TRUE(with_ratio.count(std::to_string(size))) << "no auto/best at " << size;
  }
  if (HaveGnuplot()) {
    const std::string png = bench::ReadWholeFile(dir.Join("tune.png"));
    ASSERT_GT(png.size(), 8u) << run.output;
    EXPECT_EQ(png.substr(1, 3), "PNG");
  } else {
    EXPECT_TRUE(absl::StrContains(run.output, "plot: skipped")) << run.output;
  }

  // A fresh manager loads the file.
  ASSERT_OK_AND_ASSIGN(auto redis, bench::RedisServer::Start());
  ASSERT_OK_AND_ASSIGN(auto store, StoreProcess::Start());
  {
    // Private (0600) and at least 16 bytes, or the manager refuses it.
    UniqueFd secret(::open(dir.Join("secret").c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
    ASSERT_TRUE(secret);
    const std::string line = "a-test-secret-of-the-tuner-test\n";
    ASSERT_OK(WriteAll(secret.get(), line.data(), line.size()));
  }
  const std::string manager_socket = dir.Join("manager.sock");
  bench::ManagerLaunchOptions launch;
  launch.binary = std::string(RPLASMA_BIN_DIR) + "/rplasma-manager";
  launch.store_socket = store->socket_path();
  launch.redis = redis->address();
  launch.secret_file = dir.Join("secret");
  launch.node_name = launch.transport = launch.pin_threshold = launch.listen_host = "";  // the manager's defaults
  launch.extra_args = {"--rdma_threshold=" + file_path};
  launch.client_socket = manager_socket;
  launch.log_path = dir.Join("manager.log");
  launch.probe_client_socket = false;
  launch.stop_grace = absl::ZeroDuration();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<bench::LaunchedManager> manager, bench::LaunchedManager::Start(launch));
  std::string stats;
  ASSERT_TRUE(WaitFor(
      [&] {
        absl::StatusOr<std::string> s = ManagerStats(manager_socket);
        if (s.ok()) stats = *s;
        return s.ok();
      },
      absl::Seconds(20)))
      << bench::ReadWholeFile(dir.Join("manager.log"));
  const nlohmann::json parsed = nlohmann::json::parse(stats, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(parsed.is_discarded()) << "manager stats are not JSON: " << stats;
  EXPECT_EQ(parsed.at("threshold_mode"), "file") << stats;
  EXPECT_EQ(parsed.at("default_threshold").get<int64_t>(), threshold) << stats;
}

}  // namespace
}  // namespace rplasma::testing
