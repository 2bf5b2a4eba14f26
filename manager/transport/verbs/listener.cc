#include "manager/transport/verbs/listener.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "absl/strings/str_format.h"

#include "manager/transport/verbs/socket_address.h"
#include "protocol/base/logging.h"
#include "protocol/base/mutex_lock.h"
#include "protocol/base/status.h"

namespace rplasma::transport::verbs {

absl::Span<const uint8_t> AuthRejectData();  // endpoint_setup.cc

namespace {
constexpr int kPortAttempts = 32;
constexpr size_t kMaxOutstandingTickets = 1024;
}  // namespace

Listener::Listener(const TransportOptions& options, std::shared_ptr<DeviceSet> devices,
                   std::shared_ptr<VerbsCounters> counters, RequestHandler* handler)
    : options_(options), devices_(std::move(devices)), counters_(std::move(counters)), handler_(handler) {}

absl::StatusOr<std::unique_ptr<Listener>> Listener::Create(const TransportOptions& options,
                                                           std::shared_ptr<DeviceSet> devices,
                                                           std::shared_ptr<VerbsCounters> counters,
                                                           AuthPortCounters* auth_counters, const std::string& address,
                                                           RequestHandler* handler) {
  if (handler == nullptr) return MakeError(ErrorCode::kInvalidArgument, "verbs listen: no request handler");
  std::unique_ptr<Listener> l(new Listener(options, std::move(devices), std::move(counters), handler));
  // A ticket only has to survive the gap between the TCP handshake and rdma_connect.
  l->tickets_ = std::make_unique<TicketBook>(options.connect_timeout * 2, kMaxOutstandingTickets);
  l->events_.reset(rdma_create_event_channel());
  if (!l->events_) return ErrnoError("rdma_create_event_channel", "listen", errno);
  int flags = fcntl(l->events_->fd, F_GETFL);
  if (flags < 0 || fcntl(l->events_->fd, F_SETFL, flags | O_NONBLOCK) < 0) return ErrnoError("fcntl", "listen", errno);
  l->wake_fd_.reset(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!l->wake_fd_) return ErrnoError("eventfd", "listen", errno);
  l->auth_counters_ = auth_counters;
  RETURN_IF_ERROR(l->Bind(options, address, auth_counters));
  l->thread_ = std::thread([p = l.get()] { p->Run(); });
  return l;
}

absl::Status Listener::Bind(const TransportOptions& options, const std::string& address,
                            AuthPortCounters* auth_counters) {
  ASSIGN_OR_RETURN(sockaddr_storage addr, ResolveHostPort(address));
  const bool any_port = PortOf(addr) == 0;
  absl::Status last;
  for (int attempt = 0; attempt < (any_port ? kPortAttempts : 1); ++attempt) {
    rdma_cm_id* raw = nullptr;
    if (rdma_create_id(events_.get(), &raw, nullptr, RDMA_PS_TCP) != 0)
      return ErrnoError("rdma_create_id", "listen", errno);
    CmIdPtr id(raw);
    sockaddr_storage try_addr = addr;
    if (rdma_bind_addr(raw, reinterpret_cast<sockaddr*>(&try_addr)) != 0) {
      return MakeError(ErrorCode::kUnavailable, ErrnoError("rdma_bind_addr", address, errno).message());
    }
    uint16_t port = ntohs(rdma_get_src_port(raw));
    SetPort(try_addr, port);
    // rdma_cm (RoCE/IB) and TCP ports are separate spaces: the auth port takes the same number.
    absl::StatusOr<std::unique_ptr<AuthPort>> auth = AuthPort::Create(
        try_addr, options.secret, tickets_.get(), auth_counters,
        auth::HandshakeLimits{options.handshake_timeout, options.max_handshakes, options.max_handshakes_per_source});
    if (!auth.ok()) {
      last = auth.status();
      continue;  // TCP port taken: with port 0, try another number
    }
    if (rdma_listen(raw, 128) != 0) return ErrnoError("rdma_listen", address, errno);
    if (raw->verbs != nullptr && devices_->Find(raw->verbs) == nullptr) {
      return MakeError(ErrorCode::kUnavailable,
                       absl::StrFormat("verbs listen: %s is not on the configured device", address));
    }
    auth_ = std::move(*auth);
    listen_id_ = std::move(id);
    bound_address_ = FormatHostPort(reinterpret_cast<sockaddr*>(&try_addr));
    return absl::OkStatus();
  }
  return MakeError(ErrorCode::kUnavailable, absl::StrFormat("verbs listen %s: %s", address, last.message()));
}

Listener::~Listener() {
  stop_.store(true);
  uint64_t one = 1;
  if (wake_fd_ && ::write(wake_fd_.get(), &one, sizeof(one)) < 0) LOG(WARNING) << "verbs listener: wake failed";
  if (thread_.joinable()) thread_.join();
  auth_.reset();
  absl::flat_hash_map<rdma_cm_id*, std::shared_ptr<Endpoint>> endpoints;
  {
    MutexLock lock(&mu_);
    endpoints.swap(endpoints_);
  }
  for (auto& [id, ep] : endpoints) {
    ep->Close();
    handler_->OnDisconnect(ep->conn_id());
  }
  endpoints.clear();  // child cm_ids go before the listening id and the event channel
  listen_id_.reset();
}

uint64_t Listener::connections() const {
  MutexLock lock(&mu_);
  return endpoints_.size();
}

void Listener::Run() {
  while (!stop_.load()) {
    pollfd fds[2] = {{events_->fd, POLLIN, 0}, {wake_fd_.get(), POLLIN, 0}};
    if (::poll(fds, 2, 1000) < 0 && errno != EINTR) {
      LOG(ERROR) << "verbs listener: poll failed: " << std::strerror(errno);
      return;
    }
    if (stop_.load()) return;
    rdma_cm_event* ev = nullptr;
    while (!stop_.load() && rdma_get_cm_event(events_.get(), &ev) == 0) {
      // Copy what we need and ack at once: destroying a cm_id waits for its events to be acked.
      rdma_cm_event_type type = ev->event;
      rdma_cm_id* id = ev->id;
      int status = ev->status;
      rdma_conn_param param = ev->param.conn;
      std::vector<uint8_t> private_data;
      if (type == RDMA_CM_EVENT_CONNECT_REQUEST && param.private_data != nullptr) {
        const auto* p = static_cast<const uint8_t*>(param.private_data);
        private_data.assign(p, p + param.private_data_len);
      }
      param.private_data = nullptr;
      rdma_ack_cm_event(ev);
      switch (type) {
        case RDMA_CM_EVENT_CONNECT_REQUEST: OnConnectRequest(id, private_data, param); break;
        case RDMA_CM_EVENT_ESTABLISHED: break;
        case RDMA_CM_EVENT_DISCONNECTED:
        case RDMA_CM_EVENT_CONNECT_ERROR:
        case RDMA_CM_EVENT_UNREACHABLE:
        case RDMA_CM_EVENT_REJECTED: Drop(id); break;
        case RDMA_CM_EVENT_DEVICE_REMOVAL:
          LOG(ERROR) << "verbs listener: device removed";
          if (id != listen_id_.get()) Drop(id);
          break;
        default:
          if (status != 0) LOG(WARNING) << "verbs listener: " << rdma_event_str(type) << " status " << status;
          break;
      }
    }
  }
}

void Listener::OnConnectRequest(rdma_cm_id* raw, const std::vector<uint8_t>& private_data,
                                const rdma_conn_param& param) {
  CmIdPtr id(raw);  // a CONNECT_REQUEST's id is ours to destroy
  absl::StatusOr<ConnectData> data = DecodeConnectData(private_data);
  if (!data.ok() || !tickets_->Redeem(data->ticket, absl::Now())) {
    auth_counters_->ticket_refusals.fetch_add(1);
    LOG(WARNING) << "verbs listener: refused a connection from " << FormatHostPort(rdma_get_peer_addr(raw)) << ": "
                 << (data.ok() ? "ticket not issued, already used or expired" : data.status().ToString());
    auto reject = AuthRejectData();
    rdma_reject(raw, reject.data(), static_cast<uint8_t>(reject.size()));
    return;
  }
  const uint64_t conn_id = next_conn_id_++;
  std::string peer = FormatHostPort(rdma_get_peer_addr(raw));
  handler_->OnConnect(conn_id, peer);
  absl::StatusOr<std::shared_ptr<Endpoint>> ep =
      Endpoint::Accept(options_, devices_, counters_, std::move(id), *data, param, handler_, conn_id);
  if (!ep.ok()) {
    LOG(WARNING) << "verbs listener: accepting " << peer << " failed: " << ep.status().ToString();
    handler_->OnDisconnect(conn_id);
    return;
  }
  MutexLock lock(&mu_);
  endpoints_[raw] = std::move(*ep);
}

void Listener::Drop(rdma_cm_id* id) {
  std::shared_ptr<Endpoint> ep;
  {
    MutexLock lock(&mu_);
    auto it = endpoints_.find(id);
    if (it == endpoints_.end()) return;
    ep = std::move(it->second);
    endpoints_.erase(it);
  }
  ep->Close();
  handler_->OnDisconnect(ep->conn_id());
}

}  // namespace rplasma::transport::verbs
