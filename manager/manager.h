// Manager: one rplasma-manager, wired together.
//
// Start() acquires, in order: the store connection (maps the arena) -> the transport (registers
// the arena once) -> the directory (Redis) -> the peer service + listener -> the node record ->
// the publisher (store events -> directory) -> the heartbeat thread -> the client socket.
// Shutdown() releases in reverse.
//
// Threads and hand-offs:
//   transport threads   -> PeerService::HandleCall/AllowRead/OnDisconnect (lease table, store IPC),
//                          through the caller's wrapper when Start was given one
//   lease reaper        -> LeaseTable::Expire (PeerService)
//   publisher thread    -> store events -> Directory Publish/Remove; failed updates retried and
//                          the directory reconciled with the store here; republish flag set by the
//                          directory's reconnect callback (any thread) and consumed here
//   heartbeat thread    -> Directory::Heartbeat every node_ttl / 3
//   client socket       -> accept thread + one thread per connection -> FetchEngine::Fetch
//                          (in-flight map hands a leader's outcome to merged waiters)
//
// Never fork()/system() in this process: the verbs transport registered memory.
// Thread-safety: Start/Shutdown from the main thread; StatsJson and accessors from any.
#ifndef RPLASMA_MANAGER_MANAGER_H_
#define RPLASMA_MANAGER_MANAGER_H_

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

#include "client/client.h"
#include "manager/client_local_store.h"
#include "manager/client_socket_server.h"
#include "manager/directory/directory.h"
#include "manager/directory/directory_lanes.h"
#include "manager/directory/redis_directory.h"
#include "manager/fetch/channel_cache.h"
#include "manager/fetch/fetch_engine.h"
#include "manager/fetch/threshold_policy.h"
#include "manager/manager_options.h"
#include "manager/object_publisher.h"
#include "manager/peer/lease_ender.h"
#include "manager/peer/peer_service.h"
#include "manager/stats/manager_stats.h"
#include "manager/transport/transport.h"

namespace rplasma::manager {

class Manager {
 public:
  // Wraps the peer service in the handler the transport's listener gets (tests build a throttling
  // one). The wrapper forwards to `inner`, which outlives it.
  using PeerHandlerWrapper =
      std::function<std::unique_ptr<transport::RequestHandler>(transport::RequestHandler* inner)>;
  // Wraps the transport Start made (tests build a fault-injecting one); the wrapper owns `inner`.
  using TransportWrapper =
      std::function<std::unique_ptr<transport::Transport>(std::unique_ptr<transport::Transport> inner)>;

  // `wrap_peer_handler`: empty = peers talk to the peer service directly.
  // `wrap_transport`: empty = the transport MakeTransport chose, unwrapped.
  static absl::StatusOr<std::unique_ptr<Manager>> Start(const ManagerOptions& options,
                                                        PeerHandlerWrapper wrap_peer_handler = nullptr,
                                                        TransportWrapper wrap_transport = nullptr);
  ~Manager();  // Shutdown()

  void Shutdown();
  const std::string& node_id() const { return node_id_; }
  const std::string& listen_address() const { return listen_address_; }
  absl::string_view transport_name() const { return transport_->name(); }
  // The store connection broke (the store died): the manager is useless and should exit.
  bool store_lost() const { return publisher_ != nullptr && publisher_->store_lost(); }
  std::string StatsJson() const;
  // The Prometheus text exposition (manager_metrics.h).
  std::string MetricsText() const;
  // The /metrics endpoint's port (options.metrics.port); 0 without one.
  uint16_t metrics_port() const { return metrics_exporter_ == nullptr ? 0 : metrics_exporter_->port(); }
  fetch::FetchEngine* fetch_engine() { return fetch_engine_.get(); }

 private:
  explicit Manager(const ManagerOptions& options) : options_(options) {}
  absl::Status Init(const PeerHandlerWrapper& wrap_peer_handler, const TransportWrapper& wrap_transport);
  void HeartbeatLoop();
  JsonObject ClientSocketJson() const;

  const ManagerOptions options_;
  std::string node_id_;
  std::string listen_address_;
  std::string threshold_mode_;  // "fixed", "file" or "auto"
  // The one source of time the Manager hands every component (and reads itself).
  Clock* const clock_ = &Clock::Real();
  ManagerStats stats_;
  // Declared in acquisition order (destroyed in reverse).
  std::unique_ptr<Client> client_;
  std::unique_ptr<ClientLocalStore> store_;
  std::unique_ptr<fetch::ThresholdPolicy> policy_;
  std::unique_ptr<transport::Transport> transport_;
  std::unique_ptr<Directory> directory_;
  RedisDirectory* redis_ = nullptr;           // directory_, as the RedisDirectory Init created
  std::unique_ptr<DirectoryLanes> lookups_;   // the fetch engine's and channel cache's own connections
  std::atomic<bool> lanes_reconnect_{false};  // Redis came back: the next heartbeat reconnects lookups_
  std::unique_ptr<peer::PeerService> peer_service_;
  std::unique_ptr<transport::RequestHandler> peer_handler_;  // the wrapper, if Start was given one
  std::unique_ptr<fetch::ChannelCache> channels_;
  std::unique_ptr<fetch::ExpectedCopies> expected_copies_;  // the engine announces, the publisher takes
  std::unique_ptr<peer::LeaseEnder> lease_ender_;           // the engine's Unpins, off its fetches
  std::unique_ptr<fetch::FetchEngine> fetch_engine_;
  std::unique_ptr<ObjectPublisher> publisher_;
  std::unique_ptr<ClientSocketServer> client_server_;
  // client_server_ for the stats, which its own threads may ask for before Start has stored it.
  std::atomic<ClientSocketServer*> client_server_for_stats_{nullptr};

  absl::Mutex heartbeat_mu_;
  bool stopping_ ABSL_GUARDED_BY(heartbeat_mu_) = false;
  std::thread heartbeat_;
  bool shut_down_ = false;
  // Started last by Init, stopped first by Shutdown: its threads call MetricsText().
  std::unique_ptr<MetricsExporter> metrics_exporter_;
};

}  // namespace rplasma::manager

#endif  // RPLASMA_MANAGER_MANAGER_H_
