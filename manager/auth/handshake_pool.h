// HandshakePool: runs the server side of the peer-auth handshake for every not-yet-authenticated
// connection of a listener on one poll()-driven thread, so that unauthenticated peers cost a slot
// in a small table, never a thread, and can never crowd out authenticated ones.
//
// Add() hands over an accepted connection. Limits (HandshakeLimits):
//   - each handshake must finish within `timeout` of Add, or it is closed (kDeadlineExceeded);
//   - at most `max_pending` handshakes run at once, at most `max_pending_per_source` from one source
//     address. A connection that would exceed a cap is admitted and the OLDEST pending handshake
//     (of the same source for the per-source cap, else overall) is closed (kUnavailable, "evicted"). A
//     real peer finishes in one round trip, so to push it out a flood must open a cap's worth of
//     connections within that round trip; refusing newcomers instead would let silent connections
//     lock real peers out for the whole timeout.
// A connection that proves the secret goes to `on_authenticated` (with its fd, still non-blocking,
// and nothing read past the handshake); every other ends in `on_failed` with why, then is closed.
// Both callbacks run with no pool lock held and must not block for long: on the pool thread, except
// that on_failed runs on the caller of Add for a queued connection dropped before the pool thread
// saw it (only when the thread lags max_pending connections behind).
//
// Thread-safety: Add, pending and Shutdown are thread-safe. Shutdown (also the destructor) closes
// every pending handshake without calling back and joins the thread; Add afterwards closes the fd.
#ifndef RPLASMA_MANAGER_AUTH_HANDSHAKE_POOL_H_
#define RPLASMA_MANAGER_AUTH_HANDSHAKE_POOL_H_

#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

#include "protocol/base/unique_fd.h"

namespace rplasma::auth {

struct HandshakeLimits {
  absl::Duration timeout = absl::Seconds(1);  // 10 ms .. 1 min
  size_t max_pending = 128;                   // 1 .. 65536
  size_t max_pending_per_source = 16;         // 1 .. max_pending

  absl::Status Validate() const;
};

class HandshakePool {
 public:
  using OnAuthenticated = std::function<void(UniqueFd fd, const std::string& peer_address)>;
  using OnFailed = std::function<void(const std::string& peer_address, const absl::Status& why)>;

  // `name` prefixes the pool's log lines ("tcp transport", "verbs auth port").
  static absl::StatusOr<std::unique_ptr<HandshakePool>> Create(std::string name, std::string secret,
                                                               const HandshakeLimits& limits,
                                                               OnAuthenticated on_authenticated, OnFailed on_failed);
  ~HandshakePool();
  HandshakePool(const HandshakePool&) = delete;
  HandshakePool& operator=(const HandshakePool&) = delete;

  // Adopts an accepted stream connection; `peer_address` is "ip:port" ("[v6]:port"), its host part
  // is the source the per-source cap counts. Never blocks.
  void Add(UniqueFd fd, std::string peer_address);
  // Handshakes admitted and not yet finished (queued ones included).
  size_t pending() const { return pending_.load(std::memory_order_acquire); }
  void Shutdown();

 private:
  struct Connection;

  HandshakePool(std::string name, std::string secret, const HandshakeLimits& limits, UniqueFd wake_fd,
                OnAuthenticated on_authenticated, OnFailed on_failed);
  void Run();
  // Moves queued connections into `live`, closing the oldest where a cap is exceeded.
  void AdmitQueued(std::vector<std::unique_ptr<Connection>>& live);
  // Removes live[i] and reports it.
  void Finish(std::vector<std::unique_ptr<Connection>>& live, size_t i, const absl::Status& why);

  const std::string name_;
  const std::string secret_;
  const HandshakeLimits limits_;
  const UniqueFd wake_fd_;  // eventfd: Add and Shutdown wake the thread
  const OnAuthenticated on_authenticated_;
  const OnFailed on_failed_;
  std::atomic<size_t> pending_{0};

  absl::Mutex shutdown_mu_;  // serialises Shutdown
  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::unique_ptr<Connection>> queued_ ABSL_GUARDED_BY(mu_);  // added, not yet seen by Run
  std::thread thread_;                                                    // started by Create, joined by Shutdown
};

// The host part of "ip:port" / "[v6]:port" (the whole string if it has no port).
std::string SourceOf(const std::string& peer_address);

}  // namespace rplasma::auth

#endif  // RPLASMA_MANAGER_AUTH_HANDSHAKE_POOL_H_
