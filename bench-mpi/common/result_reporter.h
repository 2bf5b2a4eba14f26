// BenchResult and ResultReporter: one measured (benchmark, system, size) and where it goes — a
// human table on a stream, a CSV file (the common columns plus mean_us, p95_us, iterations,
// detail), and an in-memory list the end-of-run summary reads. Not thread-safe.
#ifndef RPLASMA_BENCH_MPI_COMMON_RESULT_REPORTER_H_
#define RPLASMA_BENCH_MPI_COMMON_RESULT_REPORTER_H_

#include <cstdint>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include "bench-mpi/common/csv_writer.h"
#include "bench-mpi/common/latency_recorder.h"

namespace rplasma::bench {

struct BenchResult {
  std::string benchmark;  // "get", "create_write_seal", "ping_pong", "set", ...
  std::string system;     // "rplasma", "unix_socket", "memcpy", "redis", "tcp_stream"
  std::string transport;  // "unix", "tcp", "memory"
  std::string protocol;   // "store", "resp", "raw", "-"
  uint64_t object_size = 0;
  LatencySummary latency;  // per operation (per id for batches)
  double ops_per_s = 0;
  double gb_per_s = 0;
  std::map<std::string, double> metrics;  // extra named numbers (CSV "detail": k=v;k=v)

  // metrics[name], or `fallback` when absent.
  double Metric(const std::string& name, double fallback = 0) const;
};

// A result whose throughput follows from its latency: ops = count / total time, bytes = size each.
BenchResult MakeResult(std::string benchmark, std::string system, std::string transport, std::string protocol,
                       uint64_t object_size, const LatencySummary& latency);

class ResultReporter {
 public:
  // `csv_path` "" writes no CSV; `table` may be null (no table).
  static absl::StatusOr<std::unique_ptr<ResultReporter>> Create(const std::string& csv_path, std::ostream* table);
  absl::Status Add(BenchResult result);
  // Every result added from now on carries metrics[name] = value (e.g. "round" with --rounds).
  void SetTag(const std::string& name, double value) { tags_[name] = value; }
  const std::vector<BenchResult>& results() const { return results_; }
  // The first result with these keys; null if none.
  const BenchResult* Find(const std::string& benchmark, const std::string& system, uint64_t object_size) const;

 private:
  ResultReporter(std::unique_ptr<CsvWriter> csv, std::ostream* table) : csv_(std::move(csv)), table_(table) {}
  void PrintHeader();

  std::unique_ptr<CsvWriter> csv_;
  std::ostream* table_;
  bool header_printed_ = false;
  std::vector<BenchResult> results_;
  std::map<std::string, double> tags_;
};

}  // namespace rplasma::bench

#endif  // RPLASMA_BENCH_MPI_COMMON_RESULT_REPORTER_H_
