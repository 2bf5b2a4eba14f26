// Endpoint control path: rdma_cm connect/accept, QP construction, threads, teardown.
#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "absl/strings/str_format.h"

#include "manager/transport/verbs/endpoint.h"
#include "manager/transport/verbs/read_plan.h"
#include "protocol/base/logging.h"
#include "protocol/base/mutex_lock.h"
#include "protocol/base/status.h"

namespace rplasma::transport::verbs {
namespace {

constexpr uint8_t kAuthRejectMagic[4] = {'R', 'P', 'V', 'R'};

absl::Status SetFdNonBlocking(int fd, absl::string_view what) {
  int flags = fcntl(fd, F_GETFL);
  if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) return ErrnoError("fcntl(O_NONBLOCK)", what, errno);
  return absl::OkStatus();
}

// What an rdma_cm event said, copied out so the event can be acked at once.
struct CmEventCopy {
  rdma_cm_event_type type;
  int status;
  std::vector<uint8_t> private_data;
};

absl::StatusOr<CmEventCopy> WaitCmEvent(rdma_event_channel* channel, absl::Time deadline) {
  for (;;) {
    rdma_cm_event* ev = nullptr;
    if (rdma_get_cm_event(channel, &ev) == 0) {
      CmEventCopy copy{ev->event, ev->status, {}};
      const auto* pd = static_cast<const uint8_t*>(ev->param.conn.private_data);
      if (pd != nullptr && (ev->event == RDMA_CM_EVENT_ESTABLISHED || ev->event == RDMA_CM_EVENT_REJECTED)) {
        copy.private_data.assign(pd, pd + ev->param.conn.private_data_len);
      }
      rdma_ack_cm_event(ev);
      return copy;
    }
    if (errno != EAGAIN && errno != EWOULDBLOCK) return ErrnoError("rdma_get_cm_event", "connect", errno);
    int64_t ms = absl::ToInt64Milliseconds(deadline - absl::Now());
    if (ms <= 0) return MakeError(ErrorCode::kDeadlineExceeded, "verbs connect: timed out");
    pollfd p{channel->fd, POLLIN, 0};
    ::poll(&p, 1, static_cast<int>(std::min<int64_t>(ms, 1000)));
  }
}

absl::Status ExpectCmEvent(rdma_event_channel* channel, rdma_cm_event_type want, absl::Time deadline,
                           std::vector<uint8_t>* private_data, absl::string_view step) {
  ASSIGN_OR_RETURN(CmEventCopy ev, WaitCmEvent(channel, deadline));
  if (ev.type == want && ev.status == 0) {
    if (private_data != nullptr) *private_data = std::move(ev.private_data);
    return absl::OkStatus();
  }
  if (ev.type == RDMA_CM_EVENT_REJECTED) {
    if (ev.private_data.size() >= 4 && std::memcmp(ev.private_data.data(), kAuthRejectMagic, 4) == 0) {
      return MakeError(ErrorCode::kPermissionDenied, "verbs connect: peer refused the connection ticket");
    }
    return MakeError(ErrorCode::kUnavailable,
                     absl::StrFormat("verbs %s: connection refused (status %d)", step, ev.status));
  }
  return MakeError(ErrorCode::kUnavailable,
                   absl::StrFormat("verbs %s: %s (status %d)", step, rdma_event_str(ev.type), ev.status));
}

int TimeoutMs(absl::Time deadline) {
  int64_t ms = absl::ToInt64Milliseconds(deadline - absl::Now());
  return static_cast<int>(std::clamp<int64_t>(ms, 1, 60000));
}

}  // namespace

// The reject payload that tells an active side its ticket was refused.
absl::Span<const uint8_t> AuthRejectData() { return absl::Span<const uint8_t>(kAuthRejectMagic, 4); }

