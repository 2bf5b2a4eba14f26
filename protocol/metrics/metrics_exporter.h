// MetricsExporter: how a daemon offers its Prometheus text exposition, as its --metrics-* flags
// ask: a GET /metrics endpoint (MetricsHttpServer), a file for node_exporter's textfile collector
// (MetricsFileWriter), both, or neither (the default: nothing is opened).
//
// Thread-safety: Start and destruction from one thread; `render` is called from the exporter's
// threads and must be thread-safe. Destroying the exporter joins them, so `render` may use objects
// that outlive it.
#ifndef RPLASMA_PROTOCOL_METRICS_METRICS_EXPORTER_H_
#define RPLASMA_PROTOCOL_METRICS_METRICS_EXPORTER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

#include "protocol/metrics/metrics_file_writer.h"
#include "protocol/metrics/metrics_http_server.h"

namespace rplasma {

struct MetricsExportOptions {
  // --metrics-port: the TCP port of GET /metrics; 0 = no endpoint.
  uint16_t port = 0;
  // --metrics-address: the address the endpoint binds (numeric IPv4/IPv6). Loopback by default:
  // exposing it is a decision.
  std::string address = "127.0.0.1";
  // --metrics-file: rewritten every file_interval (through a rename); "" = no file.
  std::string file;
  absl::Duration file_interval = absl::Seconds(15);

  bool enabled() const { return port != 0 || !file.empty(); }
  absl::Status Validate() const;  // kInvalidArgument: a non-positive interval, an empty address
};

class MetricsExporter {
 public:
  using RenderFn = std::function<std::string()>;

  // Null when !options.enabled(). `who` names the daemon in the log line saying where metrics are.
  static absl::StatusOr<std::unique_ptr<MetricsExporter>> Start(const MetricsExportOptions& options, RenderFn render,
                                                                absl::string_view who);
  ~MetricsExporter() = default;  // stops the server, then writes the file a last time

  // The bound port of the endpoint (0 without one).
  uint16_t port() const { return server_ == nullptr ? 0 : server_->port(); }

 private:
  MetricsExporter() = default;
  std::unique_ptr<MetricsFileWriter> file_;
  std::unique_ptr<MetricsHttpServer> server_;  // last: stopped first
};

}  // namespace rplasma

#endif  // RPLASMA_PROTOCOL_METRICS_METRICS_EXPORTER_H_
