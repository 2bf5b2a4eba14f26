#include "protocol/metrics/metrics_exporter.h"

#include "absl/strings/str_cat.h"

#include "protocol/base/logging.h"
#include "protocol/base/status.h"

namespace rplasma {

absl::Status MetricsExportOptions::Validate() const {
  if (address.empty()) return MakeError(ErrorCode::kInvalidArgument, "--metrics-address is empty");
  if (file_interval <= absl::ZeroDuration()) {
    return MakeError(ErrorCode::kInvalidArgument, absl::StrCat("--metrics-file-interval must be positive (got ",
                                                               absl::FormatDuration(file_interval), ")"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<MetricsExporter>> MetricsExporter::Start(const MetricsExportOptions& options,
                                                                        RenderFn render, absl::string_view who) {
  if (!options.enabled()) return nullptr;
  RETURN_IF_ERROR(options.Validate());
  std::unique_ptr<MetricsExporter> exporter(new MetricsExporter());
  if (!options.file.empty()) {
    absl::StatusOr<std::unique_ptr<MetricsFileWriter>> file =
        MetricsFileWriter::Start(options.file, options.file_interval, render);
    if (!file.ok())
      return MakeError(ErrorCodeOf(file.status()), absl::StrCat("--metrics-file: ", file.status().message()));
    exporter->file_ = *std::move(file);
    LOG(INFO) << who << ": metrics written to " << options.file << " every "
              << absl::FormatDuration(options.file_interval);
  }
  if (options.port != 0) {
    MetricsHttpServerOptions server_options;
    server_options.address = options.address;
    server_options.port = options.port;
    absl::StatusOr<std::unique_ptr<MetricsHttpServer>> server = MetricsHttpServer::Start(server_options, render);
    if (!server.ok()) {
      return MakeError(ErrorCodeOf(server.status()), absl::StrCat("--metrics-port: ", server.status().message()));
    }
    exporter->server_ = *std::move(server);
    LOG(INFO) << who << ": metrics at http://" << (options.address.find(':') != std::string::npos ? "[" : "")
              << options.address << (options.address.find(':') != std::string::npos ? "]" : "") << ":"
              << exporter->server_->port() << "/metrics";
  }
  return exporter;
}

}  // namespace rplasma
