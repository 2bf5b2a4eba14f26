#include "manager/transport/tcp/tcp_transport.h"

#include <sys/socket.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

#include "manager/auth/peer_auth.h"
#include "manager/transport/tcp/tcp_socket.h"
#include "protocol/base/logging.h"
#include "protocol/base/mutex_lock.h"
#include "protocol/base/status.h"

namespace rplasma::transport::tcp {

absl::Status TcpTuning::Validate() const {
  if (socket_buffer_bytes != 0 && (socket_buffer_bytes < (64 << 10) || socket_buffer_bytes > (256 << 20))) {
    return MakeError(ErrorCode::kInvalidArgument, "socket_buffer_bytes must be 0 or 64 KiB..256 MiB");
  }
  if (dead_peer_timeout < absl::Seconds(1) || dead_peer_timeout > absl::Hours(1)) {
    return MakeError(ErrorCode::kInvalidArgument, "dead_peer_timeout must be 1 s..1 h");
  }
  if (retire_stalled_after < absl::Milliseconds(10) || retire_stalled_after > absl::Hours(1)) {
    return MakeError(ErrorCode::kInvalidArgument, "retire_stalled_after must be 10 ms..1 h");
  }
  // A kernel name (TCP_CA_NAME_MAX is 16 with its NUL): lower-case letters, digits, '_'.
  if (congestion_control.size() > 15 || !std::all_of(congestion_control.begin(), congestion_control.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
      })) {
    return MakeError(ErrorCode::kInvalidArgument, absl::StrCat("congestion_control '", congestion_control,
                                                               "': not a kernel congestion control name"));
  }
  return absl::OkStatus();
}

ConnectionOptions TcpTuning::connection() const {
  return {.dead_peer_timeout = dead_peer_timeout,
          .buffer_bytes = socket_buffer_bytes,
          .congestion_control = congestion_control};
}

absl::StatusOr<std::unique_ptr<TcpTransport>> TcpTransport::Create(const TransportOptions& options,
                                                                   const TcpTuning& tuning) {
  RETURN_IF_ERROR(options.Validate());
  RETURN_IF_ERROR(tuning.Validate());
  if (options.secret.empty()) {
    LOG(WARNING) << "tcp transport: empty secret; every peer will be refused";
  }
  return std::unique_ptr<TcpTransport>(new TcpTransport(options, tuning));
}

TcpTransport::TcpTransport(const TransportOptions& options, const TcpTuning& tuning)
    : options_(options), tuning_(tuning), counters_(std::make_shared<TransportCounters>()) {}

TcpTransport::~TcpTransport() { Shutdown(); }

absl::Status TcpTransport::RegisterArena(uint8_t* base, uint64_t size) {
  if (base == nullptr || size == 0) return MakeError(ErrorCode::kInvalidArgument, "RegisterArena: empty arena");
  MutexLock lock(&mu_);
  if (arena_.registered()) return absl::FailedPreconditionError("RegisterArena: an arena is already registered");
  arena_ = ArenaView{base, size};
  return absl::OkStatus();
}

RemoteRegion TcpTransport::RegionFor(uint64_t offset, uint64_t length) const { return RemoteRegion{offset, length, 0}; }

size_t TcpTransport::server_connection_count() const {
  MutexLock lock(&mu_);
  return server_conns_.size() + (handshakes_ != nullptr ? handshakes_->pending() : 0);
}

size_t TcpTransport::handshakes_pending() const {
  MutexLock lock(&mu_);
  return handshakes_ != nullptr ? handshakes_->pending() : 0;
}

absl::StatusOr<std::string> TcpTransport::Listen(const std::string& address, RequestHandler* handler) {
  if (handler == nullptr) return MakeError(ErrorCode::kInvalidArgument, "Listen: null RequestHandler");
  MutexLock lock(&mu_);
  if (shut_down_) return MakeError(ErrorCode::kUnavailable, "Listen: transport is shut down");
  if (listen_fd_.valid()) return absl::FailedPreconditionError("Listen: already listening");
  ASSIGN_OR_RETURN(UniqueFd fd, TcpListen(address));
  ASSIGN_OR_RETURN(std::string bound, LocalAddress(fd.get()));
  auth::HandshakeLimits limits;
  limits.timeout = options_.handshake_timeout;
  limits.max_pending = options_.max_handshakes;
  limits.max_pending_per_source = options_.max_handshakes_per_source;
  ASSIGN_OR_RETURN(handshakes_,
                   auth::HandshakePool::Create(
                       "tcp transport", options_.secret, limits,
                       [this](UniqueFd conn, const std::string& peer) { ServeAuthenticated(std::move(conn), peer); },
                       [this](const std::string& peer, const absl::Status& why) { CountAuthFailure(peer, why); }));
  handler_ = handler;
  listen_fd_ = std::move(fd);
  accept_thread_ = std::thread([this, raw = listen_fd_.get()] { AcceptLoop(raw); });
  LOG(INFO) << "tcp transport: listening on " << bound;
  return bound;
}

