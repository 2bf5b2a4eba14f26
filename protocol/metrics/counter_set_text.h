// AppendCounters: a counter set renders itself. Every entry of a snapshot that carries a
// Prometheus metric (protocol/base/counter_set.h) becomes one family, in declaration order: its
// HELP and TYPE lines and one sample with `labels`. Entries without a metric (JSON only) are
// skipped, so a set may hold values that a hand-written, labelled family shows instead.
//
//   struct Counters : CounterSet {
//     Counter errors{this, "errors", "rplasma_x_errors_total", "Failed calls."};
//     Counter retries{this, "retries"};  // JSON only
//   };
//   AppendCounters(text, counters.Snapshot(), {{"transport", "tcp"}});
//   // # HELP rplasma_x_errors_total Failed calls.
//   // # TYPE rplasma_x_errors_total counter
//   // rplasma_x_errors_total{transport="tcp"} 0
//
// Thread-safety: as PrometheusText (a value type).
#ifndef RPLASMA_PROTOCOL_METRICS_COUNTER_SET_TEXT_H_
#define RPLASMA_PROTOCOL_METRICS_COUNTER_SET_TEXT_H_

#include "protocol/base/counter_set.h"
#include "protocol/metrics/prometheus_text.h"

namespace rplasma {

void AppendCounters(PrometheusText& text, const CounterSnapshot& snapshot, const MetricLabels& labels = {});

}  // namespace rplasma

#endif  // RPLASMA_PROTOCOL_METRICS_COUNTER_SET_TEXT_H_