Endpoint::Endpoint(const TransportOptions& options, std::shared_ptr<DeviceSet> devices,
                   std::shared_ptr<VerbsCounters> counters, RequestHandler* handler, uint64_t conn_id)
    : options_(options),
      devices_(std::move(devices)),
      counters_(std::move(counters)),
      handler_(handler),
      conn_id_(conn_id),
      inbound_(options.queue_depth),
      poller_(options.cq_spin, handler != nullptr) {}

absl::StatusOr<std::shared_ptr<Endpoint>> Endpoint::Connect(const TransportOptions& options,
                                                            std::shared_ptr<DeviceSet> devices,
                                                            std::shared_ptr<VerbsCounters> counters,
                                                            const sockaddr_storage& dst, const Ticket& ticket,
                                                            absl::Time deadline) {
  std::shared_ptr<Endpoint> ep(new Endpoint(options, std::move(devices), std::move(counters), nullptr, 0));
  ep->events_.reset(rdma_create_event_channel());
  if (!ep->events_) return ErrnoError("rdma_create_event_channel", "connect", errno);
  RETURN_IF_ERROR(SetFdNonBlocking(ep->events_->fd, "rdma event channel"));
  rdma_cm_id* raw = nullptr;
  if (rdma_create_id(ep->events_.get(), &raw, nullptr, RDMA_PS_TCP) != 0) {
    return ErrnoError("rdma_create_id", "connect", errno);
  }
  ep->id_.reset(raw);
  if (rdma_resolve_addr(raw, nullptr, reinterpret_cast<sockaddr*>(const_cast<sockaddr_storage*>(&dst)),
                        TimeoutMs(deadline)) != 0) {
    return MakeError(ErrorCode::kUnavailable, ErrnoError("rdma_resolve_addr", "peer", errno).message());
  }
  RETURN_IF_ERROR(ExpectCmEvent(raw->channel, RDMA_CM_EVENT_ADDR_RESOLVED, deadline, nullptr, "address resolution"));
  if (rdma_resolve_route(raw, TimeoutMs(deadline)) != 0) {
    return MakeError(ErrorCode::kUnavailable, ErrnoError("rdma_resolve_route", "peer", errno).message());
  }
  RETURN_IF_ERROR(ExpectCmEvent(raw->channel, RDMA_CM_EVENT_ROUTE_RESOLVED, deadline, nullptr, "route resolution"));
  DeviceContext* device = ep->devices_->Find(raw->verbs);
  if (device == nullptr)
    return MakeError(ErrorCode::kUnavailable, "verbs connect: peer is reachable only through a device not in use");
  RETURN_IF_ERROR(ep->BuildQp(device));

  auto data = EncodeConnectData({options.queue_depth, options.message_bytes, ticket});
  uint32_t initiator =
      std::min<uint32_t>({options.max_reads_in_flight, static_cast<uint32_t>(device->attr.max_qp_init_rd_atom), 255});
  rdma_conn_param param{};
  param.private_data = data.data();
  param.private_data_len = static_cast<uint8_t>(data.size());
  param.responder_resources = static_cast<uint8_t>(std::min(device->attr.max_qp_rd_atom, 255));
  param.initiator_depth = static_cast<uint8_t>(initiator);
  param.retry_count = static_cast<uint8_t>(options.retry_count);
  param.rnr_retry_count = static_cast<uint8_t>(options.rnr_retry);
  if (rdma_connect(raw, &param) != 0)
    return MakeError(ErrorCode::kUnavailable, ErrnoError("rdma_connect", "peer", errno).message());
  std::vector<uint8_t> accept_bytes;
  RETURN_IF_ERROR(ExpectCmEvent(raw->channel, RDMA_CM_EVENT_ESTABLISHED, deadline, &accept_bytes, "connect"));
  ASSIGN_OR_RETURN(AcceptData accepted, DecodeAcceptData(accept_bytes));
  ep->read_window_ = ReadWindow(options.max_reads_in_flight, initiator, accepted.responder_resources);
  RETURN_IF_ERROR(ep->Start(accepted));
  return ep;
}

