// rplasma-bench-mpi: `mpirun -np N rplasma-bench-mpi [flags]` — each rank is a node (its own
// rplasma-store and rplasma-manager); see docs/BENCHMARKS.md. Flags map onto BenchMpiOptions; the
// command line's conventions are protocol/command_line/command_line.h's (docs/OPERATIONS.md).
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"

#include "bench-mpi/common/size_units.h"
#include "bench-mpi/mpi/bench_mpi.h"
#include "bench-mpi/mpi/mpi_world.h"
#include "protocol/command_line/command_line.h"

ABSL_FLAG(std::string, patterns, "pairs,broadcast,gather,alltoall", "pairs, broadcast, gather, alltoall");
ABSL_FLAG(std::string, protocols, "get,pin,auto",
          "get (bytes inline in the reply), pin (Pin + Read + Unpin), auto; send and read are aliases of get and pin");
ABSL_FLAG(std::string, sizes, "", "object sizes, e.g. 1K,64K,1M (default: powers of two min..max)");
ABSL_FLAG(std::string, min_size, "1KiB", "smallest size of the default ladder");
ABSL_FLAG(std::string, max_size, "1GiB", "largest size of the default ladder");
ABSL_FLAG(std::string, concurrency, "1", "fetches in flight per rank, a list: 1,4");
ABSL_FLAG(int, batch, 1,
          "ids per Client::Fetch call in the fetch phase (>= 1; 1 = one id per call); latency samples are per call");
ABSL_FLAG(int, warmup, 2, "unmeasured rounds per point");
ABSL_FLAG(int, repeat, 10, "measured rounds per point");
ABSL_FLAG(bool, verify, true, "verify every fetched byte (--noverify for pure speed runs)");
ABSL_FLAG(bool, tcp_baseline, true, "also measure a raw TCP stream between the pairs");
ABSL_FLAG(bool, node_per_protocol, false,
          "sweep: each protocol on its own store and manager (default: all on one node, get and pin forced per "
          "fetch, auto chosen by its manager)");
// A string, not absl::Duration: Debian's absl reads >8-byte flags with a fence TSan rejects.
ABSL_FLAG(std::string, fetch_timeout, "60s", "bound on one fetch (e.g. 20s, 500ms)");
ABSL_FLAG(std::string, transport, "tcp", "manager --transport: tcp | verbs | auto");
ABSL_FLAG(std::string, listen_host, "127.0.0.1", "this rank's address for peers");
ABSL_FLAG(std::string, node_name, "rank{rank}",
          "each rank's manager --node-name ({rank}, {host} = short hostname); the tuner's peer lines use it");
ABSL_FLAG(std::string, rdma_device, "", "manager --rdma-device");
ABSL_FLAG(std::string, redis, "", "Redis HOST:PORT");
ABSL_FLAG(bool, start_redis, false, "rank 0 starts redis-server and broadcasts its address");
ABSL_FLAG(std::string, secret_file, "", "shared peer secret (default: rank 0 makes one)");
ABSL_FLAG(std::string, auto_threshold, "auto", "manager --pin-threshold for protocol auto (auto or a FILE)");
ABSL_FLAG(std::string, store_memory, "0", "store arena size (0 = enough for the run)");
ABSL_FLAG(bool, attach, false, "use a running store and manager (--store-socket, --manager-socket)");
ABSL_FLAG(std::string, store_socket, "", "attach: this rank's store socket");
ABSL_FLAG(std::string, manager_socket, "", "attach: this rank's manager client socket");
ABSL_FLAG(std::string, csv, "rplasma-bench-mpi.csv", "CSV output (rank 0)");
ABSL_FLAG(std::string, png, "rplasma-bench-mpi.png", "PNG plot (rank 0; empty = none)");
ABSL_FLAG(std::string, plot_script, "", "gnuplot script (default: plot_bench.gp next to the binary)");
ABSL_FLAG(bool, per_rank_rows, true, "CSV rows per rank besides the aggregate");
ABSL_FLAG(bool, tune, false, "tune the pin threshold and write --tune-out");
ABSL_FLAG(std::string, tune_out, "rplasma-threshold.txt", "threshold file the tuner writes");
ABSL_FLAG(std::string, tune_min_size, "1KiB", "smallest tuner size");
ABSL_FLAG(std::string, tune_max_size, "32MiB", "largest tuner size");

