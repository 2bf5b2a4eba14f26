#include "bench-mpi/mpi/result_table.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"

#include "bench-mpi/common/csv_writer.h"
#include "bench-mpi/common/size_units.h"
#include "bench-mpi/launch/child_process.h"
#include "protocol/base/status.h"

extern char** environ;

namespace rplasma::bench {
namespace {

ResultRow WithStats(ResultRow row, const LatencySummary& latency, int64_t fetches, double bytes, double wall_s) {
  row.ops_per_s = wall_s > 0 ? fetches / wall_s : 0;
  row.gb_per_s = wall_s > 0 ? bytes / wall_s / 1e9 : 0;
  row.mean_us = latency.mean_us;
  row.p50_us = latency.p50_us;
  row.p95_us = latency.p95_us;
  row.p99_us = latency.p99_us;
  return row;
}

}  // namespace

std::vector<ResultRow> SummarizeRanks(const MpiWorld& world, const RankPhaseResult& mine, const ResultRow& labels,
                                      bool per_rank_rows) {
  const LatencySummary own = mine.Summarize();
  const std::string line = absl::StrFormat("%d %d %.17g %.9g %.9g %.9g %.9g", mine.fetches, mine.bytes, mine.wall_s,
                                           own.mean_us, own.p50_us, own.p95_us, own.p99_us);
  const std::vector<std::string> lines = world.AllGather(line);
  const double max_wall = world.MaxAll(mine.wall_s);
  std::vector<ResultRow> rows;
  // Every sample of every rank, for the aggregate percentiles.
  std::vector<int64_t> all = world.GatherToRoot(mine.samples_ns);
  if (!world.root()) return rows;
  int64_t fetches = 0;
  double bytes = 0;
  for (int r = 0; r < world.size(); ++r) {
    std::vector<std::string> f = absl::StrSplit(lines[r], ' ');
    int64_t n = 0;
    double b = 0, wall = 0;
    LatencySummary s;
    if (f.size() != 7 || !absl::SimpleAtoi(f[0], &n) || !absl::SimpleAtod(f[1], &b) || !absl::SimpleAtod(f[2], &wall) ||
        !absl::SimpleAtod(f[3], &s.mean_us) || !absl::SimpleAtod(f[4], &s.p50_us) ||
        !absl::SimpleAtod(f[5], &s.p95_us) || !absl::SimpleAtod(f[6], &s.p99_us)) {
      continue;
    }
    if (n == 0) continue;
    fetches += n;
    bytes += b;
    if (per_rank_rows) {
      ResultRow row = labels;
      row.rank = r;
      rows.push_back(WithStats(row, s, n, b, wall));
    }
  }
  LatencyRecorder recorder;
  recorder.Reserve(all.size());
  for (int64_t ns : all) recorder.Record(ns);
  ResultRow aggregate = labels;
  aggregate.rank = -1;
  rows.push_back(WithStats(aggregate, recorder.Summarize(), fetches, bytes, max_wall));
  return rows;
}

std::vector<std::string> CsvExtraColumns() {
  return {"pattern", "ranks", "concurrency", "mean_us", "p95_us", "rank", "aggregate", "auto_vs_best"};
}

absl::Status WriteCsv(const std::string& path, const std::vector<ResultRow>& rows) {
  ASSIGN_OR_RETURN(std::unique_ptr<CsvWriter> csv, CsvWriter::Open(path, CsvExtraColumns()));
  for (const ResultRow& r : rows) {
    CsvRow row;
    row.benchmark = r.benchmark;
    row.system = r.system;
    row.transport = r.transport;
    row.protocol = r.protocol;
    row.object_size = r.object_size;
    row.ops_per_s = r.ops_per_s;
    row.gb_per_s = r.gb_per_s;
    row.p50_us = r.p50_us;
    row.p99_us = r.p99_us;
    row.extra = {r.pattern,
                 absl::StrCat(r.ranks),
                 absl::StrCat(r.concurrency),
                 absl::StrFormat("%.3f", r.mean_us),
                 absl::StrFormat("%.3f", r.p95_us),
                 r.rank < 0 ? "all" : absl::StrCat(r.rank),
                 r.rank < 0 ? "1" : "0",
                 r.auto_vs_best >= 0 ? absl::StrFormat("%.4f", r.auto_vs_best) : ""};
    RETURN_IF_ERROR(csv->Write(row));
  }
  return absl::OkStatus();
}

void PrintTable(const std::vector<ResultRow>& rows) {
  std::printf("%-10s %-10s %-9s %-5s %9s %3s %10s %9s %10s %10s %10s %10s\n", "benchmark", "system", "pattern", "proto",
              "size", "C", "ops/s", "GB/s", "mean_us", "p50_us", "p95_us", "p99_us");
  for (const ResultRow& r : rows) {
    if (r.rank >= 0) continue;
    std::printf("%-10s %-10s %-9s %-5s %9s %3d %10.0f %9.3f %10.1f %10.1f %10.1f %10.1f\n", r.benchmark.c_str(),
                r.system.c_str(), r.pattern.c_str(), r.protocol.c_str(), FormatByteSize(r.object_size).c_str(),
                r.concurrency, r.ops_per_s, r.gb_per_s, r.mean_us, r.p50_us, r.p95_us, r.p99_us);
  }
  std::fflush(stdout);
}

absl::Status PlotCsv(const std::string& script, const std::string& csv, const std::string& png) {
  std::vector<std::string> args = {"gnuplot", "-e", absl::StrCat("csv='", csv, "'; png='", png, "'"), script};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  if (posix_spawnp(&pid, "gnuplot", nullptr, nullptr, argv.data(), environ) != 0) {
    return MakeError(ErrorCode::kUnavailable, "gnuplot: not installed (apt-get install gnuplot-nox)");
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return MakeError(ErrorCode::kUnavailable, absl::StrCat("gnuplot ", script, " failed (status ", status, ")"));
  }
  if (access(png.c_str(), R_OK) != 0) return MakeError(ErrorCode::kUnavailable, absl::StrCat("gnuplot wrote no ", png));
  return absl::OkStatus();
}

}  // namespace rplasma::bench