absl::StatusOr<std::shared_ptr<Endpoint>> Endpoint::Accept(const TransportOptions& options,
                                                           std::shared_ptr<DeviceSet> devices,
                                                           std::shared_ptr<VerbsCounters> counters, CmIdPtr id,
                                                           const ConnectData& peer, const rdma_conn_param& peer_param,
                                                           RequestHandler* handler, uint64_t conn_id) {
  std::shared_ptr<Endpoint> ep(new Endpoint(options, std::move(devices), std::move(counters), handler, conn_id));
  ep->id_ = std::move(id);
  auto refuse = [&](absl::Status s) {
    rdma_reject(ep->id_.get(), nullptr, 0);
    return s;
  };
  DeviceContext* device = ep->devices_->Find(ep->id_->verbs);
  if (device == nullptr)
    return refuse(MakeError(ErrorCode::kUnavailable, "verbs accept: request arrived on a device not in use"));
  if (absl::Status s = ep->BuildQp(device); !s.ok()) return refuse(s);
  uint8_t responder = static_cast<uint8_t>(std::min<int>(peer_param.initiator_depth, device->attr.max_qp_rd_atom));
  auto data = EncodeAcceptData({options.queue_depth, options.message_bytes, responder});
  rdma_conn_param param{};
  param.private_data = data.data();
  param.private_data_len = static_cast<uint8_t>(data.size());
  param.responder_resources = responder;
  param.initiator_depth =
      static_cast<uint8_t>(std::min<int>(peer_param.responder_resources, device->attr.max_qp_init_rd_atom));
  param.retry_count = static_cast<uint8_t>(options.retry_count);
  param.rnr_retry_count = static_cast<uint8_t>(options.rnr_retry);
  if (rdma_accept(ep->id_.get(), &param) != 0) return refuse(ErrnoError("rdma_accept", "peer", errno));
  RETURN_IF_ERROR(ep->Start({peer.recv_credits, peer.message_bytes, 0}));
  return ep;
}

absl::Status Endpoint::BuildQp(DeviceContext* device) {
  device_ = device;
  ibv_context* ctx = device->context;
  // Per-connection ACK timeout (4.096 us * 2^t); librdmacm applies it when it moves the QP to RTS.
  uint8_t timeout = static_cast<uint8_t>(options_.qp_timeout);
  if (rdma_set_option(id_.get(), RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &timeout, sizeof(timeout)) != 0) {
    LOG(WARNING) << "verbs: rdma_set_option(ACK_TIMEOUT) failed (errno " << errno << "); using the rdma_cm default";
  }
  comp_channel_.reset(ibv_create_comp_channel(ctx));
  if (!comp_channel_) return ErrnoError("ibv_create_comp_channel", device->name, errno);
  RETURN_IF_ERROR(SetFdNonBlocking(comp_channel_->fd, "completion channel"));
  ASSIGN_OR_RETURN(ring_, MessageRing::Create(device->pd.get(), options_.queue_depth, options_.message_bytes));
  uint32_t reads = std::min<uint32_t>(options_.max_reads_in_flight, std::max(device->attr.max_qp_init_rd_atom, 1));
  uint32_t max_send = ring_->slots() + reads;
  uint32_t max_recv = ring_->slots();
  if (static_cast<int>(std::max(max_send, max_recv)) > device->attr.max_qp_wr) {
    return MakeError(ErrorCode::kInvalidArgument, absl::StrFormat("queue_depth too large for %s (max_qp_wr %d)",
                                                                  device->name, device->attr.max_qp_wr));
  }
  int cqe = static_cast<int>(max_send + max_recv);
  if (cqe > device->attr.max_cqe)
    return MakeError(ErrorCode::kInvalidArgument, "queue_depth exceeds the device's max_cqe");
  cq_.reset(ibv_create_cq(ctx, cqe, nullptr, comp_channel_.get(), 0));
  if (!cq_) return ErrnoError("ibv_create_cq", device->name, errno);
  ibv_qp_init_attr qa{};
  qa.send_cq = cq_.get();
  qa.recv_cq = cq_.get();
  qa.qp_type = IBV_QPT_RC;  // RC only: no UD, no SRQ (eRDMA has neither)
  qa.cap.max_send_wr = max_send;
  qa.cap.max_recv_wr = max_recv;
  qa.cap.max_send_sge = 1;  // one SGE per work request (eRDMA max_sge is 1)
  qa.cap.max_recv_sge = 1;
  qa.sq_sig_all = 0;
  if (rdma_create_qp(id_.get(), device->pd.get(), &qa) != 0) return ErrnoError("rdma_create_qp", device->name, errno);
  qp_.reset(id_.get());
  counters_->qps_created.fetch_add(1);
  counters_->connections.fetch_add(1);
  // Receives are posted before the connection exists: the peer may send as soon as it is up.
  for (uint32_t i = 0; i < ring_->slots(); ++i) RETURN_IF_ERROR(ring_->PostRecv(qp(), i));
  {
    MutexLock lock(&mu_);
    credits_ = SendCredits(ring_->slots());
  }
  if (int rc = ibv_req_notify_cq(cq_.get(), 0); rc != 0) return ErrnoError("ibv_req_notify_cq", device->name, rc);
  {
    MutexLock lock(&mu_);
    poller_.Armed();
  }
  wake_fd_.reset(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!wake_fd_) return ErrnoError("eventfd", "endpoint", errno);
  return absl::OkStatus();
}