void TcpTransport::AcceptLoop(int listen_fd) {
  while (true) {
    absl::StatusOr<UniqueFd> accepted = TcpAccept(listen_fd, absl::Now() + kReapInterval);
    auth::HandshakePool* handshakes = nullptr;
    {
      MutexLock lock(&mu_);
      if (shut_down_) return;
      ReapFinishedLocked();
      handshakes = handshakes_.get();
    }
    if (!accepted.ok()) {
      ErrorCode code = ErrorCodeOf(accepted.status());
      if (code == ErrorCode::kDeadlineExceeded) continue;
      LOG(WARNING) << "tcp transport: " << accepted.status().message();
      if (code == ErrorCode::kOutOfMemory) continue;  // fd exhaustion: TcpAccept backed off
      return;
    }
    absl::StatusOr<std::string> peer = RemoteAddress(accepted->get());
    // Never blocks; past its caps the pool closes its oldest handshake, never this newcomer. Outside
    // mu_ (the pool is only torn down after this thread is joined): no lock is taken inside another.
    handshakes->Add(*std::move(accepted), peer.ok() ? *peer : "unknown");
  }
}

void TcpTransport::ServeAuthenticated(UniqueFd fd, const std::string& peer) {
  MutexLock lock(&mu_);
  if (shut_down_) return;
  ReapFinishedLocked();
  if (server_conns_.size() >= kMaxServerConnections) {
    LOG(WARNING) << "tcp transport: " << server_conns_.size() << " authenticated connections; refusing " << peer;
    return;  // closes the socket
  }
  ServerContext context;
  context.arena = arena_;
  context.handler = handler_;
  context.counters = counters_;
  context.connection = tuning_.connection();
  uint64_t id = next_conn_id_++;
  auto conn = std::make_unique<TcpServerConnection>(id, std::move(fd), peer, std::move(context));
  conn->Start();
  server_conns_.emplace(id, std::move(conn));
}

void TcpTransport::CountAuthFailure(const std::string& peer, const absl::Status& why) {
  const uint64_t failures = counters_->auth_failures.fetch_add(1) + 1;
  // A flood must not flood the log too: the first few, then one line per thousand.
  if (failures <= 10 || failures % 1000 == 0) {
    LOG(WARNING) << "tcp transport: peer " << peer << " not authenticated (" << failures
                 << " so far): " << why.message();
  }
}

void TcpTransport::ReapFinishedLocked() {
  for (auto it = server_conns_.begin(); it != server_conns_.end();) {
    if (it->second->finished()) {
      it->second->Join();  // its thread is exiting: only the thread's last instructions remain
      server_conns_.erase(it++);
    } else {
      ++it;
    }
  }
}

absl::StatusOr<std::shared_ptr<Channel>> TcpTransport::Connect(const std::string& address, absl::Time deadline) {
  std::vector<std::shared_ptr<TcpChannel>> dead;
  ArenaView arena;
  {
    MutexLock lock(&mu_);
    if (shut_down_) return MakeError(ErrorCode::kUnavailable, "Connect: transport is shut down");
    auto it = channels_.find(address);
    if (it != channels_.end() && it->second->healthy()) return std::shared_ptr<Channel>(it->second);
    if (it != channels_.end()) counters_->reconnects.fetch_add(1);
    // Drop every failed channel, not only this address's, so dead peers do not pin fds.
    for (auto c = channels_.begin(); c != channels_.end();) {
      if (!c->second->healthy()) {
        dead.push_back(std::move(c->second));
        channels_.erase(c++);
      } else {
        ++c;
      }
    }
    arena = arena_;
  }
  dead.clear();  // joins their (already finished) readers unless a caller still holds one
  ASSIGN_OR_RETURN(std::shared_ptr<TcpChannel> channel, OpenChannel(address, arena, deadline));

  MutexLock lock(&mu_);
  if (shut_down_) {
    channel->Close();
    return MakeError(ErrorCode::kUnavailable, "Connect: transport shut down meanwhile");
  }
  auto [it, inserted] = channels_.try_emplace(address, channel);
  if (!inserted) {
    if (it->second->healthy()) return std::shared_ptr<Channel>(it->second);  // a concurrent Connect won
    it->second = channel;
  }
  return std::shared_ptr<Channel>(channel);
}

