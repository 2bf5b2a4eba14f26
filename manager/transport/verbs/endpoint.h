// Endpoint: one RC connection (cm_id + CQ + message ring + QP) and its completion thread.
//
// Control path (endpoint_setup.cc): active connect through rdma_cm, passive accept, teardown.
// Hot path (endpoint_io.cc): Call (fragmented SENDs with credit flow control), serving requests,
// Read (chunked RDMA READs into the registered arena, read_plan.h), completion processing.
// The bookkeeping is in device-free parts it holds under mu_: SendCredits (credits both ways and
// send buffers), Reassembler (fragments into messages), CallTable (calls waiting for replies) and
// PollerRole (who polls the CQ, when it is armed; with its SpinWindow, how long a poller spins).
//
// Threads: one completion thread per endpoint (CQ events; for the active side also its cm events);
// a passive endpoint also runs one dispatch thread that calls RequestHandler::HandleCall for the
// connection's requests in arrival order. Everything below mu_ is shared between them. Thread-safe.
//
// Completions (endpoint_poll.cc): at most one thread at a time polls the CQ. PollerRole
// (poller_role.h) states the protocol — a thread that waits for a completion polls for it itself
// while that pays off, the completion thread is the fallback, and the CQ is armed when the poller
// lets go — and decides each step of it; the endpoint makes the verbs calls it asks for.
//
// Errors: any failed work completion, a peer's DISCONNECT, a protocol violation or a deadline hit
// with READs outstanding moves the endpoint to kError: the QP is forced into the error state so
// every outstanding work request completes (flushes) — a Read returns only when none of its READs
// can still write into the destination. An endpoint never leaves kError; the channel replaces it.
#ifndef RPLASMA_MANAGER_TRANSPORT_VERBS_ENDPOINT_H_
#define RPLASMA_MANAGER_TRANSPORT_VERBS_ENDPOINT_H_

#include <sys/socket.h>

#include <atomic>
#include <deque>
#include <memory>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

#include "manager/transport/transport.h"
#include "manager/transport/verbs/call_table.h"
#include "manager/transport/verbs/device_set.h"
#include "manager/transport/verbs/message_ring.h"
#include "manager/transport/verbs/poller_role.h"
#include "manager/transport/verbs/read_plan.h"
#include "manager/transport/verbs/reassembler.h"
#include "manager/transport/verbs/send_credits.h"
#include "manager/transport/verbs/verbs_raii.h"
#include "manager/transport/verbs/wire_format.h"
#include "protocol/base/counter_set.h"
#include "protocol/base/mutex_lock.h"
#include "protocol/base/unique_fd.h"

namespace rplasma::transport::verbs {

// Transport-wide counters, shared with every endpoint: the TransportCounters (connections = QPs
// open), and verbs-only ones that VerbsTransport's accessors read (not in TransportStats).
struct VerbsCounters : TransportCounters {
  CounterSet verbs_only;
  Counter qps_created{&verbs_only, "qps_created"};
  // Completion-channel events consumed (completion thread wake-ups for the CQ), and completions
  // polled by a thread that was waiting for them rather than by the completion thread.
  Counter cq_events{&verbs_only, "cq_events"};
  Counter waiter_completions{&verbs_only, "waiter_completions"};
};

class Endpoint {
 public:
  /* Life cycle:

       Connect()/Accept() ──ok──► kConnected ──(failed WC, DISCONNECTED, protocol error,
            │                         │          Read deadline with READs out)──► kError
            └─error: nothing left     │                                              │
                                      └────────────── Close() ───────────────────────┴──► kClosed

     kConnected: sends/receives/reads flow.  kError: QP forced to IBV_QPS_ERR, flushes drain,
     waiters fail; kept only until its owner drops it.  kClosed: threads joined; only destruction. */
  enum class State { kConnected, kError, kClosed };

  // Active side: resolves `dst`, builds the QP, connects with `ticket` in the private data.
  static absl::StatusOr<std::shared_ptr<Endpoint>> Connect(const TransportOptions& options,
                                                           std::shared_ptr<DeviceSet> devices,
                                                           std::shared_ptr<VerbsCounters> counters,
                                                           const sockaddr_storage& dst, const Ticket& ticket,
                                                           absl::Time deadline);
  // Passive side, for a CONNECT_REQUEST whose ticket was already redeemed. Takes `id`; on error
  // the request has been rejected and the id destroyed.
  static absl::StatusOr<std::shared_ptr<Endpoint>> Accept(const TransportOptions& options,
                                                          std::shared_ptr<DeviceSet> devices,
                                                          std::shared_ptr<VerbsCounters> counters, CmIdPtr id,
                                                          const ConnectData& peer, const rdma_conn_param& peer_param,
                                                          RequestHandler* handler, uint64_t conn_id);
  ~Endpoint();
  Endpoint(const Endpoint&) = delete;
  Endpoint& operator=(const Endpoint&) = delete;

  // Active side only. Sends `request`, waits for the matching response.
  absl::StatusOr<std::string> Call(absl::string_view request, absl::Time deadline);
  // Active side only. REQUIRES: [dst, dst + region.length) inside the registered arena.
  absl::Status Read(const RemoteRegion& region, uint8_t* dst, absl::Time deadline);

