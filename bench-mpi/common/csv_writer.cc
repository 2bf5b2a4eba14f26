#include "bench-mpi/common/csv_writer.h"

#include <cerrno>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

#include "protocol/base/status.h"

namespace rplasma::bench {

std::string CsvField(absl::string_view value) {
  if (value.find_first_of(",\"\r\n") == absl::string_view::npos) return std::string(value);
  std::string quoted = "\"";
  for (char c : value) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  quoted += '"';
  return quoted;
}

std::string CsvHeader(const std::vector<std::string>& extra_columns) {
  std::vector<std::string> fields;
  for (absl::string_view column : kCsvColumns) fields.emplace_back(column);
  for (const std::string& column : extra_columns) fields.push_back(CsvField(column));
  return absl::StrJoin(fields, ",");
}

std::string FormatCsvRow(const CsvRow& row, size_t extra_columns) {
  std::string line = absl::StrFormat("%s,%s,%s,%s,%d,%.3f,%.6f,%.3f,%.3f", CsvField(row.benchmark),
                                     CsvField(row.system), CsvField(row.transport), CsvField(row.protocol),
                                     row.object_size, row.ops_per_s, row.gb_per_s, row.p50_us, row.p99_us);
  for (size_t i = 0; i < extra_columns; ++i) {
    line += ',';
    if (i < row.extra.size()) line += CsvField(row.extra[i]);
  }
  return line;
}

absl::StatusOr<std::unique_ptr<CsvWriter>> CsvWriter::Open(const std::string& path,
                                                           std::vector<std::string> extra_columns) {
  std::ofstream out(path, std::ios::out | std::ios::trunc);
  if (!out) return ErrnoError("open", path, errno);
  out << CsvHeader(extra_columns) << '\n';
  out.flush();
  if (!out) return ErrnoError("write", path, errno);
  return std::unique_ptr<CsvWriter>(new CsvWriter(path, std::move(extra_columns), std::move(out)));
}

absl::Status CsvWriter::Write(const CsvRow& row) {
  if (row.extra.size() > extra_columns_.size()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     absl::StrFormat("csv row for %s has %d extra values, file %s has %d extra columns", row.benchmark,
                                     row.extra.size(), path_, extra_columns_.size()));
  }
  out_ << FormatCsvRow(row, extra_columns_.size()) << '\n';
  out_.flush();
  if (!out_) return ErrnoError("write", path_, errno);
  return absl::OkStatus();
}

}  // namespace rplasma::bench