absl::Status Endpoint::Start(const AcceptData& peer) {
  {
    MutexLock lock(&mu_);
    peer_message_bytes_ = peer.message_bytes;
    credits_.Start(peer.recv_credits);
  }
  read_chunk_ = ReadChunkBytes(options_.read_chunk_bytes, device_->max_msg_sz);
  poll_thread_ = std::thread([this] { PollLoop(); });
  if (handler_ != nullptr) dispatch_thread_ = std::thread([this] { DispatchLoop(); });
  return absl::OkStatus();
}

Endpoint::~Endpoint() {
  Close();
  if (qp_) counters_->connections.fetch_sub(1);
}

bool Endpoint::healthy() const {
  MutexLock lock(&mu_);
  return state_ == State::kConnected;
}

Endpoint::State Endpoint::state() const {
  MutexLock lock(&mu_);
  return state_;
}

void Endpoint::Fail(const absl::Status& why) {
  MutexLock lock(&mu_);
  FailLocked(why);
}

void Endpoint::FailLocked(const absl::Status& why) {
  if (state_ != State::kConnected) return;
  state_ = State::kError;
  error_ = MakeError(ErrorCodeOf(why) == ErrorCode::kInternal ? ErrorCode::kUnavailable : ErrorCodeOf(why),
                     absl::StrFormat("verbs connection failed: %s", why.message()));
  if (qp_) {
    if (!closing_) LOG(WARNING) << "verbs connection (qp " << qp()->qp_num << ") failed: " << why.ToString();
    // Force every outstanding work request to complete (flush) so no READ can land later.
    ibv_qp_attr attr{};
    attr.qp_state = IBV_QPS_ERR;
    if (int rc = ibv_modify_qp(qp(), &attr, IBV_QP_STATE); rc != 0) LOG(WARNING) << "ibv_modify_qp(ERR) failed: " << rc;
  }
  if (!disconnected_ && id_) {
    disconnected_ = true;
    rdma_disconnect(id_.get());
  }
  calls_.FailAll(error_);
  cv_.SignalAll();
}

