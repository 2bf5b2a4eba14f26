#include "protocol/metrics/counter_set_text.h"

namespace rplasma {

void AppendCounters(PrometheusText& text, const CounterSnapshot& snapshot, const MetricLabels& labels) {
  for (const CounterSnapshot::Entry& e : snapshot.entries()) {
    if (e.metric.empty()) continue;
    text.Family(e.metric, e.type, e.help);
    text.Sample(e.metric, labels, e.value);
  }
}

}  // namespace rplasma
