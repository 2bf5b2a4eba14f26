#include "manager/manager.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

#include "manager/auth/secret_file.h"
#include "manager/directory/directory_lanes.h"
#include "manager/directory/redis_directory.h"
#include "manager/fetch/threshold_file.h"
#include "manager/stats/manager_metrics.h"
#include "manager/transport_factory.h"
#include "protocol/base/logging.h"
#include "protocol/base/mutex_lock.h"
#include "protocol/base/status.h"

namespace rplasma::manager {

absl::StatusOr<std::unique_ptr<Manager>> Manager::Start(const ManagerOptions& options,
                                                        PeerHandlerWrapper wrap_peer_handler,
                                                        TransportWrapper wrap_transport) {
  RETURN_IF_ERROR(options.Validate());
  std::unique_ptr<Manager> manager(new Manager(options));
  absl::Status status = manager->Init(wrap_peer_handler, wrap_transport);
  if (!status.ok()) {
    manager->Shutdown();
    return status;
  }
  return manager;
}

absl::Status Manager::Init(const PeerHandlerWrapper& wrap_peer_handler, const TransportWrapper& wrap_transport) {
  ASSIGN_OR_RETURN(const std::string secret, auth::ReadSecretFile(options_.secret_file));
  ASSIGN_OR_RETURN(fetch::ThresholdSetting threshold, fetch::ParseThresholdSetting(options_.pin_threshold, 64u << 10));
  threshold_mode_ = threshold.mode == fetch::ThresholdSetting::Mode::kAuto   ? "auto"
                    : threshold.mode == fetch::ThresholdSetting::Mode::kFile ? "file"
                                                                             : "fixed";
  node_id_ = absl::StrCat(options_.node_name, ".", ObjectID::Random().Hex().substr(0, 8));

  ClientOptions client_options;
  client_options.store_socket = options_.store_socket;
  client_options.client_name = absl::StrCat("manager ", node_id_);
  absl::StatusOr<std::unique_ptr<Client>> client = Client::Connect(client_options);
  if (!client.ok()) {
    return MakeError(ErrorCodeOf(client.status()),
                     absl::StrCat("store at ", options_.store_socket, ": ", client.status().message()));
  }
  client_ = *std::move(client);
  store_ = std::make_unique<ClientLocalStore>(client_.get());

  fetch::ThresholdPolicyOptions policy_options;
  policy_options.setting = threshold;
  policy_ = std::make_unique<fetch::ThresholdPolicy>(policy_options);
  RETURN_IF_ERROR(policy_options.Validate());

  transport::TransportOptions transport_options = options_.peer_transport;
  transport_options.secret = secret;
  RETURN_IF_ERROR(transport_options.Validate());
  ASSIGN_OR_RETURN(MadeTransport made, MakeTransport(options_.transport, transport_options));
  transport_ = std::move(made.transport);
  if (wrap_transport) transport_ = wrap_transport(std::move(transport_));
  if (made.fell_back) stats_.transport_fallbacks.fetch_add(1, std::memory_order_relaxed);
  RETURN_IF_ERROR(transport_->RegisterArena(client_->arena_base(), client_->arena_size()));

  RedisDirectoryOptions directory_options = options_.directory;
  directory_options.clock = clock_;
  ASSIGN_OR_RETURN(std::unique_ptr<RedisDirectory> directory, RedisDirectory::Create(directory_options));
  redis_ = directory.get();
  directory_ = std::move(directory);
  // The fetch side's own connections: a fetch's lookups never queue behind the publisher's updates
  // (a burst of seals after a large fetch) or the heartbeat on the other one, nor behind each
  // other: one lane per chunk a fetch looks up at once (FetchEngineOptions::pipeline_depth).
  std::vector<std::unique_ptr<Directory>> lanes;
  for (int lane = 0; lane < std::max(options_.fetch.pipeline_depth, 1); ++lane) {
    ASSIGN_OR_RETURN(std::unique_ptr<RedisDirectory> connection, RedisDirectory::Create(directory_options));
    lanes.push_back(std::move(connection));
  }
  lookups_ = std::make_unique<DirectoryLanes>(std::move(lanes));

  peer::PeerServiceOptions service_options;
  service_options.leases = options_.leases;
  service_options.clock = clock_;
  transport::Transport* transport = transport_.get();
  ASSIGN_OR_RETURN(peer_service_, peer::PeerService::Create(service_options, store_.get(),
                                                            [transport](uint64_t offset, uint64_t length) {
                                                              return transport->RegionFor(offset, length);
                                                            }));
  transport::RequestHandler* handler = peer_service_.get();
  if (wrap_peer_handler) {
    peer_handler_ = wrap_peer_handler(peer_service_.get());
    if (peer_handler_ == nullptr) return MakeError(ErrorCode::kInvalidArgument, "peer handler wrapper returned null");
    handler = peer_handler_.get();
  }
  ASSIGN_OR_RETURN(listen_address_, transport_->Listen(options_.listen, handler));

  const bool verbs = transport_->name() == "verbs";
  NodeRecord node;
  node.node_id = node_id_;
  (verbs ? node.verbs_address : node.tcp_address) = listen_address_;
  node.epoch = static_cast<uint64_t>(absl::ToUnixMillis(clock_->Now()));
  absl::Status registered = directory_->RegisterNode(node);
  if (!registered.ok()) LOG(ERROR) << "directory unreachable at start (will retry): " << registered;

  channels_ = std::make_unique<fetch::ChannelCache>(transport_.get(), verbs, lookups_.get(), policy_.get(),
                                                    store_.get(), &stats_, clock_);
  fetch::FetchEngineOptions fetch_options = options_.fetch;
  fetch_options.self_node_id = node_id_;
  // A client that reads the shared index waits there for its fetched objects to show sealed, so
  // their store requests are not waited for (FetchEngine::Fetch).
  fetch_options.batch.seal_detached = true;
  fetch_options.location_cache.node_ttl = options_.directory.node_ttl;
  expected_copies_ = std::make_unique<fetch::ExpectedCopies>(clock_);
  fetch_options.expected_copies = expected_copies_.get();
  lease_ender_ = std::make_unique<peer::LeaseEnder>(peer::LeaseEnderOptions{}, *clock_);
  fetch_options.lease_ender = lease_ender_.get();
  RETURN_IF_ERROR(fetch_options.Validate());
  fetch_engine_ = std::make_unique<fetch::FetchEngine>(fetch_options, lookups_.get(), store_.get(), channels_.get(),
                                                       policy_.get(), &stats_, clock_);

  ASSIGN_OR_RETURN(std::unique_ptr<Subscription> subscription, client_->Subscribe(/*include_existing=*/true));
  ObjectPublisherOptions publisher_options;
  publisher_options.reconcile_interval = options_.reconcile_interval;
  publisher_options.expected_copies = expected_copies_.get();
  publisher_options.copy_publish_delay = options_.copy_publish_delay;
  RETURN_IF_ERROR(publisher_options.Validate());
  publisher_ = std::make_unique<ObjectPublisher>(node_id_, std::move(subscription), directory_.get(), store_.get(),
                                                 &stats_, clock_, publisher_options);
  ObjectPublisher* publisher = publisher_.get();
  // Redis came back: the publisher re-publishes this node's objects, and the next heartbeat
  // reconnects the fetch side's idle lanes (ReconnectIdle), which fetches by cache, hint or guess
  // may not use for a long while.
  redis_->SetReconnectCallback([this, publisher] {
    publisher->RequestRepublish();
    lanes_reconnect_.store(true);
  });
  heartbeat_ = std::thread([this] { HeartbeatLoop(); });

  if (!options_.client_socket.empty()) {
    ClientSocketServerOptions server_options;
    server_options.max_connections = options_.max_client_connections;
    server_options.request_deadline = options_.client_request_deadline;
    fetch::FetchEngine* engine = fetch_engine_.get();
    ASSIGN_OR_RETURN(client_server_,
                     ClientSocketServer::Start(
                         options_.client_socket, server_options,
                         [engine](const ManagerFetchRequest& request) {
                           fetch::FetchCall call{request.hint_node, request.caller_waits_for_seal, std::nullopt};
                           if (request.protocol == ForcedProtocol::kGet) {
                             call.protocol = peer::PeerProtocol::kGet;
                           } else if (request.protocol == ForcedProtocol::kPin) {
                             call.protocol = peer::PeerProtocol::kPin;
                           }
                           return engine->Fetch(request.ids, absl::Milliseconds(request.timeout_ms), call);
                         },
                         [this] {
                           return ManagerStatsReply{StatsJson(), node_id_};
                         }));
    client_server_for_stats_.store(client_server_.get(), std::memory_order_release);
  }
  ASSIGN_OR_RETURN(metrics_exporter_, MetricsExporter::Start(
                                          options_.metrics, [this] { return MetricsText(); }, "rplasma-manager"));
  LOG(INFO) << "rplasma-manager " << node_id_ << " serving " << transport_->name() << " at " << listen_address_
            << ", threshold " << options_.pin_threshold;
  return absl::OkStatus();
}

void Manager::HeartbeatLoop() {
  const absl::Duration interval = options_.directory.node_ttl / 3;
  absl::Time last_log = absl::InfinitePast();
  MutexLock lock(&heartbeat_mu_);
  while (!lock.AwaitWithTimeout(absl::Condition(&stopping_), interval)) {
    lock.Unlock();
    absl::Status status = directory_->Heartbeat();
    // (Again at the next heartbeat if a lane could not reconnect yet: its backoff after the
    // failed attempts while Redis was down may outlast this one.)
    if (status.ok() && lanes_reconnect_.exchange(false) && !lookups_->ReconnectIdle(node_id_)) {
      lanes_reconnect_.store(true);
    }
    if (!status.ok()) {
      stats_.heartbeat_errors.fetch_add(1, std::memory_order_relaxed);
      if (clock_->Now() - last_log > absl::Seconds(5)) {
        LOG(WARNING) << "directory heartbeat failed: " << status;
        last_log = clock_->Now();
      }
    }
    lock.Lock();
  }
}

void Manager::Shutdown() {
  if (shut_down_) return;
  shut_down_ = true;
  metrics_exporter_.reset();                     // its threads render from everything below
  if (fetch_engine_) fetch_engine_->Shutdown();  // waiting fetches give up, so connections end
  if (client_server_) client_server_->Shutdown();
  if (lease_ender_) lease_ender_->Stop();  // the last fetches' leases end while the channels stand
  {
    MutexLock lock(&heartbeat_mu_);
    stopping_ = true;
  }
  if (heartbeat_.joinable()) heartbeat_.join();
  if (redis_ != nullptr) redis_->SetReconnectCallback({});
  if (publisher_) publisher_->Stop();
  if (transport_) transport_->Shutdown();  // no more peer calls; connections' leases dropped
  if (peer_service_) peer_service_->Shutdown();
  if (channels_) channels_->Clear();
  if (directory_ && !listen_address_.empty()) {
    absl::Status s = directory_->UnregisterNode();
    if (!s.ok()) LOG(WARNING) << "unregister from the directory: " << s;
  }
}

Manager::~Manager() { Shutdown(); }

JsonObject Manager::ClientSocketJson() const {
  JsonObject json;
  const ClientSocketServer* server = client_server_for_stats_.load(std::memory_order_acquire);
  if (server == nullptr) return json;
  return server->stats().ToJson();
}

namespace {

// One concurrency class of a peer's policy (stats "peer_policy").
JsonObject PolicyJson(const fetch::PeerExplanation& e) {
  JsonArray estimates;
  for (const fetch::PeerExplanation::SizeClass& c : e.estimates) {
    estimates.Object(JsonObject()
                         .Number("bytes", c.bytes)
                         .Decimal("get_us", c.get_us, 1)
                         .Number("get_samples", c.get_samples)
                         .Decimal("pin_us", c.pin_us, 1)
                         .Number("pin_samples", c.pin_samples));
  }
  return JsonObject()
      .String("objects", e.objects)
      .Number("threshold", e.threshold)
      .Number("flips", e.flips)
      .Number("link_changes", e.link_changes)
      .String("reason", e.reason)
      .Array("estimates", estimates);
}

}  // namespace

std::string Manager::StatsJson() const {
  JsonObject thresholds;
  JsonObject policy;
  for (const auto& [peer, e] : policy_->Explain()) {
    thresholds.Number(peer, e.threshold);
    JsonArray batches;
    for (const fetch::PeerExplanation& b : e.batches) batches.Object(PolicyJson(b));
    policy.Object(peer, PolicyJson(e).Array("batches", batches));
  }
  // In name order, as scripts have always seen them.
  JsonObject extra;
  extra.Number("default_threshold", policy_->default_threshold())
      .String("node_id", node_id_)
      .Object("peer_policy", policy)
      .Object("peer_service", peer_service_->stats().ToJson())
      .Object("peer_thresholds", thresholds)
      .Object("peer_unpins",
              JsonObject().Number("ended", lease_ender_->ended()).Number("failed", lease_ender_->failed()))
      .String("threshold_mode", threshold_mode_)
      .Object("client_socket", ClientSocketJson())
      .String("transport", transport_->name())
      .Object("transport_stats", transport_->stats().ToJson());
  return stats_.ToJson(extra);
}

std::string Manager::MetricsText() const {
  ManagerMetricsSources sources;
  sources.stats = &stats_;
  sources.node_id = node_id_;
  sources.transport = std::string(transport_->name());
  sources.transport_stats = transport_->stats();
  sources.peer_service = peer_service_->stats();
  const std::map<std::string, fetch::PeerExplanation> policy = policy_->Explain();
  for (const auto& [peer, e] : policy) {
    sources.peer_thresholds.push_back(
        ManagerMetricsSources::PeerThreshold{peer, e.objects, e.threshold, e.flips, e.link_changes});
    for (const fetch::PeerExplanation& b : e.batches) {
      sources.peer_thresholds.push_back(
          ManagerMetricsSources::PeerThreshold{peer, b.objects, b.threshold, b.flips, b.link_changes});
    }
  }
  sources.known_peers = policy.size();
  return RenderManagerMetrics(sources);
}

}  // namespace rplasma::manager
