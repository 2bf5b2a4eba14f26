// The --metrics-* flags every daemon takes (docs/METRICS.md): --metrics-port, --metrics-address,
// --metrics-file and --metrics-file-interval, defined once here with MetricsExportOptions'
// defaults. A binary has them when it calls MetricsExportOptionsFromFlags (linking this file).
#ifndef RPLASMA_PROTOCOL_COMMAND_LINE_METRICS_FLAGS_H_
#define RPLASMA_PROTOCOL_COMMAND_LINE_METRICS_FLAGS_H_

#include "absl/status/statusor.h"

#include "protocol/metrics/metrics_exporter.h"

namespace rplasma {

// The options the parsed flags ask for. kInvalidArgument naming the flag for a port outside
// 0..65535; the rest is MetricsExportOptions::Validate's.
absl::StatusOr<MetricsExportOptions> MetricsExportOptionsFromFlags();

}  // namespace rplasma

#endif  // RPLASMA_PROTOCOL_COMMAND_LINE_METRICS_FLAGS_H_