absl::Status Endpoint::ForceQpError() {
  MutexLock lock(&mu_);
  if (state_ != State::kConnected || !qp_) {
    return MakeError(ErrorCode::kUnavailable, "verbs endpoint: no connected queue pair to fail");
  }
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_ERR;
  if (int rc = ibv_modify_qp(qp(), &attr, IBV_QP_STATE); rc != 0) {
    return MakeError(ErrorCode::kUnavailable,
                     absl::StrFormat("ibv_modify_qp(qp %u, ERR): %s", qp()->qp_num, strerror(rc)));
  }
  return absl::OkStatus();
}

void Endpoint::Close() {
  {
    MutexLock lock(&mu_);
    if (state_ == State::kClosed) return;
    closing_ = true;
    FailLocked(MakeError(ErrorCode::kUnavailable, "connection closed"));
    // Let flushed work requests come back before the completion thread stops (polling for them
    // like any waiter: the active side's CQ may be unarmed).
    if (poll_thread_.joinable()) {
      AwaitLocked(
          lock, [this]() ABSL_NO_THREAD_SAFETY_ANALYSIS { return reads_in_flight_ == 0 && sends_in_flight_ == 0; },
          absl::Now() + absl::Seconds(2));
    }
  }
  stop_.store(true);
  if (wake_fd_) {
    uint64_t one = 1;
    if (::write(wake_fd_.get(), &one, sizeof(one)) < 0) LOG(WARNING) << "verbs endpoint: wake failed";
  }
  {
    MutexLock lock(&mu_);
    cv_.SignalAll();
  }
  if (poll_thread_.joinable()) poll_thread_.join();
  if (dispatch_thread_.joinable()) dispatch_thread_.join();
  MutexLock lock(&mu_);
  state_ = State::kClosed;
  cv_.SignalAll();
}

void Endpoint::HandleCmEvents() {
  rdma_cm_event* ev = nullptr;
  while (rdma_get_cm_event(events_.get(), &ev) == 0) {
    rdma_cm_event_type type = ev->event;
    rdma_ack_cm_event(ev);
    switch (type) {
      case RDMA_CM_EVENT_DISCONNECTED:
      case RDMA_CM_EVENT_DEVICE_REMOVAL:
      case RDMA_CM_EVENT_CONNECT_ERROR:
      case RDMA_CM_EVENT_UNREACHABLE:
      case RDMA_CM_EVENT_ADDR_CHANGE:
        Fail(MakeError(ErrorCode::kUnavailable, absl::StrFormat("peer: %s", rdma_event_str(type))));
        break;
      default: break;
    }
  }
}

void Endpoint::DispatchLoop() {
  for (;;) {
    Request req;
    {
      MutexLock lock(&mu_);
      // Between requests this thread polls the CQ itself (cq_spin): the next request needs no hand-off.
      AwaitLocked(
          lock,
          [this]() ABSL_NO_THREAD_SAFETY_ANALYSIS {
            return !requests_.empty() || stop_.load() || state_ != State::kConnected;
          },
          absl::InfiniteFuture());
      if (requests_.empty() || state_ != State::kConnected) return;
      req = std::move(requests_.front());
      requests_.pop_front();
    }
    CallReply reply = handler_->HandleCall(conn_id_, req.data);
    uint8_t flags = 0;
    if (const size_t size = reply.size(); size > kMaxCallBytes) {
      reply = absl::StrFormat("reply of %u bytes exceeds the %u-byte limit", size, kMaxCallBytes);
      flags = kFlagError;
    }
    {
      MutexLock lock(&mu_);
      credits_.Owe();  // the request's last fragment is consumed now; the reply carries the credit
    }
    // The head, then the tail's bytes straight from where they live (the arena).
    absl::Status s =
        SendMessage(MessageType::kResponse, flags, req.id, reply.Parts(), absl::Now() + options_.response_send_timeout);
    if (!s.ok()) {
      Fail(s);
      return;
    }
  }
}

}  // namespace rplasma::transport::verbs
