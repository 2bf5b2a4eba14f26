// CsvWriter: benchmark results as CSV with the columns every rplasma benchmark shares
// (DESIGN.md, "Interface contract"):
//
//   benchmark,system,transport,protocol,object_size,ops_per_s,gb_per_s,p50_us,p99_us[,extra...]
//
// The header row is written when the file is opened; each row is flushed as it is written so a
// benchmark that dies half-way leaves every finished row on disk. Fields containing a comma, quote
// or newline are quoted (RFC 4180). Not thread-safe.
#ifndef RPLASMA_BENCH_MPI_COMMON_CSV_WRITER_H_
#define RPLASMA_BENCH_MPI_COMMON_CSV_WRITER_H_

#include <array>
#include <cstdint>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace rplasma::bench {

inline constexpr std::array<absl::string_view, 9> kCsvColumns = {
    "benchmark", "system", "transport", "protocol", "object_size", "ops_per_s", "gb_per_s", "p50_us", "p99_us"};

struct CsvRow {
  std::string benchmark;  // what was measured: "get", "create_write_seal", "memcpy", ...
  std::string system;     // "rplasma" or the peer: "unix_socket", "memcpy", "redis"
  std::string transport;  // "unix", "tcp", "memory", "verbs"
  std::string protocol;   // "store", "resp", "send", "read", "-"
  uint64_t object_size = 0;
  double ops_per_s = 0;
  double gb_per_s = 0;  // 1 GB = 1e9 bytes
  double p50_us = 0;
  double p99_us = 0;
  // Values of the extra columns, in the order given to Open(); missing trailing values are empty.
  std::vector<std::string> extra;
};

// The header line (no newline) for `extra_columns`.
std::string CsvHeader(const std::vector<std::string>& extra_columns);
// One row as a CSV line (no newline).
std::string FormatCsvRow(const CsvRow& row, size_t extra_columns);
// A field quoted if it needs to be.
std::string CsvField(absl::string_view value);

class CsvWriter {
 public:
  // Creates/truncates `path` and writes the header.
  static absl::StatusOr<std::unique_ptr<CsvWriter>> Open(const std::string& path,
                                                         std::vector<std::string> extra_columns = {});
  // kInvalidArgument if the row has more extra values than there are extra columns.
  absl::Status Write(const CsvRow& row);
  const std::string& path() const { return path_; }

 private:
  CsvWriter(std::string path, std::vector<std::string> extra_columns, std::ofstream out)
      : path_(std::move(path)), extra_columns_(std::move(extra_columns)), out_(std::move(out)) {}

  std::string path_;
  std::vector<std::string> extra_columns_;
  std::ofstream out_;
};

}  // namespace rplasma::bench

#endif  // RPLASMA_BENCH_MPI_COMMON_CSV_WRITER_H_
