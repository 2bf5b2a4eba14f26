// TcpTransport: the Transport over plain TCP (any Ethernet, loopback in tests).
//
// Serving side: Listen() starts one accept thread and one HandshakePool (manager/auth/): every
// accepted connection first runs the peer handshake on the pool's thread, within
// TransportOptions::handshake_timeout and the pool's per-source and overall caps, holding no thread
// of its own. Only a peer that proved the secret gets a serving thread (TcpServerConnection), which
// serves its requests in order. At most kMaxServerConnections authenticated connections are served
// at once; more are closed once authenticated. Finished connections are reaped within kReapInterval.
//
// Reading side: Connect() returns a cached healthy channel to `address` if there is one, else
// connects, authenticates and caches a new TcpChannel (replacing an unhealthy one counts as a
// reconnect). Channels are shared: many threads may use one at once. ConnectPrivate() opens one
// that is not (a probe's own connection).
//
// Arena: RegionFor(offset, length) is {addr = offset, length, rkey = 0}; peers name arena offsets,
// never our addresses.
//
// Dead peers: every connection has TCP keepalive and TCP_USER_TIMEOUT of
// TcpTuning::dead_peer_timeout, a channel closes when its outstanding requests get no reply byte
// for that long (one request's deadline never closes it), and a serving thread drops a peer that
// stalls mid-message for kPeerStallTimeout. New requests leave such a channel sooner, after
// TcpTuning::retire_stalled_after, for a fresh connection.
//
// Thread-safety: all methods are thread-safe. The RequestHandler passed to Listen must outlive
// Shutdown(). Shutdown() stops accepting, closes every connection (OnDisconnect runs for each
// served one), fails pending requests on every channel, joins all threads; idempotent.
#ifndef RPLASMA_MANAGER_TRANSPORT_TCP_TCP_TRANSPORT_H_
#define RPLASMA_MANAGER_TRANSPORT_TCP_TCP_TRANSPORT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

#include "manager/auth/handshake_pool.h"
#include "manager/transport/tcp/arena_view.h"
#include "manager/transport/tcp/tcp_channel.h"
#include "manager/transport/tcp/tcp_server_connection.h"
#include "manager/transport/transport.h"
#include "protocol/base/unique_fd.h"

namespace rplasma::transport::tcp {

inline constexpr size_t kMaxServerConnections = 1024;
inline constexpr absl::Duration kReapInterval = absl::Milliseconds(200);

// tcp-only knobs (TransportOptions holds what every transport shares).
struct TcpTuning {
  // SO_SNDBUF/SO_RCVBUF of every connection; 0 keeps kernel autotuning. 0 or 64 KiB .. 256 MiB.
  int socket_buffer_bytes = 0;
  // Keepalive/TCP_USER_TIMEOUT: a host that vanished without a FIN is noticed within about this.
  // Also a channel's stall timeout: outstanding requests that see no reply byte for this long, or
  // a reply that stops mid-way for this long, close the channel. 1 s .. 1 h.
  absl::Duration dead_peer_timeout = absl::Seconds(30);
  // A channel whose outstanding requests see no reply byte for this long (a peer answers every
  // request at once, so the path is lossy or broken) is replaced for new requests by a fresh
  // connection; the old one keeps the requests in flight until dead_peer_timeout. The smaller of
  // the two applies. 10 ms .. 1 h.
  absl::Duration retire_stalled_after = absl::Seconds(2);
  // TCP_CONGESTION of every connection; "" keeps the system's default. Not BBR: BBR paces each
  // connection at the bandwidth it estimates, and a peer connection's traffic is bursts of
  // requests and replies, so the estimate can stay far below what the link carries and every
  // later large reply is paced out at it. Measured on loopback with BBR the system's default
  // (docs/TRANSPORT.md): in about half the runs one connection's 256 KiB Get replies took 2.3x as
  // long as another's for the whole run. Cubic does not pace (without the fq qdisc). Where the
  // kernel refuses the name, connections keep the default (ConfigureConnection).
  std::string congestion_control = "cubic";

  absl::Status Validate() const;
  ConnectionOptions connection() const;
};

class TcpTransport : public Transport {
 public:
  static absl::StatusOr<std::unique_ptr<TcpTransport>> Create(const TransportOptions& options,
                                                              const TcpTuning& tuning = {});
  ~TcpTransport() override;
  TcpTransport(const TcpTransport&) = delete;
  TcpTransport& operator=(const TcpTransport&) = delete;

  absl::string_view name() const override { return "tcp"; }
  // Once; base non-null and size > 0.
  absl::Status RegisterArena(uint8_t* base, uint64_t size) override;
  RemoteRegion RegionFor(uint64_t offset, uint64_t length) const override;
  // Once. REQUIRES: handler non-null and alive until Shutdown().
  absl::StatusOr<std::string> Listen(const std::string& address, RequestHandler* handler) override;
  absl::StatusOr<std::shared_ptr<Channel>> Connect(const std::string& address, absl::Time deadline) override;
  // A new connection every time, not cached; Shutdown closes it too.
  absl::StatusOr<std::shared_ptr<Channel>> ConnectPrivate(const std::string& address, absl::Time deadline) override;
  TransportStats stats() const override { return counters_->Snapshot(); }
  void Shutdown() override;

  // Server connections currently tracked (authenticating or serving), for tests and stats.
  size_t server_connection_count() const;
  // Of those, the ones still authenticating (in the handshake pool).
  size_t handshakes_pending() const;

 private:
  TcpTransport(const TransportOptions& options, const TcpTuning& tuning);
  void AcceptLoop(int listen_fd);
  // The handshake pool's verdicts (on its thread).
  void ServeAuthenticated(UniqueFd fd, const std::string& peer);
  void CountAuthFailure(const std::string& peer, const absl::Status& why);
  void ReapFinishedLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Connects, configures and authenticates a new channel (cached by neither).
  absl::StatusOr<std::shared_ptr<TcpChannel>> OpenChannel(const std::string& address, ArenaView arena,
                                                          absl::Time deadline);

  const TransportOptions options_;
  const TcpTuning tuning_;
  const std::shared_ptr<TransportCounters> counters_;

  absl::Mutex shutdown_mu_;  // serialises Shutdown() so a second call returns after the first
  mutable absl::Mutex mu_;
  ArenaView arena_ ABSL_GUARDED_BY(mu_);
  bool shut_down_ ABSL_GUARDED_BY(mu_) = false;
  UniqueFd listen_fd_ ABSL_GUARDED_BY(mu_);
  RequestHandler* handler_ ABSL_GUARDED_BY(mu_) = nullptr;
  std::thread accept_thread_ ABSL_GUARDED_BY(mu_);
  // Made by Listen, shut down (not destroyed) by Shutdown: its callbacks use this object.
  std::unique_ptr<auth::HandshakePool> handshakes_ ABSL_GUARDED_BY(mu_);
  uint64_t next_conn_id_ ABSL_GUARDED_BY(mu_) = 1;
  absl::flat_hash_map<uint64_t, std::unique_ptr<TcpServerConnection>> server_conns_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, std::shared_ptr<TcpChannel>> channels_ ABSL_GUARDED_BY(mu_);
  std::vector<std::weak_ptr<TcpChannel>> private_channels_ ABSL_GUARDED_BY(mu_);
};

}  // namespace rplasma::transport::tcp

#endif  // RPLASMA_MANAGER_TRANSPORT_TCP_TCP_TRANSPORT_H_
