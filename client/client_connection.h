// ClientConnection: one Unix-socket connection to rplasma-store, shared by every thread of a
// Client. It numbers requests, writes their frames, and hands each reply to the caller waiting for
// its request id (the store may answer a waiting Get late, after later requests).
//
// Demultiplexing is leader/follower (ReplyDemultiplexer): there is no reader thread. A caller waiting
// for a reply either becomes the leader (the one thread reading the socket; it dispatches every reply
// it reads to the right waiter) or sleeps until its reply is dispatched or it is asked to lead.
// A single-threaded caller therefore costs one frame out and one frame in, with no thread hand-off.
//
// Reply-less requests (SendNoReply) are written and forgotten; the store sends nothing back.
// Detached requests (SendDetached) expect a reply nobody waits for; whoever leads reads and drops
// it. At most kMaxDetached are outstanding: beyond that SendDetached waits like a normal call, so
// unread replies never pile up in the store.
//
// Deadlines: every exchange ends by a deadline, whatever the store does (stopped, wedged, its
// backlog full). Connect bounds the connect(2) and the handshake; Call/Wait without a deadline use
// the connection's io_timeout. A Wait whose deadline passes returns kDeadlineExceeded and leaves
// the connection working: its reply, when it comes, is dropped (and the references a late Get
// reply carries are released). A write that cannot finish by its deadline breaks the connection
// (part of a frame may be on the wire). Reads and writes are non-blocking and tried first; only one
// that would block polls, so a reply that already arrived costs one recv.
//
// Failure: the first read or write error (the store died, or sent bytes that are not a valid reply)
// breaks the connection for good: every waiter and every later call gets that status
// (kUnavailable / kProtocolError). Nothing here crashes on bytes from the store.
//
// Thread-safety: all methods are thread-safe. A PendingReply belongs to one caller.
#ifndef RPLASMA_CLIENT_CLIENT_CONNECTION_H_
#define RPLASMA_CLIENT_CLIENT_CONNECTION_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

#include "client/fork_guard.h"
#include "protocol/base/reply_demultiplexer.h"
#include "protocol/base/unique_fd.h"
#include "protocol/store_messages.h"

namespace rplasma {

class ClientConnection;

// The caller-owned slot a reply is delivered to (lives on the caller's stack: no allocation).
// Register it with Send, claim the reply with Wait. Destroying a registered slot unregisters it
// (its reply, if it still comes, is dropped).
class PendingReply : private ReplyWaiter {
 public:
  PendingReply() = default;
  ~PendingReply();
  PendingReply(const PendingReply&) = delete;
  PendingReply& operator=(const PendingReply&) = delete;

 private:
  friend class ClientConnection;
  ClientConnection* owner_ = nullptr;  // written only by the owning thread (in Send)
  uint64_t request_id_ = 0;            // written only by the owning thread (in Send)
  Reply reply_;                        // written by the leader that delivers it, under the demux lock
};

class ClientConnection {
 public:
  static constexpr int kMaxDetached = 256;

  // The result of the handshake: the connection, the store's ConnectReply and its fds.
  struct Handshake {
    std::unique_ptr<ClientConnection> connection;
    ConnectReply reply;
    UniqueFd arena_fd;
    // With reply.index_entries > 0: the shared index and this client's reference slots.
    UniqueFd index_fd;
    UniqueFd slots_fd;
  };
  // Connects to `socket_path` and sends ConnectRequest; the reply carries the arena fd (and the
  // shared index's and the slots' when it announces them: kProtocolError if they are missing).
  // kUnavailable if no store listens there; kDeadlineExceeded if the connect or the handshake does
  // not finish within `connect_timeout`. Later exchanges without a deadline of their own end
  // within `io_timeout`.
  // With `shared_index` the client asks for the store's shared index (ConnectRequest).
  static absl::StatusOr<Handshake> Connect(const std::string& socket_path, absl::string_view client_name,
                                           absl::Duration connect_timeout,
                                           absl::Duration io_timeout = absl::Seconds(30), bool shared_index = false);

  ~ClientConnection();
  ClientConnection(const ClientConnection&) = delete;
  ClientConnection& operator=(const ClientConnection&) = delete;

