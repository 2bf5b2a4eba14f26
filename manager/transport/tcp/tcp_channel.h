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
// Failure model: a request whose deadline passes abandons only itself. Its caller gets
// kDeadlineExceeded; the request id stays registered (detached), so its reply, if it comes late, is
// read whole and discarded — a Read's payload is drained into a scratch buffer, never into the
// caller's destination, which may be reused or freed by then. The other requests in flight and
// later ones are unaffected. A leader gives up waiting only at a reply boundary; once a reply's
// first byte is in, it receives the reply whole (bounded by the stall timeout, not by its own
// deadline), so the stream position is never lost to a deadline.
//
// The channel closes only when the connection itself fails: EOF, a socket error, a malformed reply
// (unknown id, wrong kind or length), a peer that stalls mid-reply for `stall_timeout`, or a peer
// that sends no byte at all for `stall_timeout` while requests are outstanding (it is alive at the
// TCP level but not answering). Then healthy() turns false, every pending request fails promptly
// with kUnavailable, and later requests fail at once. An idle channel has no reader: healthy()
// peeks at the socket (one non-blocking recv) so a peer that closed it is seen before the next
// request, and reports a channel with overdue outstanding replies as stalled. The transport
// replaces an unhealthy channel on the next Connect. A waiter never returns while the leader may
// still write into its destination.
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
  // Takes an authenticated, configured, non-blocking connection. `stall_timeout` (the transport's
  // dead-peer timeout) bounds how long outstanding requests may see no reply byte at all.
  static absl::StatusOr<std::shared_ptr<TcpChannel>> Create(UniqueFd fd, std::string peer_address,
                                                            ArenaView arena,
                                                            std::shared_ptr<TransportCounters> counters,
                                                            absl::Duration stall_timeout);
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

  TcpChannel(UniqueFd fd, std::string peer_address, ArenaView arena, std::shared_ptr<TransportCounters> counters,
             absl::Duration stall_timeout);

  // Registers `pending`, sends header + payload, waits. Returns the final status.
  absl::Status Execute(Pending& pending, TcpHeader header, const void* payload, size_t payload_bytes,
                       absl::Time deadline);
  // The demultiplexer's break hook: marks the channel closed, shuts the socket down so a leader
  // blocked in recv() wakes, and returns the status the pending requests fail with.
  absl::Status OnBreak(const absl::Status& reason);
  // Receives one reply (as the leader, without the lock) and finishes its Pending, or discards it if
  // its request was abandoned. kDeadlineExceeded only when `deadline` passes before the reply's
  // first byte (nothing consumed); any other error closes the channel (a Pending that was being
  // received is already done with its error).
  absl::Status ReadOneReply(absl::Time deadline);
  // ReadOneReply once the first header byte is in encoded[0]: the rest of the header, then the
  // payload into its Pending (or discarded). Any error closes the channel.
  absl::Status ReceiveReply(uint8_t (&encoded)[kTcpHeaderBytes]);
  // Reads and drops `bytes` payload bytes of a reply nobody waits for any more.
  absl::Status Discard(uint64_t bytes);
  // A reply byte arrived, or requests became outstanding on an idle channel.
  void NoteProgress();
  // Requests are outstanding and no reply byte arrived for `stall_timeout_` (and none is being received).
  bool StalledAt(absl::Time now) const;

  const UniqueFd fd_;
  const std::string peer_address_;
  const ArenaView arena_;
  const std::shared_ptr<TransportCounters> counters_;
  const absl::Duration stall_timeout_;
  std::atomic<uint64_t> next_request_id_{1};
  std::atomic<bool> closed_flag_{false};
  // Requests sent (or being sent) whose reply has not been read, abandoned ones included.
  std::atomic<int64_t> outstanding_{0};
  std::atomic<int64_t> last_progress_ns_;  // absl::ToUnixNanos of the last NoteProgress()
  std::atomic<bool> mid_reply_{false};     // the leader has consumed part of a reply

  absl::Mutex write_mu_;  // one request on the wire at a time
  // Pending requests by id, leadership, and why the channel closed. Declared after what its hooks use.
  ReplyDemultiplexer demux_;

  TcpReceiveBuffer rx_;  // used only by the leader, handed on through the demultiplexer's lock
};

}  // namespace rplasma::transport::tcp

#endif  // RPLASMA_MANAGER_TRANSPORT_TCP_TCP_CHANNEL_H_
