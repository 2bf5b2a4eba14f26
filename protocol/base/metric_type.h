// MetricType: the Prometheus type of a metric. A counter set's members carry one (counter_set.h);
// the text format writes it (protocol/metrics/prometheus_text.h).
#ifndef RPLASMA_PROTOCOL_BASE_METRIC_TYPE_H_
#define RPLASMA_PROTOCOL_BASE_METRIC_TYPE_H_

namespace rplasma {

enum class MetricType { kCounter, kGauge, kHistogram };

}  // namespace rplasma

#endif  // RPLASMA_PROTOCOL_BASE_METRIC_TYPE_H_