namespace {

absl::Status ParseOptions(const rplasma::CommandLine& command_line, rplasma::bench::BenchMpiOptions* o) {
  using namespace rplasma::bench;
  auto set = [](auto status_or, auto* out) {
    if (!status_or.ok()) return status_or.status();
    *out = *status_or;
    return absl::OkStatus();
  };
  // A list flag's error, named as the flag was typed.
  auto list = [&](absl::string_view flag, absl::string_view text) -> absl::StatusOr<std::vector<uint64_t>> {
    absl::StatusOr<std::vector<uint64_t>> values = ParseSizeList(text);
    if (!values.ok()) {
      return rplasma::MakeError(rplasma::ErrorCode::kInvalidArgument,
                                absl::StrCat(command_line.Spelling(flag), ": ", values.status().message()));
    }
    return values;
  };
  RETURN_IF_ERROR(set(ParsePatterns(absl::GetFlag(FLAGS_patterns)), &o->patterns));
  RETURN_IF_ERROR(set(ParseProtocols(absl::GetFlag(FLAGS_protocols)), &o->protocols));
  if (!absl::GetFlag(FLAGS_sizes).empty()) RETURN_IF_ERROR(set(list("sizes", absl::GetFlag(FLAGS_sizes)), &o->sizes));
  RETURN_IF_ERROR(set(command_line.ByteSize("min_size", absl::GetFlag(FLAGS_min_size)), &o->min_size));
  RETURN_IF_ERROR(set(command_line.ByteSize("max_size", absl::GetFlag(FLAGS_max_size)), &o->max_size));
  std::vector<uint64_t> concurrency;
  RETURN_IF_ERROR(set(list("concurrency", absl::GetFlag(FLAGS_concurrency)), &concurrency));
  o->concurrency.assign(concurrency.begin(), concurrency.end());
  o->batch = absl::GetFlag(FLAGS_batch);
  o->warmup = absl::GetFlag(FLAGS_warmup);
  o->repeat = absl::GetFlag(FLAGS_repeat);
  o->verify = absl::GetFlag(FLAGS_verify);
  o->tcp_baseline = absl::GetFlag(FLAGS_tcp_baseline);
  o->node_per_protocol = absl::GetFlag(FLAGS_node_per_protocol);
  RETURN_IF_ERROR(set(command_line.Duration("fetch_timeout", absl::GetFlag(FLAGS_fetch_timeout)), &o->fetch_timeout));
  o->transport = absl::GetFlag(FLAGS_transport);
  o->listen_host = absl::GetFlag(FLAGS_listen_host);
  o->node_name = absl::GetFlag(FLAGS_node_name);
  o->rdma_device = absl::GetFlag(FLAGS_rdma_device);
  o->redis = absl::GetFlag(FLAGS_redis);
  o->start_redis = absl::GetFlag(FLAGS_start_redis);
  o->secret_file = absl::GetFlag(FLAGS_secret_file);
  o->auto_threshold = absl::GetFlag(FLAGS_auto_threshold);
  RETURN_IF_ERROR(set(command_line.ByteSize("store_memory", absl::GetFlag(FLAGS_store_memory)), &o->store_memory));
  o->attach = absl::GetFlag(FLAGS_attach);
  o->store_socket = absl::GetFlag(FLAGS_store_socket);
  o->manager_socket = absl::GetFlag(FLAGS_manager_socket);
  o->csv = absl::GetFlag(FLAGS_csv);
  o->png = absl::GetFlag(FLAGS_png);
  o->plot_script = absl::GetFlag(FLAGS_plot_script);
  o->per_rank_rows = absl::GetFlag(FLAGS_per_rank_rows);
  o->tune = absl::GetFlag(FLAGS_tune);
  o->tune_out = absl::GetFlag(FLAGS_tune_out);
  RETURN_IF_ERROR(set(command_line.ByteSize("tune_min_size", absl::GetFlag(FLAGS_tune_min_size)), &o->tune_min_size));
  RETURN_IF_ERROR(set(command_line.ByteSize("tune_max_size", absl::GetFlag(FLAGS_tune_max_size)), &o->tune_max_size));
  return o->Validate();
}

}  // namespace

int main(int argc, char** argv) {
  signal(SIGPIPE, SIG_IGN);
  // Flags first: --help, --version and a bad flag need no MPI (Open MPI leaves argv alone).
  const rplasma::CommandLine command_line = rplasma::CommandLine::ParseOrExit(
      argc, argv, "rplasma-bench-mpi", "mpirun -np N rplasma-bench-mpi [--start-redis | --redis HOST:PORT] [...]");
  // Options too: a bad value is refused before MPI starts. Every rank sees the same error; the
  // first (or a run without mpirun) says it.
  rplasma::bench::BenchMpiOptions options;
  absl::Status status = ParseOptions(command_line, &options);
  if (!status.ok()) {
    const char* rank = std::getenv("OMPI_COMM_WORLD_RANK");
    if (rank == nullptr || std::string_view(rank) == "0") {
      std::fprintf(stderr, "rplasma-bench-mpi: %s\n", std::string(status.message()).c_str());
    }
    return 2;
  }
  std::unique_ptr<rplasma::bench::MpiWorld> world = rplasma::bench::MpiWorld::Init(&argc, &argv);
  int code = 0;
  {
    rplasma::bench::BenchMpi bench(*world, options);
    status = bench.Run();
    if (!status.ok()) {
      if (world->root()) std::fprintf(stderr, "rplasma-bench-mpi: %s\n", std::string(status.message()).c_str());
      code = 1;
    }
  }
  return code;
}
