// BenchMpiOptions: what one rplasma-bench-mpi run measures and how each rank sets up its node.
// bench_mpi_main.cc maps flags onto this struct; Validate() names the first bad field.
#ifndef RPLASMA_BENCH_MPI_MPI_BENCH_MPI_OPTIONS_H_
#define RPLASMA_BENCH_MPI_MPI_BENCH_MPI_OPTIONS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace rplasma::bench {

// Who puts and who fetches (fetch_plan.h).
enum class FetchPattern { kPairs, kBroadcast, kGather, kAllToAll };
absl::string_view FetchPatternName(FetchPattern pattern);  // "pairs", "broadcast", "gather", "alltoall"
absl::StatusOr<std::vector<FetchPattern>> ParsePatterns(absl::string_view text);

// Which peer protocol the managers use (manager/peer/peer_protocol.h): `get` (two-sided, the bytes
// inline in the reply), `pin` (one-sided: Pin, Read, Unpin), `auto` (the manager's
// --pin-threshold auto, or the tuned threshold file). ParseProtocols also takes the old names
// `send` (= get) and `read` (= pin).
enum class FetchProtocol { kGet, kPin, kAuto };
absl::string_view FetchProtocolName(FetchProtocol protocol);
absl::StatusOr<std::vector<FetchProtocol>> ParseProtocols(absl::string_view text);

// The largest object the `get` protocol can move: a Get reply must fit in one transport Call
// (transport::kMaxCallBytes, 64 MiB) with its header.
inline constexpr uint64_t kMaxGetBytes = (64u << 20) - 4096;

// `pattern` with {rank} and {host} replaced ("rank{rank}" -> "rank3").
std::string ExpandNodeName(absl::string_view pattern, int rank, absl::string_view host);
// kInvalidArgument unless `name` is a valid manager --node-name (1..100 of [A-Za-z0-9._-]).
absl::Status ValidateNodeName(absl::string_view name);

struct BenchMpiOptions {
  // What to measure.
  std::vector<FetchPattern> patterns = {FetchPattern::kPairs, FetchPattern::kBroadcast, FetchPattern::kGather,
                                        FetchPattern::kAllToAll};
  std::vector<FetchProtocol> protocols = {FetchProtocol::kGet, FetchProtocol::kPin, FetchProtocol::kAuto};
  std::vector<uint64_t> sizes;         // empty = powers of two from min_size to max_size
  uint64_t min_size = 1u << 10;        // 1 KiB
  uint64_t max_size = 1u << 30;        // 1 GiB
  std::vector<int> concurrency = {1};  // fetches in flight per rank (threads, own Client each)
  int batch = 1;                       // ids per Client::Fetch call; latency samples are per call
  int warmup = 2;                      // unmeasured rounds per (pattern, size, protocol)
  int repeat = 10;                     // measured rounds
  bool verify = true;                  // check every fetched byte against its pattern
  bool tcp_baseline = true;            // raw TCP stream between the pairs, same sizes
  // The sweep's protocols each on a node of their own (a store and a manager forcing it), instead
  // of all on one node (get and pin forced per fetch, auto the manager's choice).
  bool node_per_protocol = false;
  absl::Duration fetch_timeout = absl::Seconds(60);

  // How each rank runs its node.
  std::string transport = "tcp";          // manager --transport: tcp | verbs | auto
  std::string listen_host = "127.0.0.1";  // this rank's address for peers (cluster: the host's)
  std::string node_name = "rank{rank}";   // manager --node_name; {rank}, {host} (short hostname)
                                          // are replaced. The tuner's peer lines use these names.
  std::string rdma_device;                // manager --rdma-device ("" = rdma_cm picks)
  std::string redis;                      // HOST:PORT; required unless start_redis
  bool start_redis = false;               // rank 0 starts redis-server and broadcasts its address
  std::string secret_file;                // "" = rank 0 creates one and broadcasts it
  std::string auto_threshold = "auto";    // manager --pin-threshold for protocol auto (or a FILE)
  uint64_t store_memory = 0;              // store --memory; 0 = enough for the run
  bool attach = false;                    // use running store/manager (no restarts)
  std::string store_socket;               // attach: this rank's store socket
  std::string manager_socket;             // attach: this rank's manager --client-socket
  std::string bin_dir;                    // "" = the directory of this executable

  // Output.
  std::string csv = "rplasma-bench-mpi.csv";
  std::string png = "rplasma-bench-mpi.png";  // "" = no plot
  std::string plot_script;                    // "" = <bin_dir>/../../bench-mpi/mpi/plot_bench.gp or built-in
  bool per_rank_rows = true;                  // CSV rows per rank as well as the aggregate

  // Tuner.
  bool tune = false;
  std::string tune_out = "rplasma-threshold.txt";
  uint64_t tune_min_size = 1u << 10;
  uint64_t tune_max_size = 32u << 20;

  absl::Status Validate() const;
  // The sizes to run: `sizes` if given, else the power-of-two ladder.
  std::vector<uint64_t> Sizes() const;
};

}  // namespace rplasma::bench

#endif  // RPLASMA_BENCH_MPI_MPI_BENCH_MPI_OPTIONS_H_
