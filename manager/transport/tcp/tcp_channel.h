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
// later ones are unaffected. Deadlines hold mid-reply too (a reply crawling in over a lossy link
// must not keep anyone past their deadline): the reply being received lives in the channel
// (`inbound_`), not in the leader, and is received piece by piece. A leader whose own deadline
// passes mid-reply lets go of it (the next leader resumes where it stopped); a waiter whose reply
// is being received leaves at its deadline too — the leader unclaims it then and drops the rest of
// its reply. So the stream position is never lost to a deadline, and nobody waits past theirs.
//
// The channel closes only when the connection itself fails: EOF, a socket error, a malformed reply
// (unknown id, wrong kind or length), a peer that stalls mid-reply for `stall_timeout`, or a peer
// that sends no byte at all for `stall_timeout` while requests are outstanding (it is alive at the
// TCP level but not answering). Then healthy() turns false, every pending request fails promptly
// with kUnavailable, and later requests fail at once. An idle channel has no reader: healthy()
// peeks at the socket (one non-blocking recv) so a peer that closed it is seen before the next
// request. A channel is retired sooner: once its outstanding requests have seen no reply byte for
// `retire_after` (and none waits unread), healthy() is false although the channel stays open for
// the requests in flight; a peer never holds a request, so the path is lossy or broken, and a
// fresh connection starts without TCP's backed-off retransmission timer. The transport replaces
// an unhealthy channel on the next Connect. A waiter never returns while the leader may still
// write into its destination.
//
// Thread-safety: all public methods are thread-safe. Close() (also run by the destructor) waits
// for a leader to finish its read, which the socket shutdown makes prompt.
#ifndef RPLASMA_MANAGER_TRANSPORT_TCP_TCP_CHANNEL_H_
#define RPLASMA_MANAGER_TRANSPORT_TCP_TCP_CHANNEL_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

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
  // dead-peer timeout) bounds how long outstanding requests may see no reply byte at all before
  // the channel closes; after `retire_after` (at most `stall_timeout`) it is no longer healthy.
  static absl::StatusOr<std::shared_ptr<TcpChannel>> Create(UniqueFd fd, std::string peer_address, ArenaView arena,
                                                            std::shared_ptr<TransportCounters> counters,
                                                            absl::Duration retire_after, absl::Duration stall_timeout);
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
    absl::Time deadline;     // the caller's: a leader receiving into it lets go then
    std::string reply;       // Call result (filled by the leader while it holds the claim)
  };
  // The reply being received, which outlives any one leader. Touched only by the leader.
  struct Inbound {
    uint8_t header[kTcpHeaderBytes];
    size_t header_bytes = 0;  // 0 at a reply boundary
    bool started = false;     // header parsed, its id claimed (or found abandoned)
    TcpHeader parsed;
    Pending* target = nullptr;   // claimed waiter the payload goes into; nullptr: dropped
    bool unclaimed = false;      // a leader stopped and let go of the target: claim its id again
    uint64_t payload_bytes = 0;  // payload received so far
    std::string error_text;      // a kError reply's payload
  };

  TcpChannel(UniqueFd fd, std::string peer_address, ArenaView arena, std::shared_ptr<TransportCounters> counters,
             absl::Duration retire_after, absl::Duration stall_timeout);

  // Registers `pending`, sends header + payload, waits. Returns the final status.
  absl::Status Execute(Pending& pending, TcpHeader header, const void* payload, size_t payload_bytes,
                       absl::Time deadline);
  // The demultiplexer's break hook: marks the channel closed, shuts the socket down so a leader
  // blocked in recv() wakes, and returns the status the pending requests fail with.
  absl::Status OnBreak(const absl::Status& reason);
  // Receives (as the leader, without the lock) the rest of `inbound_` or one new reply and finishes
  // its Pending, or drops it if its request was abandoned. kDeadlineExceeded when `deadline`
  // passes first: what was received stays in `inbound_` for the next leader, which holds no claim.
  // Any other error closes the channel (a Pending that was being received is done with its error).
  absl::Status ReadOneReply(absl::Time deadline);
  // Parses `inbound_`'s header and claims its waiter (nullptr for an abandoned request).
  absl::Status StartReply();
  // Where the next payload bytes of `inbound_` go, and how many fit there.
  std::pair<uint8_t*, size_t> PayloadSpace();
  // The reply is whole: finishes its waiter and resets `inbound_` to a boundary.
  void FinishReply();
  // Up to `size` bytes by `until` (at least one); kUnavailable once the peer counts as stalled.
  absl::StatusOr<size_t> ReceiveSome(void* dst, size_t size, absl::Time until);
  // A reply byte arrived, or requests became outstanding on an idle channel.
  void NoteProgress();
  // Requests are outstanding and no reply byte arrived for `quiet`.
  bool SilentFor(absl::Duration quiet, absl::Time now) const;
  // SilentFor(stall_timeout_): the channel closes.
  bool StalledAt(absl::Time now) const;

  const UniqueFd fd_;
  const std::string peer_address_;
  const ArenaView arena_;
  const std::shared_ptr<TransportCounters> counters_;
  const absl::Duration retire_after_;
  const absl::Duration stall_timeout_;
  std::atomic<uint64_t> next_request_id_{1};
  std::atomic<bool> closed_flag_{false};
  // Requests sent (or being sent) whose reply has not been read, abandoned ones included.
  std::atomic<int64_t> outstanding_{0};
  std::atomic<int64_t> last_progress_ns_;  // absl::ToUnixNanos of the last NoteProgress()

  absl::Mutex write_mu_;  // one request on the wire at a time
  // Pending requests by id, leadership, and why the channel closed. Declared after what its hooks use.
  ReplyDemultiplexer demux_;

  // Used only by the leader, handed on through the demultiplexer's lock.
  TcpReceiveBuffer rx_;
  Inbound inbound_;
  std::unique_ptr<uint8_t[]> scratch_;  // where dropped payload goes (allocated on first use)
};

}  // namespace rplasma::transport::tcp

#endif  // RPLASMA_MANAGER_TRANSPORT_TCP_TCP_CHANNEL_H_