  bool healthy() const;
  State state() const;
  // Moves to kError (idempotent) and tells the peer (rdma_disconnect).
  void Fail(const absl::Status& why);
  // Stops and joins the threads; fails every waiter. Idempotent. Blocks while a HandleCall runs.
  void Close();
  // Fault injection (QpFaultInjector, connect_seams.h): moves the QP to IBV_QPS_ERR without
  // touching the endpoint's state; the flushed completions then fail it like a real fault.
  // kUnavailable unless kConnected.
  absl::Status ForceQpError();

  rdma_cm_id* cm_id() const { return id_.get(); }
  uint64_t conn_id() const { return conn_id_; }
  uint32_t read_window() const { return read_window_; }
  ibv_qp* qp() const { return id_->qp; }

 private:
  struct Request {
    uint64_t id;
    std::string data;
  };

  Endpoint(const TransportOptions& options, std::shared_ptr<DeviceSet> devices, std::shared_ptr<VerbsCounters> counters,
           RequestHandler* handler, uint64_t conn_id);
  // Control path (endpoint_setup.cc).
  absl::Status BuildQp(DeviceContext* device);
  absl::Status Start(const AcceptData& peer_limits);
  void DispatchLoop();
  void HandleCmEvents();
  void FailLocked(const absl::Status& why) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Completion processing (endpoint_poll.cc), as poller_ decides.
  void PollLoop();
  // Waits until done() or the deadline; returns done(). Polls the CQ itself while that pays off,
  // else blocks on cv_.
  bool AwaitLocked(MutexLock& lock, absl::FunctionRef<bool()> done, absl::Time deadline)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Takes the poller role (REQUIRES: free), polls until done(), the deadline, a spin window without
  // a completion, or (completion thread) a waiter asking for the role or a first poll that found
  // nothing; then arms and lets go.
  void SpinLocked(MutexLock& lock, PollerRole::Who who, absl::FunctionRef<bool()> done, absl::Time deadline)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // One ibv_poll_cq (mu_ released around it) and the processing of what it returned.
  // REQUIRES: the poller role. Returns the number of completions, -1 after a poll failure.
  int PollOnceLocked(MutexLock& lock, PollerRole::Who who) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Hot path (endpoint_io.cc).
  // One message whose payload is the parts, in order, copied fragment by fragment into the
  // registered send buffers (gathered across parts: a reply's object bytes go from the arena
  // straight into them).
  absl::Status SendMessage(MessageType type, uint8_t flags, uint64_t request_id,
                           absl::Span<const absl::string_view> payload, absl::Time deadline);
  void ProcessCompletionLocked(const ibv_wc& wc) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ProcessReceiveLocked(const ibv_wc& wc) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void DeliverLocked(const MessageHeader& h, absl::Span<const uint8_t> payload) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void MaybeSendCreditLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status PostReadLocked(uint64_t op_id, ReadProgress& op, const RemoteRegion& region, uint8_t* dst)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const TransportOptions options_;
  const std::shared_ptr<DeviceSet> devices_;
  const std::shared_ptr<VerbsCounters> counters_;
  RequestHandler* const handler_;  // passive side only
  const uint64_t conn_id_;
  DeviceContext* device_ = nullptr;

  // Verbs objects in acquisition order (destroyed in reverse: QP, ring MR, CQ, channel, cm_id).
  EventChannelPtr events_;  // active side only; the passive side's events go to the listener
  CmIdPtr id_;
  CompChannelPtr comp_channel_;
  CqPtr cq_;
  std::unique_ptr<MessageRing> ring_;
  QpOwner qp_;
  UniqueFd wake_fd_;  // eventfd that interrupts PollLoop

  uint32_t peer_message_bytes_ = 0;
  uint32_t read_window_ = 1;
  uint64_t read_chunk_ = 1 << 20;
  std::thread poll_thread_;
  std::thread dispatch_thread_;
  std::atomic<bool> stop_{false};

  mutable absl::Mutex mu_;
  absl::CondVar cv_;  // any state, credit, slot, call or read change
  State state_ ABSL_GUARDED_BY(mu_) = State::kConnected;
  absl::Status error_ ABSL_GUARDED_BY(mu_);
  bool disconnected_ ABSL_GUARDED_BY(mu_) = false;
  bool closing_ ABSL_GUARDED_BY(mu_) = false;  // an orderly Close, not a failure
  SendCredits credits_ ABSL_GUARDED_BY(mu_);
  CallTable calls_ ABSL_GUARDED_BY(mu_);  // active side
  Reassembler inbound_ ABSL_GUARDED_BY(mu_);
  uint64_t next_read_id_ ABSL_GUARDED_BY(mu_) = 1;
  std::deque<Request> requests_ ABSL_GUARDED_BY(mu_);
  uint32_t reads_in_flight_ ABSL_GUARDED_BY(mu_) = 0;
  uint32_t sends_in_flight_ ABSL_GUARDED_BY(mu_) = 0;
  absl::flat_hash_map<uint64_t, ReadProgress*> read_ops_ ABSL_GUARDED_BY(mu_);
  PollerRole poller_ ABSL_GUARDED_BY(mu_);
};

}  // namespace rplasma::transport::verbs

#endif  // RPLASMA_MANAGER_TRANSPORT_VERBS_ENDPOINT_H_
