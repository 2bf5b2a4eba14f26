// TcpChannel: the reader side of one authenticated tcp connection to a peer manager.
//
// Many threads may Call and Read at once. Each request gets a fresh request id and a Pending
// record; requests are written whole under `write_mu_`, so they never interleave on the stream.
// One reader thread per channel reads reply headers, finds the Pending by id, and receives the
// payload into its destination: the reply string for a Call, the caller's `dst` (inside the
// registered arena) for a Read. Replies are read through a small buffer (TcpReceiveBuffer), so a
// small reply's header and payload usually cost one recv(); bulk payload beyond what that recv()
// over-read goes straight into the destination. The waiter sleeps on `mu_` until
// its Pending is done or its deadline passes.
//
// Failure model: the connection is all-or-nothing. EOF, a socket error, a malformed reply, or a
// request whose deadline passes (its reply may still be in flight, so the stream position is lost)
// closes the channel: healthy() turns false, every pending request fails promptly with
// kUnavailable (the one that timed out gets kDeadlineExceeded), and later requests fail at once.
// The transport replaces an unhealthy channel on the next Connect. A waiter never returns while
// the reader thread may still write into its destination.
//
// Thread-safety: all public methods are thread-safe. Close() (also run by the destructor) joins
// the reader thread and must not be called from it.
#ifndef RPLASMA_MANAGER_TRANSPORT_TCP_TCP_CHANNEL_H_
#define RPLASMA_MANAGER_TRANSPORT_TCP_TCP_CHANNEL_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "manager/transport/tcp/tcp_counters.h"
#include "manager/transport/tcp/tcp_receive_buffer.h"
#include "manager/transport/tcp/tcp_wire.h"
#include "manager/transport/transport.h"
#include "protocol/unique_fd.h"

namespace rplasma::transport::tcp {

class TcpChannel : public Channel {
 public:
  // Takes an authenticated, configured, non-blocking connection and starts its reader thread.
  static absl::StatusOr<std::shared_ptr<TcpChannel>> Create(UniqueFd fd, std::string peer_address,
                                                            ArenaView arena,
                                                            std::shared_ptr<TcpCounters> counters);
  ~TcpChannel() override;
  TcpChannel(const TcpChannel&) = delete;
  TcpChannel& operator=(const TcpChannel&) = delete;

  // kInvalidArgument for a request above kMaxCallBytes; the owner's error for a refused call.
  absl::StatusOr<std::string> Call(absl::string_view request, absl::Time deadline) override;
  // REQUIRES: [dst, dst + region.length) inside the arena given to Create (else kInvalidArgument).
  // region.addr is the owner's arena offset. The owner refuses (kPermissionDenied) regions not
  // inside a live lease of this connection, and out-of-arena regions (kInvalidArgument).
  absl::Status Read(const RemoteRegion& region, uint8_t* dst, absl::Time deadline) override;
  bool healthy() const override { return !closed_flag_.load(std::memory_order_acquire); }
  const std::string& peer_address() const override { return peer_address_; }

  // Fails every pending request and joins the reader. Idempotent.
  void Close();

 private:
  struct Pending {
    TcpKind expect;            // kCallReply or kReadData (kError is always acceptable)
    uint8_t* dst = nullptr;    // Read destination
    uint64_t length = 0;       // Read length
    std::string reply;         // Call result
    absl::Status status;
    bool done = false;         // status/reply final; the reader no longer touches this record
    bool idle = true;          // false while the reader fills dst/reply (without mu_)
  };

  TcpChannel(UniqueFd fd, std::string peer_address, ArenaView arena, std::shared_ptr<TcpCounters> counters);

  // Registers `pending`, sends header + payload, waits. Returns the final status.
  absl::Status Execute(Pending& pending, TcpHeader header, const void* payload, size_t payload_bytes,
                       absl::Time deadline);
  // Marks the channel closed with `reason`, fails every pending request not being received, and
  // shuts the socket down so the reader thread wakes.
  void FailLocked(const absl::Status& reason) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ReaderLoop();
  // Receives one reply; an error closes the channel.
  absl::Status ReadOneReply();

  const UniqueFd fd_;
  const std::string peer_address_;
  const ArenaView arena_;
  const std::shared_ptr<TcpCounters> counters_;
  std::atomic<uint64_t> next_request_id_{1};
  std::atomic<bool> closed_flag_{false};

  absl::Mutex write_mu_;  // one request on the wire at a time
  absl::Mutex mu_;
  absl::flat_hash_map<uint64_t, Pending*> pending_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status close_reason_ ABSL_GUARDED_BY(mu_);

  TcpReceiveBuffer rx_;  // the reader thread's only
  absl::Mutex join_mu_;
  std::thread reader_ ABSL_GUARDED_BY(join_mu_);
};

}  // namespace rplasma::transport::tcp

#endif  // RPLASMA_MANAGER_TRANSPORT_TCP_TCP_CHANNEL_H_
