#include "manager/peer/peer_service.h"

#include <algorithm>
#include <memory>
#include <variant>

#include "absl/strings/str_cat.h"

#include "protocol/base/logging.h"
#include "protocol/base/mutex_lock.h"
#include "protocol/base/status.h"

namespace rplasma::peer {
namespace {

// Store pins held until the reply that carries their objects' bytes has been sent: then one store
// request releases them all.
class HeldPins {
 public:
  HeldPins(LocalStore* store, std::vector<std::unique_ptr<PinnedObject>> pins)
      : store_(store), pins_(std::move(pins)) {}
  HeldPins(const HeldPins&) = delete;
  HeldPins& operator=(const HeldPins&) = delete;
  ~HeldPins() {
    if (!pins_.empty()) store_->ReleaseMany(std::move(pins_));
  }

 private:
  LocalStore* const store_;
  std::vector<std::unique_ptr<PinnedObject>> pins_;
};

}  // namespace

absl::Status PeerServiceOptions::Validate() const {
  RETURN_IF_ERROR(leases.Validate());
  if (max_get_bytes == 0 || max_get_bytes > transport::kMaxCallBytes) {
    return MakeError(ErrorCode::kInvalidArgument, "max_get_bytes must be 1..kMaxCallBytes");
  }
  if (clock == nullptr) return MakeError(ErrorCode::kInvalidArgument, "clock must be set");
  if (reap_interval <= absl::ZeroDuration()) {
    return MakeError(ErrorCode::kInvalidArgument, "reap_interval must be positive");
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<PeerService>> PeerService::Create(const PeerServiceOptions& options, LocalStore* store,
                                                                 RegionFor region_for) {
  RETURN_IF_ERROR(options.Validate());
  if (store == nullptr || !region_for) return MakeError(ErrorCode::kInvalidArgument, "peer service: no store");
  std::unique_ptr<PeerService> service(new PeerService(options, store, std::move(region_for)));
  service->reaper_ = std::thread([s = service.get()] { s->ReapLoop(); });
  return service;
}

PeerService::PeerService(const PeerServiceOptions& options, LocalStore* store, RegionFor region_for)
    : options_(options),
      store_(store),
      region_for_(std::move(region_for)),
      leases_(options.leases),
      probe_id_(ObjectID::Random()) {}

PeerService::~PeerService() { Shutdown(); }

void PeerService::Shutdown() {
  {
    MutexLock lock(&reap_mu_);
    stopping_ = true;
  }
  if (reaper_.joinable()) reaper_.join();
  leases_.Expire(absl::InfiniteFuture());
  MutexLock lock(&probe_mu_);
  if (probe_.has_value()) {
    absl::Status s = store_->Abort(probe_id_);
    if (!s.ok()) LOG(WARNING) << "abort of the probe object: " << s;
    probe_.reset();
  }
}

void PeerService::ReapLoop() {
  const absl::Duration interval = std::min(options_.reap_interval, options_.leases.ttl / 4);
  MutexLock lock(&reap_mu_);
  while (!stopping_) {
    lock.AwaitWithTimeout(absl::Condition(&stopping_), interval);
    if (stopping_) break;
    lock.Unlock();  // releasing store references must not hold up Shutdown's flag
    const size_t n = leases_.Expire(options_.clock->Now());
    if (n > 0) LOG(INFO) << "peer leases expired: " << n;
    lock.Lock();
  }
}

void PeerService::OnConnect(uint64_t conn_id, const std::string& peer_address) {
  connections_.fetch_add(1, std::memory_order_relaxed);
}

void PeerService::OnDisconnect(uint64_t conn_id) {
  const size_t n = leases_.DropConnection(conn_id);
  leases_dropped_.fetch_add(n, std::memory_order_relaxed);
}

bool PeerService::AllowRead(uint64_t conn_id, const transport::RemoteRegion& region) {
  const bool allowed = leases_.AllowRead(conn_id, region, options_.clock->Now());
  (allowed ? reads_allowed_ : reads_refused_).fetch_add(1, std::memory_order_relaxed);
  return allowed;
}

transport::CallReply PeerService::HandleCall(uint64_t conn_id, absl::string_view request) {
  absl::StatusOr<PeerRequest> decoded = DecodeRequest(request);
  if (!decoded.ok()) {
    bad_requests_.fetch_add(1, std::memory_order_relaxed);
    LOG(WARNING) << "peer connection " << conn_id << ": bad request: " << decoded.status();
    return EncodeErrorReply(decoded.status());
  }
  absl::StatusOr<transport::CallReply> reply = Handle(conn_id, *decoded);
  if (!reply.ok()) {
    failed_requests_.fetch_add(1, std::memory_order_relaxed);
    return EncodeErrorReply(reply.status());
  }
  return *std::move(reply);
}

absl::StatusOr<transport::CallReply> PeerService::Handle(uint64_t conn_id, const PeerRequest& request) {
  if (const auto* get = std::get_if<GetRequest>(&request)) return HandleGet(get->id);
  if (const auto* pin = std::get_if<PinRequest>(&request)) return HandlePin(conn_id, pin->id);
  if (const auto* unpin = std::get_if<UnpinRequest>(&request)) {
    if (!leases_.Remove(conn_id, unpin->lease_id)) {
      return ObjectNotFoundError(absl::StrCat("unpin: no lease ", unpin->lease_id, " on this connection"));
    }
    unpins_.fetch_add(1, std::memory_order_relaxed);
    return EncodeUnpinReply();
  }
  if (const auto* batch = std::get_if<FetchBatchRequest>(&request)) return HandleFetchBatch(conn_id, *batch);
  if (const auto* batch = std::get_if<UnpinBatchRequest>(&request)) return HandleUnpinBatch(conn_id, batch->lease_ids);
  if (const auto* probe = std::get_if<ProbeGetRequest>(&request)) return HandleProbe(conn_id, probe->bytes, false);
  return HandleProbe(conn_id, std::get<ProbePinRequest>(request).bytes, true);
}

absl::StatusOr<std::string> PeerService::HandleGet(const ObjectID& id) {
  ASSIGN_OR_RETURN(std::unique_ptr<PinnedObject> pinned, store_->Pin(id));
  const ObjectInfo& info = pinned->info();
  const ObjectDescription object = info.description();
  const uint64_t total = object.total_size();
  if (total > options_.max_get_bytes) {
    return MakeError(ErrorCode::kInvalidArgument,
                     absl::StrCat("get ", id.Hex(), ": ", total, " bytes exceed the Get limit of ",
                                  options_.max_get_bytes, "; use Pin"));
  }
  std::string reply =
      EncodeGetReply(object, {pinned->base(), info.data_size}, {pinned->base() + info.data_size, info.metadata_size});
  gets_.fetch_add(1, std::memory_order_relaxed);
  get_bytes_.fetch_add(total, std::memory_order_relaxed);
  return reply;  // `pinned` releases the store reference here
}

absl::StatusOr<std::string> PeerService::HandlePin(uint64_t conn_id, const ObjectID& id) {
  ASSIGN_OR_RETURN(std::unique_ptr<PinnedObject> pinned, store_->Pin(id));
  ASSIGN_OR_RETURN(PinReply reply, Lease(conn_id, std::move(pinned)));
  return EncodePinReply(reply);
}

absl::StatusOr<PinReply> PeerService::Lease(uint64_t conn_id, std::unique_ptr<PinnedObject> pinned) {
  const ObjectInfo info = pinned->info();
  PinReply reply;
  reply.object = info.description();
  reply.region = region_for_(info.offset, reply.object.total_size());
  reply.lease_ttl_ms = absl::ToInt64Milliseconds(leases_.ttl());
  ASSIGN_OR_RETURN(reply.lease_id, leases_.Add(conn_id, reply.region, std::move(pinned), options_.clock->Now()));
  pins_.fetch_add(1, std::memory_order_relaxed);
  return reply;
}

transport::CallReply PeerService::HandleFetchBatch(uint64_t conn_id, const FetchBatchRequest& request) {
  const std::vector<ObjectID>& ids = request.ids;
  std::vector<absl::StatusOr<std::unique_ptr<PinnedObject>>> pinned = store_->PinMany(ids);
  std::vector<FetchBatchEntry> entries(ids.size());
  std::vector<std::unique_ptr<PinnedObject>> held;  // the inline ones, until their bytes are sent
  std::vector<absl::string_view> tail;              // their bytes, in entry order
  held.reserve(ids.size());
  const uint64_t budget = std::min(request.inline_budget, options_.max_get_bytes);
  uint64_t reply_bytes = 0;
  for (size_t i = 0; i < ids.size(); ++i) {
    FetchBatchEntry& entry = entries[i];
    if (i >= pinned.size()) {
      entry.status = MakeError(ErrorCode::kInternal, "fetch-batch: the store answered fewer ids than asked");
    } else if (!pinned[i].ok()) {
      entry.status = pinned[i].status();
    } else {
      const ObjectInfo& info = (*pinned[i])->info();
      const uint64_t total = info.description().total_size();
      if (total <= request.inline_max && total <= budget - reply_bytes) {
        reply_bytes += total;
        entry.object = info.description();
        entry.bytes = {(*pinned[i])->base(), total};
        tail.emplace_back(reinterpret_cast<const char*>(entry.bytes.data()), total);
        held.push_back(*std::move(pinned[i]));
      } else {
        absl::StatusOr<PinReply> pin = Lease(conn_id, *std::move(pinned[i]));
        if (pin.ok()) {
          entry.pin = *std::move(pin);
        } else {
          entry.status = pin.status();
        }
      }
    }
    if (!entry.status.ok()) failed_entries_.fetch_add(1, std::memory_order_relaxed);
  }
  transport::CallReply reply(EncodeFetchBatchReplyHead(entries));
  reply.tail = std::move(tail);
  fetch_batches_.fetch_add(1, std::memory_order_relaxed);
  gets_.fetch_add(held.size(), std::memory_order_relaxed);
  get_bytes_.fetch_add(reply_bytes, std::memory_order_relaxed);
  // The inline bytes go from the arena to the wire; the pins end, with one store request for them
  // all, when the transport drops the reply.
  reply.keep = std::make_shared<HeldPins>(store_, std::move(held));
  return reply;
}

std::string PeerService::HandleUnpinBatch(uint64_t conn_id, const std::vector<uint64_t>& lease_ids) {
  for (uint64_t lease_id : lease_ids) {
    if (leases_.Remove(conn_id, lease_id)) unpins_.fetch_add(1, std::memory_order_relaxed);
  }
  return EncodeUnpinReply();
}

absl::StatusOr<CreatedObject> PeerService::ProbeRegion() {
  MutexLock lock(&probe_mu_);
  if (!probe_.has_value()) {
    ASSIGN_OR_RETURN(CreatedObject created, store_->Create(probe_id_, kMaxProbeBytes, 0));
    probe_ = created;
  }
  return *probe_;
}

absl::StatusOr<transport::CallReply> PeerService::HandleProbe(uint64_t conn_id, uint64_t bytes, bool pin) {
  ASSIGN_OR_RETURN(CreatedObject probe, ProbeRegion());
  probes_.fetch_add(1, std::memory_order_relaxed);
  const ObjectDescription object{bytes, 0, 0, 0};
  if (!pin) {
    // Sent from the arena as a FetchBatch's inline bytes are (gather on send): the probe times a
    // Get's path, not a copy of up to 4 MiB into a reply buffer that no real Get makes. The probe
    // object lives until Shutdown.
    transport::CallReply reply(EncodeGetReplyHead(object));
    reply.tail.emplace_back(reinterpret_cast<const char*>(probe.base()), bytes);
    return reply;
  }
  PinReply reply;
  reply.object = object;
  reply.region = region_for_(probe.offset, bytes);
  reply.lease_ttl_ms = absl::ToInt64Milliseconds(leases_.ttl());
  ASSIGN_OR_RETURN(reply.lease_id, leases_.Add(conn_id, reply.region, nullptr, options_.clock->Now()));
  return EncodePinReply(reply);
}

PeerServiceStats PeerService::stats() const { return counters_.Snapshot(); }

}  // namespace rplasma::peer