absl::StatusOr<std::shared_ptr<TcpChannel>> TcpTransport::OpenChannel(const std::string& address, ArenaView arena,
                                                                      absl::Time deadline) {
  absl::Time connect_deadline = std::min(deadline, absl::Now() + options_.connect_timeout);
  ASSIGN_OR_RETURN(UniqueFd fd, TcpConnect(address, connect_deadline));
  RETURN_IF_ERROR(ConfigureConnection(fd.get(), tuning_.connection()));
  absl::Status auth = auth::AuthenticateAsClient(fd.get(), options_.secret, connect_deadline);
  if (!auth.ok()) {
    ErrorCode code = ErrorCodeOf(auth);
    if (code == ErrorCode::kPermissionDenied || code == ErrorCode::kProtocolError) {
      counters_->auth_failures.fetch_add(1);
    }
    return MakeError(code, absl::StrCat("Connect(", address, "): ", auth.message()));
  }
  return TcpChannel::Create(std::move(fd), address, arena, counters_, tuning_.retire_stalled_after,
                            tuning_.dead_peer_timeout);
}

absl::StatusOr<std::shared_ptr<Channel>> TcpTransport::ConnectPrivate(const std::string& address, absl::Time deadline) {
  ArenaView arena;
  {
    MutexLock lock(&mu_);
    if (shut_down_) return MakeError(ErrorCode::kUnavailable, "ConnectPrivate: transport is shut down");
    arena = arena_;
  }
  ASSIGN_OR_RETURN(std::shared_ptr<TcpChannel> channel, OpenChannel(address, arena, deadline));
  MutexLock lock(&mu_);
  if (shut_down_) {
    channel->Close();
    return MakeError(ErrorCode::kUnavailable, "ConnectPrivate: transport shut down meanwhile");
  }
  // Remembered only so that Shutdown can close it; it closes when its last holder lets go.
  std::erase_if(private_channels_, [](const std::weak_ptr<TcpChannel>& c) { return c.expired(); });
  private_channels_.push_back(channel);
  return std::shared_ptr<Channel>(std::move(channel));
}

void TcpTransport::Shutdown() {
  MutexLock serial(&shutdown_mu_);
  std::thread accept_thread;
  absl::flat_hash_map<uint64_t, std::unique_ptr<TcpServerConnection>> conns;
  absl::flat_hash_map<std::string, std::shared_ptr<TcpChannel>> channels;
  std::vector<std::weak_ptr<TcpChannel>> private_channels;
  {
    MutexLock lock(&mu_);
    if (shut_down_) return;
    shut_down_ = true;
    if (listen_fd_.valid()) ::shutdown(listen_fd_.get(), SHUT_RDWR);
    accept_thread = std::move(accept_thread_);
  }
  // The accept thread sees shut_down_ at its next wake-up and takes no new connection after it.
  if (accept_thread.joinable()) accept_thread.join();
  auth::HandshakePool* handshakes = nullptr;
  {
    MutexLock lock(&mu_);
    handshakes = handshakes_.get();
  }
  // Without mu_: the pool thread may be waiting for it in ServeAuthenticated (which then sees
  // shut_down_ and closes the connection). The pool itself lives until the destructor.
  if (handshakes != nullptr) handshakes->Shutdown();
  {
    MutexLock lock(&mu_);
    conns = std::move(server_conns_);
    channels = std::move(channels_);
    private_channels = std::move(private_channels_);
    listen_fd_.reset();
  }
  for (auto& [id, conn] : conns) conn->Stop();
  for (auto& [id, conn] : conns) conn->Join();  // each runs OnDisconnect before it ends
  for (auto& [address, channel] : channels) channel->Close();
  for (std::weak_ptr<TcpChannel>& held : private_channels) {
    if (std::shared_ptr<TcpChannel> channel = held.lock()) channel->Close();
  }
}

}  // namespace rplasma::transport::tcp
