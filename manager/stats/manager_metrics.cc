#include "manager/stats/manager_metrics.h"

#include "protocol/metrics/prometheus_text.h"

namespace rplasma::manager {
namespace {

// A counter of a snapshot under its Prometheus name; 0 if the snapshot does not have it (a
// transport that does not keep it).
struct Mapped {
  const char* source;
  const char* name;
  MetricType type;
  const char* help;
};

uint64_t Value(const CounterSnapshot& snapshot, const char* name) {
  return snapshot.contains(name) ? snapshot[name] : 0;
}

void AddAll(PrometheusText& t, const CounterSnapshot& snapshot, std::initializer_list<Mapped> metrics) {
  for (const Mapped& m : metrics) t.Single(m.name, m.type, m.help, Value(snapshot, m.source));
}

}  // namespace

std::string RenderManagerMetrics(const ManagerMetricsSources& in) {
  const CounterSnapshot counters = in.stats->Snapshot();
  PrometheusText t;
  t.Family("rplasma_manager_info", MetricType::kGauge, "Always 1; the node id and transport as labels.");
  t.Sample("rplasma_manager_info", {{"node_id", in.node_id}, {"transport", in.transport}}, uint64_t{1});

  t.Single("rplasma_manager_fetch_requests_total", MetricType::kCounter, "Object ids asked for by local clients.",
           counters["fetch_requests"]);
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

  AddAll(t, counters,
         {{"transfer_failures", "rplasma_manager_transfer_failures_total", MetricType::kCounter,
           "Transfers from one source that failed (the local object was aborted)."},
          {"batch_transfers", "rplasma_manager_batch_transfers_total", MetricType::kCounter,
           "Transfers that moved several ids from one peer at once."},
          {"checksum_mismatches", "rplasma_manager_checksum_mismatches_total", MetricType::kCounter,
           "Transferred objects whose checksum did not match."},
          {"lease_lapses", "rplasma_manager_lease_lapses_total", MetricType::kCounter,
           "Remote reads that outlived their lease and were discarded."},
          {"generation_hint_mismatches", "rplasma_manager_generation_hint_mismatches_total", MetricType::kCounter,
           "Owners whose object generation differed from the directory's hint."},
          {"directory_polls", "rplasma_manager_directory_polls_total", MetricType::kCounter,
           "Directory re-lookups of ids not yet sealed anywhere."},
          {"directory_errors", "rplasma_manager_directory_errors_total", MetricType::kCounter,
           "Directory operations that failed."},
          {"directory_lookups", "rplasma_manager_directory_lookups_total", MetricType::kCounter,
           "Ids a fetch asked the directory about (re-lookups included)."},
          {"location_cache_hits", "rplasma_manager_location_cache_hits_total", MetricType::kCounter,
           "Ids fetched straight from the node that served them before, without the directory."},
          {"location_cache_misses", "rplasma_manager_location_cache_misses_total", MetricType::kCounter,
           "Ids the location cache did not know (or whose node was silent too long)."},
          {"location_cache_stale", "rplasma_manager_location_cache_stale_total", MetricType::kCounter,
           "Cached locations that failed (retried through the directory) or held a new generation."},
          {"hinted_fetches", "rplasma_manager_hinted_fetches_total", MetricType::kCounter,
           "Ids sent to the node the caller hinted at."},
          {"hint_misses", "rplasma_manager_hint_misses_total", MetricType::kCounter,
           "Hinted ids the hinted node could not serve (retried through the directory)."},
          {"objects_published", "rplasma_manager_objects_published_total", MetricType::kCounter,
           "Local objects announced to the directory."},
          {"objects_removed", "rplasma_manager_objects_removed_total", MetricType::kCounter,
           "Local objects withdrawn from the directory."},
          {"publish_errors", "rplasma_manager_publish_errors_total", MetricType::kCounter,
           "Directory announcements that failed."},
          {"republishes", "rplasma_manager_republishes_total", MetricType::kCounter,
           "Full republish runs after the directory came back."},
          {"heartbeat_errors", "rplasma_manager_heartbeat_errors_total", MetricType::kCounter,
           "Directory heartbeats that failed."},
          {"transport_fallbacks", "rplasma_manager_transport_fallbacks_total", MetricType::kCounter,
           "Starts where --transport auto found no verbs device and chose tcp."},
          {"calibrations", "rplasma_manager_calibrations_total", MetricType::kCounter,
           "Automatic threshold probes run."}});

  const CounterSnapshot& tr = in.transport_stats;
  const MetricLabels transport = {{"transport", in.transport}};
  const uint64_t pulled = in.transport == "verbs" ? Value(tr, "read_bytes") : 0;
  t.Family("rplasma_manager_transport_received_bytes_total", MetricType::kCounter,
           "Bytes this node received from peers as its NIC counts them (messages, plus RDMA READ data on verbs).");
  t.Sample("rplasma_manager_transport_received_bytes_total", transport, Value(tr, "rx_bytes") + pulled);
  t.Family("rplasma_manager_transport_sent_bytes_total", MetricType::kCounter,
           "Bytes this node sent to peers in messages (RDMA READs served by the NIC are not seen).");
  t.Sample("rplasma_manager_transport_sent_bytes_total", transport, Value(tr, "tx_bytes"));
  const struct {
    const char* source;
    const char* name;
    MetricType type;
    const char* help;
  } transport_metrics[] = {
      {"tx_messages", "rplasma_manager_transport_sent_messages_total", MetricType::kCounter, "Messages sent to peers."},
      {"rx_messages", "rplasma_manager_transport_received_messages_total", MetricType::kCounter,
       "Messages received from peers."},
      {"reads", "rplasma_manager_transport_reads_total", MetricType::kCounter, "Remote reads completed."},
      {"read_bytes", "rplasma_manager_transport_read_bytes_total", MetricType::kCounter,
       "Bytes pulled by remote reads."},
      {"connections", "rplasma_manager_transport_connections", MetricType::kGauge, "Open peer connections."},
      {"auth_failures", "rplasma_manager_transport_auth_failures_total", MetricType::kCounter,
       "Peer handshakes refused for a bad secret."},
      {"errors", "rplasma_manager_transport_errors_total", MetricType::kCounter, "Failed peer calls and reads."},
      {"reconnects", "rplasma_manager_transport_reconnects_total", MetricType::kCounter,
       "Channels rebuilt after an error."},
  };
  for (const auto& m : transport_metrics) {
    t.Family(m.name, m.type, m.help);
    t.Sample(m.name, transport, Value(tr, m.source));
  }

  AddAll(
      t, in.peer_service,
      {{"gets", "rplasma_manager_served_gets_total", MetricType::kCounter, "Objects peers got from this node."},
       {"get_bytes", "rplasma_manager_served_get_bytes_total", MetricType::kCounter, "Bytes peers got from this node."},
       {"pins", "rplasma_manager_served_pins_total", MetricType::kCounter,
        "Objects peers pinned here to read remotely."},
       {"reads_allowed", "rplasma_manager_served_reads_allowed_total", MetricType::kCounter,
        "Remote reads of this node's arena allowed."},
       {"reads_refused", "rplasma_manager_served_reads_refused_total", MetricType::kCounter,
        "Remote reads refused (no live lease)."},
       {"leases_live", "rplasma_manager_leases", MetricType::kGauge, "Leases peers hold on local objects now."},
       {"leases_expired", "rplasma_manager_leases_expired_total", MetricType::kCounter,
        "Leases that expired before their peer released them."},
       {"leases_dropped", "rplasma_manager_leases_dropped_total", MetricType::kCounter,
        "Leases dropped because their peer disconnected."},
       {"bad_requests", "rplasma_manager_peer_bad_requests_total", MetricType::kCounter,
        "Undecodable or invalid requests from peers."}});
  t.Single("rplasma_manager_known_peers", MetricType::kGauge, "Peers this node has fetched from (with a threshold).",
           in.known_peers);
  return t.str();
}

}  // namespace rplasma::manager
