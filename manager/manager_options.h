// ManagerOptions: everything rplasma-manager is told on its command line (manager_command_line.cc
// maps flags onto this struct). Defaults are documented per field; Validate() names the first bad one.
#ifndef RPLASMA_MANAGER_MANAGER_OPTIONS_H_
#define RPLASMA_MANAGER_MANAGER_OPTIONS_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "protocol/base/metrics_exporter.h"

namespace rplasma::manager {

struct ManagerOptions {
  std::string store_socket;                  // required: rplasma-store --socket
  std::string redis;                         // required: "host:port" or "unix:/path"
  std::string listen = "127.0.0.1:0";        // peer listener; port 0 picks one
  std::string client_socket;                 // "" = no client socket (no Fetch for applications)
  size_t max_client_connections = 256;       // client socket: concurrent connections (a thread each)
  absl::Duration client_request_deadline = absl::Seconds(5);  // client socket: a started request, a reply
  std::string transport = "tcp";             // tcp | verbs | auto (verbs if a device exists)
  std::string pin_threshold = "65536";       // BYTES | auto | FILE: up to it Get, above Pin (threshold_file.h)
  std::string secret_file;                   // required: shared secret of the cluster's managers
  std::string node_name = "node";            // node id = name + "." + random suffix
  absl::Duration lease_ttl = absl::Seconds(30);  // pins held for peers
  absl::Duration node_ttl = absl::Seconds(5);    // directory node record; heartbeat every ttl/3
  absl::Duration redis_timeout = absl::Seconds(1);  // one directory operation
  // How often the publisher checks the directory's entries of this node against the store
  // (publishes what is missing, removes what is stale); also done at once after Redis comes back.
  absl::Duration reconcile_interval = absl::Seconds(30);
  std::string rdma_device;                   // verbs: "" = chosen by rdma_cm
  int qp_timeout = 14;
  int retry_count = 7;
  int rnr_retry = 6;
  absl::Duration cq_spin = absl::Microseconds(50);  // verbs: busy-poll window before blocking (0: block)
  uint64_t read_chunk_bytes = 4u << 20;      // Pin path: bytes per Read call (hashed while the next is read)
  // Prometheus metrics (--metrics-port, --metrics-address, --metrics-file...; docs/METRICS.md). Off by default.
  MetricsExportOptions metrics;

  absl::Status Validate() const;
};

}  // namespace rplasma::manager

#endif  // RPLASMA_MANAGER_MANAGER_OPTIONS_H_
