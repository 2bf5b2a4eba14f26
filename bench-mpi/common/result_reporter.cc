#include "bench-mpi/common/result_reporter.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

#include "bench-mpi/common/size_units.h"
#include "protocol/base/status.h"

namespace rplasma::bench {
namespace {

std::string Detail(const std::map<std::string, double>& metrics) {
  std::string out;
  for (const auto& [name, value] : metrics) {
    absl::StrAppend(&out, out.empty() ? "" : ";", name, "=", absl::StrFormat("%.6g", value));
  }
  return out;
}

}  // namespace

double BenchResult::Metric(const std::string& name, double fallback) const {
  auto it = metrics.find(name);
  return it == metrics.end() ? fallback : it->second;
}

BenchResult MakeResult(std::string benchmark, std::string system, std::string transport, std::string protocol,
                       uint64_t object_size, const LatencySummary& latency) {
  BenchResult r;
  r.benchmark = std::move(benchmark);
  r.system = std::move(system);
  r.transport = std::move(transport);
  r.protocol = std::move(protocol);
  r.object_size = object_size;
  r.latency = latency;
  r.ops_per_s = latency.ops_per_s();
  r.gb_per_s = r.ops_per_s * static_cast<double>(object_size) / 1e9;
  return r;
}

absl::StatusOr<std::unique_ptr<ResultReporter>> ResultReporter::Create(const std::string& csv_path,
                                                                       std::ostream* table) {
  std::unique_ptr<CsvWriter> csv;
  if (!csv_path.empty()) {
    ASSIGN_OR_RETURN(csv, CsvWriter::Open(csv_path, {"mean_us", "p95_us", "iterations", "detail"}));
  }
  return std::unique_ptr<ResultReporter>(new ResultReporter(std::move(csv), table));
}

void ResultReporter::PrintHeader() {
  *table_ << absl::StrFormat("%-20s %-12s %-6s %9s %12s %9s %10s %10s %10s %8s  %s\n", "benchmark", "system", "via",
                             "size", "ops/s", "GB/s", "mean_us", "p50_us", "p99_us", "n", "detail");
  header_printed_ = true;
}

absl::Status ResultReporter::Add(BenchResult r) {
  for (const auto& [name, value] : tags_) r.metrics.emplace(name, value);
  const std::string detail = Detail(r.metrics);
  if (table_ != nullptr) {
    if (!header_printed_) PrintHeader();
    *table_ << absl::StrFormat("%-20s %-12s %-6s %9s %12.0f %9.3f %10.2f %10.2f %10.2f %8d  %s\n", r.benchmark,
                               r.system, r.transport, FormatByteSize(r.object_size), r.ops_per_s, r.gb_per_s,
                               r.latency.mean_us, r.latency.p50_us, r.latency.p99_us, r.latency.count, detail)
            << std::flush;
  }
  if (csv_ != nullptr) {
    CsvRow row{r.benchmark,
               r.system,
               r.transport,
               r.protocol,
               r.object_size,
               r.ops_per_s,
               r.gb_per_s,
               r.latency.p50_us,
               r.latency.p99_us,
               {absl::StrFormat("%.3f", r.latency.mean_us), absl::StrFormat("%.3f", r.latency.p95_us),
                absl::StrCat(r.latency.count), detail}};
    RETURN_IF_ERROR(csv_->Write(row));
  }
  results_.push_back(std::move(r));
  return absl::OkStatus();
}

const BenchResult* ResultReporter::Find(const std::string& benchmark, const std::string& system,
                                        uint64_t object_size) const {
  for (const BenchResult& r : results_) {
    if (r.benchmark == benchmark && r.system == system && r.object_size == object_size) return &r;
  }
  return nullptr;
}

}  // namespace rplasma::bench
