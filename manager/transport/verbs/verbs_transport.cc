#include "manager/transport/verbs/verbs_transport.h"

#include <cstring>

#include "manager/transport/verbs/async_event_monitor.h"
#include "manager/transport/verbs/auth_port.h"
#include "manager/transport/verbs/device_set.h"
#include "manager/transport/verbs/endpoint.h"
#include "manager/transport/verbs/listener.h"
#include "manager/transport/verbs/socket_address.h"
#include "manager/transport/verbs/verbs_channel.h"
#include "protocol/base/mutex_lock.h"
#include "protocol/base/status.h"

namespace rplasma::transport {

using verbs::Endpoint;
using verbs::Ticket;

bool IsVerbsDeviceAvailable() { return verbs::IsVerbsDeviceAvailableImpl(); }

absl::StatusOr<std::unique_ptr<VerbsTransport>> VerbsTransport::Create(const TransportOptions& options,
                                                                       verbs::VerbsConnectSeams seams) {
  RETURN_IF_ERROR(options.Validate());
  ASSIGN_OR_RETURN(std::shared_ptr<verbs::DeviceSet> devices, verbs::DeviceSet::Create(options.rdma_device));
  if (seams.tickets == nullptr)
    seams.tickets = verbs::MakeAuthPortTicketSource(options.secret, options.connect_timeout);
  std::unique_ptr<VerbsTransport> t(new VerbsTransport(options, std::move(seams), devices));
  ASSIGN_OR_RETURN(t->monitor_, verbs::AsyncEventMonitor::Create(devices));
  return t;
}

VerbsTransport::VerbsTransport(const TransportOptions& options, verbs::VerbsConnectSeams seams,
                               std::shared_ptr<verbs::DeviceSet> devices)
    : options_(options),
      seams_(std::move(seams)),
      devices_(std::move(devices)),
      counters_(std::make_shared<verbs::VerbsCounters>()),
      auth_counters_(std::make_unique<verbs::AuthPortCounters>()) {}

VerbsTransport::~VerbsTransport() { Shutdown(); }

absl::Status VerbsTransport::RegisterArena(uint8_t* base, uint64_t size) {
  MutexLock lock(&mu_);
  if (arena_frozen_ || shut_down_) {
    return MakeError(ErrorCode::kInvalidArgument, "verbs RegisterArena must precede Listen and Connect");
  }
  return devices_->RegisterArena(base, size);
}

RemoteRegion VerbsTransport::RegionFor(uint64_t offset, uint64_t length) const {
  RemoteRegion r;
  r.addr = reinterpret_cast<uint64_t>(devices_->arena_base()) + offset;
  r.length = length;
  const auto& mr = devices_->primary().arena_mr;
  r.rkey = mr ? mr->rkey : 0;
  return r;
}

absl::StatusOr<std::string> VerbsTransport::Listen(const std::string& address, RequestHandler* handler) {
  MutexLock lock(&mu_);
  if (shut_down_) return MakeError(ErrorCode::kUnavailable, "verbs transport shut down");
  if (listener_) return MakeError(ErrorCode::kInvalidArgument, "verbs transport already listening");
  arena_frozen_ = true;
  ASSIGN_OR_RETURN(listener_,
                   verbs::Listener::Create(options_, devices_, counters_, auth_counters_.get(), address, handler));
  return listener_->bound_address();
}

absl::StatusOr<std::shared_ptr<Channel>> VerbsTransport::Connect(const std::string& address, absl::Time deadline) {
  ASSIGN_OR_RETURN(std::string first_ticket, seams_.tickets->Fetch(address, deadline));
  ASSIGN_OR_RETURN(sockaddr_storage addr, verbs::ResolveHostPort(address));
  {
    MutexLock lock(&mu_);
    if (shut_down_) return MakeError(ErrorCode::kUnavailable, "verbs transport shut down");
    arena_frozen_ = true;
  }
  // One endpoint presenting `ticket_bytes`; the observer hears of it once it is up.
  auto connect_endpoint = [options = options_, devices = devices_, counters = counters_, addr, address,
                           observer = seams_.observer](absl::string_view ticket_bytes,
                                                       absl::Time d) -> absl::StatusOr<std::shared_ptr<Endpoint>> {
    Ticket ticket{};
    std::memcpy(ticket.data(), ticket_bytes.data(), std::min(ticket_bytes.size(), ticket.size()));
    ASSIGN_OR_RETURN(std::shared_ptr<Endpoint> ep, Endpoint::Connect(options, devices, counters, addr, ticket, d));
    if (observer != nullptr) {
      observer->OnEndpointConnected(address, ep->read_window());
      observer->OnQpFaultInjector(address, [weak = std::weak_ptr<Endpoint>(ep)]() -> absl::Status {
        std::shared_ptr<Endpoint> live = weak.lock();
        return live ? live->ForceQpError() : MakeError(ErrorCode::kUnavailable, "verbs endpoint gone");
      });
    }
    return ep;
  };
  auto connector = [connect_endpoint, address, tickets = seams_.tickets, timeout = options_.connect_timeout](
                       absl::Time deadline) -> absl::StatusOr<std::shared_ptr<Endpoint>> {
    absl::Time d = std::min(deadline, absl::Now() + timeout);
    ASSIGN_OR_RETURN(std::string t, tickets->Fetch(address, d));
    return connect_endpoint(t, d);
  };
  absl::Time d = std::min(deadline, absl::Now() + options_.connect_timeout);
  ASSIGN_OR_RETURN(std::shared_ptr<Endpoint> ep, connect_endpoint(first_ticket, d));
  auto channel = std::make_shared<verbs::VerbsChannel>(address, std::move(connector), std::move(ep), counters_);
  MutexLock lock(&mu_);
  if (shut_down_) {
    channel->Close();
    return MakeError(ErrorCode::kUnavailable, "verbs transport shut down");
  }
  std::erase_if(channels_, [](const auto& w) { return w.expired(); });
  channels_.push_back(channel);
  return std::shared_ptr<Channel>(channel);
}

TransportStats VerbsTransport::stats() const {
  TransportStats s = counters_->Snapshot();
  // The auth port counts its own failures; a CONNECT_REQUEST refused for its ticket is one too.
  s.Set("auth_failures", auth_counters_->failures.load() + ticket_refusals());
  return s;
}

uint64_t VerbsTransport::qps_created() const { return counters_->qps_created.load(); }

uint64_t VerbsTransport::ticket_refusals() const { return auth_counters_->ticket_refusals.load(); }

uint64_t VerbsTransport::cq_events() const { return counters_->cq_events.load(); }

uint64_t VerbsTransport::waiter_completions() const { return counters_->waiter_completions.load(); }

void VerbsTransport::Shutdown() {
  std::vector<std::weak_ptr<verbs::VerbsChannel>> channels;
  std::unique_ptr<verbs::Listener> listener;
  {
    MutexLock lock(&mu_);
    if (shut_down_) return;
    shut_down_ = true;
    channels.swap(channels_);
  }
  for (auto& weak : channels) {
    if (auto ch = weak.lock()) ch->Close();
  }
  {
    MutexLock lock(&mu_);
    listener = std::move(listener_);
  }
  listener.reset();
  monitor_.reset();
}

}  // namespace rplasma::transport
