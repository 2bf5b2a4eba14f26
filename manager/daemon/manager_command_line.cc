#include "manager/daemon/manager_command_line.h"

#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"

#include "protocol/base/byte_size.h"
#include "protocol/base/logging.h"
#include "protocol/command_line/command_line.h"
#include "protocol/command_line/default_socket.h"
#include "protocol/command_line/keep_heap.h"
#include "protocol/command_line/metrics_flags.h"
#include "protocol/command_line/service_notify.h"

namespace {
// Every flag's default is the struct's (the value written in the option struct of the part it sets).
const rplasma::manager::ManagerOptions kDefaults;
}  // namespace

ABSL_FLAG(std::string, store_socket, rplasma::DefaultStoreSocket(), "rplasma-store socket");
ABSL_FLAG(std::string, redis, "",
          "Redis: host:port or unix:/path of one redis-server, or comma-separated host:port seeds of a Redis "
          "Cluster (required)");
ABSL_FLAG(std::string, listen, kDefaults.listen, "peer listener host:port (port 0 picks one)");
ABSL_FLAG(std::string, client_socket, rplasma::DefaultManagerSocket(),
          "Unix socket for applications' Fetch and stats (the CLI's default --manager-socket); empty: none");
ABSL_FLAG(std::string, transport, kDefaults.transport, "tcp | verbs | auto (verbs if an RDMA device exists)");
ABSL_FLAG(std::string, pin_threshold, "",
          "BYTES | auto | FILE: objects up to this size use Get, larger ones Pin (default 65536)");
ABSL_FLAG(std::string, rdma_threshold, "", "alias of --pin-threshold (the old name)");
ABSL_FLAG(std::string, secret_file, "",
          "file holding the cluster's shared peer secret (required; >= 16 bytes, mode 0600 or 0400)");
ABSL_FLAG(std::string, node_name, kDefaults.node_name, "node name; the node id adds a random suffix");
ABSL_FLAG(absl::Duration, lease_ttl, kDefaults.leases.ttl, "lifetime of a pin held for a peer");
ABSL_FLAG(absl::Duration, node_ttl, kDefaults.directory.node_ttl, "directory node record TTL (heartbeat every ttl/3)");
ABSL_FLAG(absl::Duration, redis_timeout, kDefaults.directory.op_timeout, "bound on one directory operation");
ABSL_FLAG(uint64_t, max_client_connections, kDefaults.max_client_connections,
          "client socket: connections served at once (more are closed)");
ABSL_FLAG(absl::Duration, client_request_deadline, kDefaults.client_request_deadline,
          "client socket: a request that has started arriving must be complete within it (idle connections may stay)");
ABSL_FLAG(absl::Duration, reconcile_interval, kDefaults.reconcile_interval,
          "how often this node's directory entries are checked against the store (missing published, stale removed)");
ABSL_FLAG(absl::Duration, copy_publish_delay, kDefaults.copy_publish_delay,
          "a fetched copy is published to the directory this long after its seal, unless deleted first");
ABSL_FLAG(std::string, rdma_device, kDefaults.peer_transport.rdma_device, "verbs device (default: chosen by rdma_cm)");
ABSL_FLAG(int, qp_timeout, kDefaults.peer_transport.qp_timeout, "verbs QP timeout exponent (4.096us * 2^N)");
ABSL_FLAG(int, retry_count, kDefaults.peer_transport.retry_count, "verbs QP retry count (0..7)");
ABSL_FLAG(int, rnr_retry, kDefaults.peer_transport.rnr_retry, "verbs RNR retry (0..6)");
ABSL_FLAG(absl::Duration, cq_spin, kDefaults.peer_transport.cq_spin,
          "verbs: how long a waiting thread busy-polls the completion queue before blocking (0: block at once)");
ABSL_FLAG(std::string, read_chunk_bytes, rplasma::FormatByteSize(kDefaults.fetch.read_chunk_bytes),
          "Pin path: bytes per Read (each chunk is checksummed while the next one is read)");
ABSL_FLAG(bool, guess_owner, kDefaults.fetch.guess_owner,
          "a fetch without a hint first tries the node that held most of the recent lookups' objects, while that "
          "pays (the directory serves what it does not have)");

namespace rplasma::manager {

absl::StatusOr<std::string> ResolvePinThreshold(const std::string& pin_threshold, const std::string& rdma_threshold) {
  if (pin_threshold.empty() && rdma_threshold.empty()) return ManagerOptions().pin_threshold;
  if (pin_threshold.empty()) return rdma_threshold;
  if (!rdma_threshold.empty() && rdma_threshold != pin_threshold) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--pin-threshold=", pin_threshold, " and its alias --rdma-threshold=", rdma_threshold, " disagree; give one"));
  }
  return pin_threshold;
}

