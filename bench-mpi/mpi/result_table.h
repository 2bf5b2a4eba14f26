// ResultRow and what rank 0 does with the rows: a table on stdout, the CSV (DESIGN.md's columns
// plus pattern, ranks, concurrency, mean_us, p95_us, rank, aggregate, auto_vs_best) and the PNG
// plot (gnuplot).
// Also SummarizeRanks, which turns every rank's RankPhaseResult into per-rank and aggregate rows.
#ifndef RPLASMA_BENCH_MPI_MPI_RESULT_TABLE_H_
#define RPLASMA_BENCH_MPI_MPI_RESULT_TABLE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"

#include "bench-mpi/mpi/fetch_phase.h"
#include "bench-mpi/mpi/mpi_world.h"

namespace rplasma::bench {

struct ResultRow {
  std::string benchmark = "fetch";  // "fetch", "tune"
  std::string system = "rplasma";   // or the peer: "tcp_stream"
  std::string transport;            // "tcp", "verbs"
  std::string protocol;             // "get", "pin", "auto", "-"
  std::string pattern;
  uint64_t object_size = 0;
  int ranks = 0;
  int concurrency = 1;
  int rank = -1;  // -1 = aggregate over all fetching ranks
  double ops_per_s = 0;
  double gb_per_s = 0;
  double mean_us = 0, p50_us = 0, p95_us = 0, p99_us = 0;
  // On the aggregate `auto` row of a point where get and/or pin ran alongside (interleaved): the
  // sweep's PairedAutoVsBest, the tuner's check min(p50 get, p50 pin) / p50 auto (auto_ratio.h).
  // -1 = none (an empty CSV cell).
  double auto_vs_best = -1;
};

// Collective: every rank's result -> rows (on rank 0; other ranks get {}). Aggregate GB/s is all
// bytes over the slowest rank's wall time; aggregate latency percentiles are over every sample.
std::vector<ResultRow> SummarizeRanks(const MpiWorld& world, const RankPhaseResult& mine, const ResultRow& labels,
                                      bool per_rank_rows);

// The CSV's extra columns after DESIGN.md's nine.
std::vector<std::string> CsvExtraColumns();
absl::Status WriteCsv(const std::string& path, const std::vector<ResultRow>& rows);
// Aggregate rows as an aligned table.
void PrintTable(const std::vector<ResultRow>& rows);
// Runs gnuplot on `script` with the CSV, writing `png` (plot_bench.gp: per pattern, GB/s and p50/p99
// by size of each protocol and the raw peer; auto / best fixed by size). kUnavailable if gnuplot
// is missing or fails.
absl::Status PlotCsv(const std::string& script, const std::string& csv, const std::string& png);

}  // namespace rplasma::bench

#endif  // RPLASMA_BENCH_MPI_MPI_RESULT_TABLE_H_