  // Sends `body` with a fresh request id and registers `pending` for its reply.
  // REQUIRES: `pending` is not registered. On error nothing is registered.
  absl::Status Send(RequestBody body, PendingReply* pending);
  // Send whose write ends by `deadline` (a write that cannot finish by then breaks the connection).
  absl::Status Send(RequestBody body, PendingReply* pending, absl::Time deadline);
  // Waits for the reply to a Send (leading the socket reads while needed) until `deadline`
  // (kDeadlineExceeded; the connection stays usable). The reply's own error code is not turned
  // into a status here: check reply.status().
  absl::StatusOr<Reply> Wait(PendingReply* pending, absl::Time deadline);
  absl::StatusOr<Reply> Wait(PendingReply* pending) { return Wait(pending, IoDeadline()); }
  // Send + Wait; the write and the wait both end by `deadline`.
  absl::StatusOr<Reply> Call(RequestBody body, absl::Time deadline);
  absl::StatusOr<Reply> Call(RequestBody body) { return Call(std::move(body), IoDeadline()); }
  // Sends `body` and does not wait for the reply (see the header comment).
  absl::Status SendDetached(RequestBody body);
  // Sends a request the store does not answer (a ReleaseRequest with no_reply): nothing is
  // registered and nothing is left to read.
  absl::Status SendNoReply(RequestBody body);

  // OK while the connection works; else why it broke.
  absl::Status health() const;
  // Whether it broke (health() without its lock: one relaxed load, for the gets with no IPC).
  bool broken() const { return broken_.load(std::memory_order_relaxed); }

  // Now + io_timeout: the deadline of an exchange that has none of its own.
  absl::Time IoDeadline() const;

 private:
  ClientConnection(UniqueFd fd, absl::Duration io_timeout);

  absl::StatusOr<uint64_t> NextRequestId();
  // The request's payload; kInvalidArgument if it exceeds the frame cap.
  static absl::StatusOr<std::string> Encode(uint64_t request_id, RequestBody body);
  // Writes one frame; a failed write breaks the connection (Break) before it returns.
  absl::Status WriteFrame(const std::string& payload, absl::Time deadline) ABSL_LOCKS_EXCLUDED(write_mu_);
  // The write itself (header and payload in one sendmsg when possible), by `deadline`.
  // Serialized by write_mu_.
  absl::Status WriteFrameBytes(const std::string& payload, absl::Time deadline) ABSL_LOCKS_EXCLUDED(write_mu_);
  // Reads the next reply frame by `deadline`. Only the leader calls it (no lock: leadership is
  // exclusive). On kDeadlineExceeded the bytes read so far stay buffered for the next leader.
  absl::StatusOr<Reply> ReadReply(absl::Time deadline);
  // The leader's step: reads one reply and hands it to its waiter (or drops it for a
  // detached/abandoned request). An error other than kDeadlineExceeded breaks the connection.
  absl::Status ReadAndDispatchOne(absl::Time deadline);
  // Reads until at least `bytes` are buffered, by `deadline`.
  absl::Status Fill(size_t bytes, absl::Time deadline);
  // A reply nobody waits for: releases the references it carries if it answers a Get.
  void DropUnclaimed(uint64_t request_id, const Reply& reply) ABSL_LOCKS_EXCLUDED(gets_mu_);
  friend class PendingReply;

  UniqueFd fd_;
  const absl::Duration io_timeout_;
  std::atomic<bool> broken_{false};  // set once, when the demultiplexer breaks
  const ForkGuard fork_guard_;       // a forked child sends nothing on the parent's socket

  // Request ids of Gets whose reply was not taken by a Wait yet: if it comes to nobody (the
  // waiter gave up at its deadline), the references it carries are released.
  absl::Mutex gets_mu_;
  absl::flat_hash_set<uint64_t> open_gets_ ABSL_GUARDED_BY(gets_mu_);

  // Serializes frame writes so frames never interleave (taken without the demultiplexer's lock).
  absl::Mutex write_mu_;

  std::atomic<uint64_t> next_request_id_{1};  // 0 is the subscription event id
  // Registered waiters by request id, leadership, and why the connection broke.
  ReplyDemultiplexer demux_;

  // Receive buffer [read_begin_, read_end_): touched only by the current leader, and leadership
  // passes under the demultiplexer's lock, which orders one leader's accesses before the next one's.
  std::vector<char> read_buffer_;
  size_t read_begin_ = 0;
  size_t read_end_ = 0;
};

}  // namespace rplasma

#endif  // RPLASMA_CLIENT_CLIENT_CONNECTION_H_
