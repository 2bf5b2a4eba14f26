// ManagerOptions: everything rplasma-manager is told on its command line (manager_command_line.cc
// maps flags onto this struct). The options of the parts it configures are embedded with their own
// defaults, and the flags take their defaults from here, so each default is written once.
// Validate() names the first bad one.
#ifndef RPLASMA_MANAGER_MANAGER_OPTIONS_H_
#define RPLASMA_MANAGER_MANAGER_OPTIONS_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"

#include "manager/directory/redis_directory_options.h"
#include "manager/fetch/fetch_engine.h"
#include "manager/peer/lease_table.h"
#include "manager/transport/transport.h"
#include "protocol/metrics/metrics_exporter.h"

namespace rplasma::manager {

struct ManagerOptions {
  std::string store_socket;                                   // required: rplasma-store --socket
  std::string listen = "127.0.0.1:0";                         // peer listener; port 0 picks one
  std::string client_socket;                                  // "" = no client socket (no Fetch for applications)
  size_t max_client_connections = 256;                        // client socket: concurrent connections (a thread each)
  absl::Duration client_request_deadline = absl::Seconds(5);  // client socket: a started request, a reply
  std::string transport = "tcp";                              // tcp | verbs | auto (verbs if a device exists)
  std::string pin_threshold = "65536";  // BYTES | auto | FILE: up to it Get, above Pin (threshold_file.h)
  std::string secret_file;              // required: shared secret of the cluster's managers
  std::string node_name = "node";       // node id = name + "." + random suffix
  // How often the publisher checks the directory's entries of this node against the store
  // (publishes what is missing, removes what is stale); also done at once after Redis comes back.
  absl::Duration reconcile_interval = absl::Seconds(30);
  // A fetched copy is published to the directory this long after its seal, unless deleted first.
  absl::Duration copy_publish_delay = absl::Milliseconds(500);
  // --redis (address: required on the command line), --node-ttl (heartbeat every ttl/3),
  // --redis-timeout (op_timeout). The clock is the manager's.
  RedisDirectoryOptions directory;
  // --lease-ttl: pins held for peers.
  peer::LeaseTableOptions leases;
  // --rdma-device, --qp-timeout, --retry-count, --rnr-retry, --cq-spin; the secret is read from
  // secret_file at start.
  transport::TransportOptions peer_transport;
  // --read-chunk-bytes (read_chunk_bytes). The node id, the clock and the publisher's hand-off are
  // filled in at start.
  fetch::FetchEngineOptions fetch;
  // Prometheus metrics (--metrics-port, --metrics-address, --metrics-file...; docs/METRICS.md). Off by default.
  MetricsExportOptions metrics;

  absl::Status Validate() const;
};

}  // namespace rplasma::manager

#endif  // RPLASMA_MANAGER_MANAGER_OPTIONS_H_
