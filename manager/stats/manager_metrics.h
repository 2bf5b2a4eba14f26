// RenderManagerMetrics: rplasma-manager's Prometheus text exposition (docs/METRICS.md) from the
// same sources as its stats JSON: ManagerStats (fetch outcomes, per-protocol transfers and
// latency histograms), the transport's counters and the peer service's.
//
// Transport bytes are also given as a NIC counter would show them: received = message bytes in
// plus, on verbs, the bytes this node pulled with RDMA READ (they bypass the message path; over
// tcp a read's bytes already arrive as messages). Bytes a peer pulled from this node with RDMA
// READ never pass through this process and are not in the sent figure.
//
// Thread-safety: a pure function of its inputs; ManagerStats may be updated concurrently.
#ifndef RPLASMA_MANAGER_STATS_MANAGER_METRICS_H_
#define RPLASMA_MANAGER_STATS_MANAGER_METRICS_H_

#include <cstdint>
#include <string>

#include "manager/stats/manager_stats.h"
#include "protocol/base/counter_set.h"

namespace rplasma::manager {

struct ManagerMetricsSources {
  const ManagerStats* stats = nullptr;  // REQUIRES: not null
  std::string node_id;
  std::string transport;            // "tcp" or "verbs": the transport label
  CounterSnapshot transport_stats;  // TransportCounters
  CounterSnapshot peer_service;     // PeerService's counters
  uint64_t known_peers = 0;         // peers with a threshold in force (fetched from at least once)
  // Each such peer's threshold and how often it moved (the threshold policy's Explain).
  struct PeerThreshold {
    std::string peer;
    std::string objects;  // its concurrency class: objects per transfer ("1", "2-16", ...)
    uint64_t bytes = 0;
    uint64_t flips = 0;
    uint64_t link_changes = 0;
  };
  std::vector<PeerThreshold> peer_thresholds;
};

std::string RenderManagerMetrics(const ManagerMetricsSources& sources);

}  // namespace rplasma::manager

#endif  // RPLASMA_MANAGER_STATS_MANAGER_METRICS_H_
