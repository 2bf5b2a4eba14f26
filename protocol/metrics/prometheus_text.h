// PrometheusText: one exposition in the Prometheus text format (version 0.0.4), the document a
// GET /metrics answers and node_exporter's textfile collector reads.
//
//   PrometheusText text;
//   text.Family("rplasma_store_requests_total", MetricType::kCounter, "Requests handled, by kind.");
//   text.Sample("rplasma_store_requests_total", {{"request", "get"}}, 12);
//   text.Histogram("rplasma_manager_fetch_seconds", {{"protocol", "get"}}, histogram.Snapshot());
//   std::string body = text.str();
//
// Family writes the HELP and TYPE lines; the samples of that family follow it. Label values and
// HELP text are escaped (backslash, double quote in label values, newline), so any bytes may go
// into them (peer names, paths). A histogram writes its cumulative _bucket lines (le="..."), the
// le="+Inf" bucket, then _sum and _count. Values: integers exactly; doubles shortest round-trip,
// non-finite ones as +Inf, -Inf, NaN.
//
// REQUIRES: metric and label names match [a-zA-Z_:][a-zA-Z0-9_:]* and [a-zA-Z_][a-zA-Z0-9_]*
// (they come from code: CHECKed); a family's samples follow its Family line.
// Thread-safety: a value type; not thread-safe.
#ifndef RPLASMA_PROTOCOL_METRICS_PROMETHEUS_TEXT_H_
#define RPLASMA_PROTOCOL_METRICS_PROMETHEUS_TEXT_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"

#include "protocol/base/metric_type.h"
#include "protocol/metrics/latency_histogram.h"

namespace rplasma {

// name -> value pairs, written in this order.
using MetricLabels = std::vector<std::pair<absl::string_view, std::string>>;

// The Content-Type of a text exposition.
inline constexpr char kPrometheusContentType[] = "text/plain; version=0.0.4; charset=utf-8";

class PrometheusText {
 public:
  void Family(absl::string_view name, MetricType type, absl::string_view help);
  void Sample(absl::string_view name, const MetricLabels& labels, uint64_t value);
  void Sample(absl::string_view name, const MetricLabels& labels, double value);
  // The samples of a histogram family `name` (declared with Family(name, kHistogram, ...)).
  void Histogram(absl::string_view name, const MetricLabels& labels, const HistogramSnapshot& histogram);
  // Family then one unlabelled sample: the common case of a single counter or gauge.
  void Single(absl::string_view name, MetricType type, absl::string_view help, uint64_t value);

  const std::string& str() const { return text_; }

 private:
  // `name{labels}` (no braces without labels), with `extra` (e.g. le) appended to the labels.
  void AppendSeries(absl::string_view name, const MetricLabels& labels, absl::string_view extra_name = {},
                    absl::string_view extra_value = {});
  std::string text_;
};

// A label value or HELP text escaped for the text format: \ -> \\, newline -> \n, and in label
// values " -> \".
std::string EscapeLabelValue(absl::string_view value);
std::string EscapeHelp(absl::string_view help);
// A double as the text format writes it: shortest round-trip, or +Inf / -Inf / NaN.
std::string FormatMetricValue(double value);

}  // namespace rplasma

#endif  // RPLASMA_PROTOCOL_METRICS_PROMETHEUS_TEXT_H_