ManagerOptions ParseManagerCommandLine(int argc, char** argv) {
  // The binary's own name: rplasma-manager, or a test-only manager that adds flags.
  std::string program = argc > 0 ? argv[0] : "rplasma-manager";
  program = program.substr(program.rfind('/') + 1);
  const CommandLine command_line = CommandLine::ParseOrExit(argc, argv, program, absl::ProgramUsageMessage());
  if (!command_line.operands().empty()) {
    command_line.ExitWithUsageError(absl::InvalidArgumentError(
        absl::StrCat("unexpected argument '", command_line.operands().front(), "' (flags only; see --help)")));
  }

  ManagerOptions options;
  options.store_socket = absl::GetFlag(FLAGS_store_socket);
  options.directory.address = absl::GetFlag(FLAGS_redis);
  options.listen = absl::GetFlag(FLAGS_listen);
  options.client_socket = absl::GetFlag(FLAGS_client_socket);
  options.transport = absl::GetFlag(FLAGS_transport);
  absl::StatusOr<std::string> pin_threshold =
      ResolvePinThreshold(absl::GetFlag(FLAGS_pin_threshold), absl::GetFlag(FLAGS_rdma_threshold));
  if (!pin_threshold.ok()) command_line.ExitWithUsageError(pin_threshold.status());
  options.pin_threshold = *pin_threshold;
  options.secret_file = absl::GetFlag(FLAGS_secret_file);
  options.node_name = absl::GetFlag(FLAGS_node_name);
  options.leases.ttl = absl::GetFlag(FLAGS_lease_ttl);
  options.directory.node_ttl = absl::GetFlag(FLAGS_node_ttl);
  options.directory.op_timeout = absl::GetFlag(FLAGS_redis_timeout);
  options.reconcile_interval = absl::GetFlag(FLAGS_reconcile_interval);
  options.copy_publish_delay = absl::GetFlag(FLAGS_copy_publish_delay);
  options.max_client_connections = absl::GetFlag(FLAGS_max_client_connections);
  options.client_request_deadline = absl::GetFlag(FLAGS_client_request_deadline);
  options.peer_transport.rdma_device = absl::GetFlag(FLAGS_rdma_device);
  options.peer_transport.qp_timeout = absl::GetFlag(FLAGS_qp_timeout);
  options.peer_transport.retry_count = absl::GetFlag(FLAGS_retry_count);
  options.peer_transport.rnr_retry = absl::GetFlag(FLAGS_rnr_retry);
  options.peer_transport.cq_spin = absl::GetFlag(FLAGS_cq_spin);
  absl::StatusOr<uint64_t> read_chunk_bytes =
      command_line.ByteSize("read_chunk_bytes", absl::GetFlag(FLAGS_read_chunk_bytes));
  if (!read_chunk_bytes.ok()) command_line.ExitWithUsageError(read_chunk_bytes.status());
  options.fetch.read_chunk_bytes = *read_chunk_bytes;
  options.fetch.guess_owner = absl::GetFlag(FLAGS_guess_owner);
  absl::StatusOr<MetricsExportOptions> metrics = MetricsExportOptionsFromFlags();
  if (!metrics.ok()) command_line.ExitWithUsageError(metrics.status());
  options.metrics = *std::move(metrics);
  return options;
}

int RunManagerUntilSignal(const ManagerOptions& options, Manager::PeerHandlerWrapper wrap_peer_handler,
                          Manager::TransportWrapper wrap_transport) {
  // Each small fetch allocates and frees a reply buffer of up to the Get threshold: keep the
  // heap top instead of faulting it back in at every fetch (seal phase of a 64 KiB fetch 30 -> 60 us).
  KeepHeap();

  // Block the stop signals before any thread starts, so only sigtimedwait below receives them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  signal(SIGPIPE, SIG_IGN);
  // A daemon outlives the terminal it was started from: a hangup is not a reason to stop.
  signal(SIGHUP, SIG_IGN);

  absl::StatusOr<std::unique_ptr<Manager>> started = Manager::Start(options, wrap_peer_handler, wrap_transport);
  if (!started.ok()) {
    std::fprintf(stderr, "rplasma-manager: %s\n", std::string(started.status().message()).c_str());
    return 1;
  }
  std::unique_ptr<Manager> manager = *std::move(started);
  auto announce = [&] {
    std::printf("rplasma-manager ready node=%s transport=%s listen=%s\n", manager->node_id().c_str(),
                std::string(manager->transport_name()).c_str(), manager->listen_address().c_str());
    std::fflush(stdout);
    // Start has bound the client socket and the peer listener: both accept from here on.
    if (absl::Status notified = NotifyServiceManager("READY=1"); !notified.ok()) {
      LOG(WARNING) << "telling systemd the manager is ready: " << notified.message();
    }
  };
  announce();

  const timespec tick{0, 200 * 1000 * 1000};
  absl::Duration backoff = absl::Milliseconds(100);
  while (true) {
    const int sig = sigtimedwait(&stop_signals, nullptr, &tick);
    if (sig == SIGINT || sig == SIGTERM) break;
    if (manager != nullptr && !manager->store_lost()) continue;
    if (manager != nullptr) {
      // A restarted store has a new, empty arena: everything bound to the old one (the transport's
      // registration, leases, the fetch engine, the node's directory entry) goes with the node,
      // which starts afresh, under a new node id, once the store answers again.
      LOG(WARNING) << "the store went away; node " << manager->node_id() << " shuts down and restarts when it is back";
      manager->Shutdown();
      manager.reset();
    }
    started = Manager::Start(options, wrap_peer_handler, wrap_transport);
    if (started.ok()) {
      manager = *std::move(started);
      backoff = absl::Milliseconds(100);
      announce();
      continue;
    }
    LOG(WARNING) << "restarting the node: " << started.status().message() << " (next try in "
                 << absl::FormatDuration(backoff) << ")";
    const timespec wait = absl::ToTimespec(backoff);
    const int during = sigtimedwait(&stop_signals, nullptr, &wait);
    if (during == SIGINT || during == SIGTERM) break;
    backoff = std::min(backoff * 2, absl::Seconds(2));
  }
  (void)NotifyServiceManager("STOPPING=1");  // best effort: systemd sees the exit anyway
  if (manager != nullptr) manager->Shutdown();
  return 0;
}

}  // namespace rplasma::manager
