#include "manager/stats/manager_metrics.h"

#include "protocol/metrics/counter_set_text.h"
#include "protocol/metrics/prometheus_text.h"

namespace rplasma::manager {
namespace {

// A value of a snapshot; 0 if the snapshot does not have it.
uint64_t Value(const CounterSnapshot& snapshot, const char* name) {
  return snapshot.contains(name) ? snapshot[name] : 0;
}

}  // namespace

// Every plain counter renders itself (its metric is declared with it: ManagerStats,
// TransportCounters, PeerService). Written here by hand are only the families a counter set
// cannot express: the info gauge (labels from the running node), those labelled by outcome or
// protocol (each sample from another counter or per-protocol total), the transport's received
// bytes (a sum of two counters), the publish phase's seconds (a counter of µs), and known_peers (not a counter: the
// threshold policy's size).
std::string RenderManagerMetrics(const ManagerMetricsSources& in) {
  const CounterSnapshot counters = in.stats->Snapshot();
  PrometheusText t;
  t.Family("rplasma_manager_info", MetricType::kGauge, "Always 1; the node id and transport as labels.");
  t.Sample("rplasma_manager_info", {{"node_id", in.node_id}, {"transport", in.transport}}, uint64_t{1});

  t.Family("rplasma_manager_fetches_total", MetricType::kCounter,
           "Fetched ids by outcome: local (already here), merged (joined a fetch in progress), failed, "
           "or transferred by a peer protocol.");
  t.Sample("rplasma_manager_fetches_total", {{"outcome", "local"}}, counters["fetch_local"]);
  t.Sample("rplasma_manager_fetches_total", {{"outcome", "merged"}}, counters["fetch_merged"]);
  t.Sample("rplasma_manager_fetches_total", {{"outcome", "failed"}}, counters["fetch_failures"]);
  const ManagerStats::ProtocolSnapshot by[2] = {in.stats->ByProtocol(peer::PeerProtocol::kGet),
                                                in.stats->ByProtocol(peer::PeerProtocol::kPin)};
  const char* const protocol[2] = {"get", "pin"};
  for (int p = 0; p < 2; ++p) {
    t.Sample("rplasma_manager_fetches_total", {{"outcome", "transferred"}, {"protocol", protocol[p]}}, by[p].objects);
  }
  t.Family("rplasma_manager_transfers_total", MetricType::kCounter,
           "Transfers from a peer, by protocol (get: send/recv, pin: remote read); a batch counts once.");
  for (int p = 0; p < 2; ++p) t.Sample("rplasma_manager_transfers_total", {{"protocol", protocol[p]}}, by[p].transfers);
  t.Family("rplasma_manager_fetched_objects_total", MetricType::kCounter, "Objects brought from peers, by protocol.");
  for (int p = 0; p < 2; ++p) {
    t.Sample("rplasma_manager_fetched_objects_total", {{"protocol", protocol[p]}}, by[p].objects);
  }
  t.Family("rplasma_manager_fetched_bytes_total", MetricType::kCounter,
           "Bytes (data + metadata) brought from peers, by protocol.");
  for (int p = 0; p < 2; ++p) t.Sample("rplasma_manager_fetched_bytes_total", {{"protocol", protocol[p]}}, by[p].bytes);
  t.Family("rplasma_manager_fetch_seconds", MetricType::kHistogram,
           "Time of one transfer from a peer, directory lookup to seal, by protocol and transport.");
  for (int p = 0; p < 2; ++p) {
    t.Histogram("rplasma_manager_fetch_seconds", {{"protocol", protocol[p]}, {"transport", in.transport}},
                by[p].latency);
  }
  t.Family("rplasma_manager_fetch_phase_seconds_total", MetricType::kCounter,
           "Time transfers from a peer spent in each phase, by protocol: lookup (directory), connect, "
           "transfer, verify (checksums), seal (the store requests); over rplasma_manager_transfers_total, the "
           "mean per transfer.");
  for (int p = 0; p < 2; ++p) {
    const manager::FetchPhases& ph = by[p].phases;
    const std::pair<const char*, absl::Duration> phases[] = {{"lookup", ph.lookup},
                                                             {"connect", ph.connect},
                                                             {"transfer", ph.transfer},
                                                             {"verify", ph.verify},
                                                             {"seal", ph.seal}};
    for (const auto& [phase, time] : phases) {
      t.Sample("rplasma_manager_fetch_phase_seconds_total", {{"protocol", protocol[p]}, {"phase", phase}},
               absl::ToDoubleSeconds(time));
    }
  }
  t.Family("rplasma_manager_publish_seconds_total", MetricType::kCounter,
           "Time the publisher's directory updates took (the publish phase, off the fetch's path); over "
           "rplasma_manager_publish_updates_total, the mean per update.");
  t.Sample("rplasma_manager_publish_seconds_total", {}, static_cast<double>(counters["publish_us"]) / 1e6);
  AppendCounters(t, counters);

  const CounterSnapshot& tr = in.transport_stats;
  const MetricLabels transport = {{"transport", in.transport}};
  const uint64_t pulled = in.transport == "verbs" ? Value(tr, "read_bytes") : 0;
  t.Family("rplasma_manager_transport_received_bytes_total", MetricType::kCounter,
           "Bytes this node received from peers as its NIC counts them (messages, plus RDMA READ data on verbs).");
  t.Sample("rplasma_manager_transport_received_bytes_total", transport, Value(tr, "rx_bytes") + pulled);
  AppendCounters(t, tr, transport);

  AppendCounters(t, in.peer_service);
  t.Single("rplasma_manager_known_peers", MetricType::kGauge, "Peers this node has fetched from (with a threshold).",
           in.known_peers);
  t.Family("rplasma_manager_peer_threshold_bytes", MetricType::kGauge,
           "The Get/Pin switch point for objects from a peer, per number of objects moved at once: larger "
           "objects are pinned and read.");
  for (const auto& p : in.peer_thresholds)
    t.Sample("rplasma_manager_peer_threshold_bytes", {{"peer", p.peer}, {"objects", p.objects}}, p.bytes);
  t.Family("rplasma_manager_peer_threshold_flips_total", MetricType::kCounter,
           "Times a peer's threshold moved (auto: calibration and the estimates).");
  for (const auto& p : in.peer_thresholds) {
    t.Sample("rplasma_manager_peer_threshold_flips_total", {{"peer", p.peer}, {"objects", p.objects}}, p.flips);
  }
  t.Family("rplasma_manager_peer_link_changes_total", MetricType::kCounter,
           "Changes of the link to a peer the automatic threshold saw (costs far from their estimates, six in a "
           "row), after each of which it re-learned its estimates.");
  for (const auto& p : in.peer_thresholds) {
    t.Sample("rplasma_manager_peer_link_changes_total", {{"peer", p.peer}, {"objects", p.objects}}, p.link_changes);
  }
  return t.str();
}

}  // namespace rplasma::manager
