// TcpChannel: the reader side of one authenticated tcp connection to a peer manager.
//
// Many threads may Call and Read at once. Each request gets a fresh request id and a Pending
// record; requests are written whole under `write_mu_`, so they never interleave on the stream.
//
// Replies are read leader/follower (ReplyDemultiplexer), with no reader thread: a caller waiting for
// its reply either leads — it is the one thread reading the socket; it reads reply headers, finds the Pending by
// id, and receives the payload into its destination (the reply string for a Call, the caller's
// `dst` inside the registered arena for a Read) — or sleeps until its Pending is done or nobody
// leads. A leader stops leading once its own reply is in; a waiter then takes over. So a single
// caller costs its request out and its reply in, with no thread hand-off on this side. Replies
// are read through a small buffer (TcpReceiveBuffer), so a small reply's header and payload
// usually cost one recv(); bulk payload beyond what that recv() over-read goes straight into the
// destination.
//
// Failure model: the connection is all-or-nothing. EOF, a socket error, a malformed reply, or a
// request whose deadline passes (its reply may still be in flight, so the stream position is lost)
// closes the channel: healthy() turns false, every pending request fails promptly with
// kUnavailable (the one that timed out gets kDeadlineExceeded), and later requests fail at once.
// An idle channel has no reader: healthy() peeks at the socket (one non-blocking recv) so a peer
// that closed it is seen before the next request. The transport replaces an unhealthy channel on
// the next Connect. A waiter never returns while the leader may still write into its destination.
//
// Thread-safety: all public methods are thread-safe. Close() (also run by the destructor) waits
// for a leader to finish its read, which the socket shutdown makes prompt.
#ifndef RPLASMA_MANAGER_TRANSPORT_TCP_TCP_CHANNEL_H_
#define RPLASMA_MANAGER_TRANSPORT_TCP_TCP_CHANNEL_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "manager/transport/tcp/arena_view.h"
#include "manager/transport/tcp/tcp_receive_buffer.h"
#include "manager/transport/tcp/tcp_wire.h"
#include "manager/transport/transport.h"
#include "protocol/base/reply_demultiplexer.h"
#include "protocol/base/unique_fd.h"

namespace rplasma::transport::tcp {

class TcpChannel : public Channel {
 public:
  // Takes an authenticated, configured, non-blocking connection.
  static absl::StatusOr<std::shared_ptr<TcpChannel>> Create(UniqueFd fd, std::string peer_address,
                                                            ArenaView arena,
                                                            std::shared_ptr<TransportCounters> counters);
  ~TcpChannel() override;
  TcpChannel(const TcpChannel&) = delete;
  TcpChannel& operator=(const TcpChannel&) = delete;

  // kInvalidArgument for a request above kMaxCallBytes; the owner's error for a refused call.
  absl::StatusOr<std::string> Call(absl::string_view request, absl::Time deadline) override;
  // REQUIRES: [dst, dst + region.length) inside the arena given to Create (else kInvalidArgument).
  // region.addr is the owner's arena offset. The owner refuses (kPermissionDenied) regions not
  // inside a live lease of this connection, and out-of-arena regions (kInvalidArgument).
  absl::Status Read(const RemoteRegion& region, uint8_t* dst, absl::Time deadline) override;
  bool healthy() const override;
  const std::string& peer_address() const override { return peer_address_; }

  // Fails every pending request and waits for the leader (if any) to stop reading. Idempotent.
  void Close();

 private:
  // One request's reply slot; `expect`, `dst` and `length` are fixed before it is registered.
  struct Pending : ReplyWaiter {
    TcpKind expect;          // kCallReply or kReadData (kError is always acceptable)
    uint8_t* dst = nullptr;  // Read destination
    uint64_t length = 0;     // Read length
    std::string reply;       // Call result (filled by the leader while it holds the claim)
  };

  TcpChannel(UniqueFd fd, std::string peer_address, ArenaView arena, std::shared_ptr<TransportCounters> counters);

  // Registers `pending`, sends header + payload, waits. Returns the final status.
  absl::Status Execute(Pending& pending, TcpHeader header, const void* payload, size_t payload_bytes,
                       absl::Time deadline);
  // The demultiplexer's break hook: marks the channel closed, shuts the socket down so a leader
  // blocked in recv() wakes, and returns the status the pending requests fail with.
  absl::Status OnBreak(const absl::Status& reason);
  // Receives one reply (as the leader, without the lock) by `deadline` and finishes its Pending. On
  // error the demultiplexer closes the channel; a Pending that was being received is already done
  // with its error.
  absl::Status ReadOneReply(absl::Time deadline);

  const UniqueFd fd_;
  const std::string peer_address_;
  const ArenaView arena_;
  const std::shared_ptr<TransportCounters> counters_;
  std::atomic<uint64_t> next_request_id_{1};
  std::atomic<bool> closed_flag_{false};

  absl::Mutex write_mu_;  // one request on the wire at a time
  // Pending requests by id, leadership, and why the channel closed. Declared after what its hooks use.
  ReplyDemultiplexer demux_;

  TcpReceiveBuffer rx_;  // used only by the leader, handed on through the demultiplexer's lock
};

}  // namespace rplasma::transport::tcp

#endif  // RPLASMA_MANAGER_TRANSPORT_TCP_TCP_CHANNEL_H_
