// Command line of rplasma-bench:
//
//   rplasma-bench [--mode local|fetch] [--sizes 16,4K,64K,1M,64M,256M] [--iterations N]
//                 [--duration S] [--csv out.csv] [--store-socket PATH | --memory BYTES]
//                 [--redis | --no-redis] [--objects-overhead N] [--batch N] [--only LIST]
//                 [--transport tcp|verbs|auto] [--pin-threshold BYTES|auto|FILE]    (fetch mode)
//                 [--listen-host IP]                                           (fetch mode)
//                 [--batch N] [--batch-bytes BYTES] [--rounds N]              (fetch mode: batches)
//   rplasma-bench --mode scrape [--sizes 1K,1M] [--rounds N] [--iterations N] [--scrape-interval D]
//   rplasma-bench --mode directory [--nodes N] [--batch N] [--duration D] [--replicas N]
//
// Each (benchmark, size) runs `iterations` times, or fewer once `duration` has passed (but at
// least kMinIterations). With --store-socket the bench attaches to a running store; otherwise it
// starts its own with --memory (default: enough for the largest size and the overhead run).
#ifndef RPLASMA_BENCH_MPI_LOCAL_LOCAL_BENCH_OPTIONS_H_
#define RPLASMA_BENCH_MPI_LOCAL_LOCAL_BENCH_OPTIONS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace rplasma::bench {

enum class RedisMode {
  kAuto,  // start a redis-server if one is installed, else skip the Redis peer
  kOn,    // start one; fail if it cannot be started
  kOff,   // no Redis peer
};

struct LocalBenchOptions {
  static constexpr int64_t kMinIterations = 3;

  std::string mode = "local";
  std::vector<uint64_t> sizes = {16, 4 << 10, 64 << 10, 1 << 20, 64 << 20, 256 << 20};
  bool sizes_given = false;  // --sizes was on the command line (fetch mode has its own default)
  static constexpr uint64_t kFetchSizes[] = {1 << 10, 64 << 10, 1 << 20, 16 << 20, 64 << 20};
  int64_t iterations = 1000;
  absl::Duration duration = absl::Seconds(1);  // per (benchmark, size)
  std::string csv_path;                        // "" = no CSV file
  std::string store_socket;                    // "" = start our own store
  uint64_t memory_bytes = 0;                   // own store's arena; 0 = DefaultMemoryBytes()
  RedisMode redis = RedisMode::kAuto;
  int64_t objects_overhead = 1000000;  // objects for the memory-overhead run; 0 skips it
  // Local mode: ids per Get in the batch-get benchmark. Fetch mode: ids per Client::Fetch in the
  // batch rows (batch_fetch against batch_mget and batch_stream); 1 (the fetch-mode default) runs
  // no batch rows.
  int64_t batch = 1000;
  static constexpr int64_t kFetchBatch = 1;
  // Fetch mode: a batch of one size holds at most this many bytes (fewer objects than --batch then).
  uint64_t batch_bytes = 256u << 20;
  // Local mode: run every benchmark this many times over, one round after the other, each CSV row
  // tagged with its round; scripts/bench-targets.py then judges each target on the median of its
  // per-round ratios (a ratio's two sides always come from one round).
  // Fetch mode: measured rounds of each batch row (its median, min and max are reported).
  int64_t rounds = 1;
  static constexpr int64_t kFetchRounds = 5;
  // Scrape mode: rounds of (fetches without a scraper, fetches while every daemon's /metrics is
  // scraped every scrape_interval), the two halves' order alternating; sizes default to these.
  static constexpr int64_t kScrapeRounds = 10;
  static constexpr uint64_t kScrapeSizes[] = {1 << 10, 1 << 20};
  absl::Duration scrape_interval = absl::Milliseconds(100);
  // Directory mode: simulated nodes (threads, each with its own RedisDirectory), ids per
  // PublishObjects and per batched Lookup, and the length of each phase (--duration).
  int64_t nodes = 8;
  static constexpr int64_t kMaxNodes = 256;
  // Directory mode: replicas of each of the cluster's 3 masters (every write is applied again on
  // each replica, on the same cores here).
  int64_t replicas = 1;
  static constexpr int64_t kMaxReplicas = 4;
  static constexpr int64_t kDirectoryBatch = 256;
  static constexpr int64_t kMaxDirectoryBatch = 65536;
  static constexpr absl::Duration kDirectoryDuration = absl::Seconds(2);
  // Benchmarks to run (names as in the CSV "benchmark" column, e.g. "get,ping_pong"); empty = all.
  // "get" also selects release/get_release, "batch_get" batch_release, "set_get" Redis.
  std::vector<std::string> only;
  std::string transport = "tcp";          // fetch mode: the managers' --transport
  std::string pin_threshold = "65536";    // fetch mode: the managers' --pin-threshold (alias --rdma-threshold)
  std::string listen_host = "127.0.0.1";  // fetch mode: the managers' peer listener host (verbs: the RDMA IP)
  std::vector<std::string> manager_args;  // fetch mode: more arguments for both managers (--manager-arg)

  // True if `benchmark` should run.
  bool Selected(const std::string& benchmark) const;
  // Fetch mode: objects of `size` in one batch, min(batch, batch_bytes / size) but at least 1.
  int64_t BatchCount(uint64_t size) const;

  // The arena an own store needs: room for two of the largest object, the batch run and the
  // overhead run, plus slack.
  uint64_t DefaultMemoryBytes() const;
  absl::Status Validate() const;
};

// The usage text printed by --help and after a bad flag.
std::string LocalBenchUsage();

// Parses argv (argv[0] is skipped). Sets *help and returns defaults for --help.
absl::StatusOr<LocalBenchOptions> ParseLocalBenchOptions(int argc, char** argv, bool* help);

}  // namespace rplasma::bench

#endif  // RPLASMA_BENCH_MPI_LOCAL_LOCAL_BENCH_OPTIONS_H_
