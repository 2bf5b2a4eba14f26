#include "protocol/command_line/metrics_flags.h"

#include <cstdint>
#include <string>

#include "absl/flags/flag.h"
#include "absl/time/time.h"

#include "protocol/base/status.h"

namespace {
const rplasma::MetricsExportOptions kDefaults;
}  // namespace

ABSL_FLAG(int32_t, metrics_port, kDefaults.port, "serve Prometheus metrics at http://ADDRESS:PORT/metrics; 0 = off");
ABSL_FLAG(std::string, metrics_address, kDefaults.address, "address the metrics endpoint binds (numeric IPv4 or IPv6)");
ABSL_FLAG(std::string, metrics_file, kDefaults.file,
          "also write the metrics to this file (through a rename) for node_exporter's textfile collector; '' = off");
ABSL_FLAG(absl::Duration, metrics_file_interval, kDefaults.file_interval, "how often --metrics-file is rewritten");

namespace rplasma {

absl::StatusOr<MetricsExportOptions> MetricsExportOptionsFromFlags() {
  const int32_t port = absl::GetFlag(FLAGS_metrics_port);
  if (port < 0 || port > 65535) return MakeError(ErrorCode::kInvalidArgument, "--metrics-port must be 0..65535");
  MetricsExportOptions options;
  options.port = static_cast<uint16_t>(port);
  options.address = absl::GetFlag(FLAGS_metrics_address);
  options.file = absl::GetFlag(FLAGS_metrics_file);
  options.file_interval = absl::GetFlag(FLAGS_metrics_file_interval);
  return options;
}

}  // namespace rplasma
