#include "manager/fetch/channel_cache.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"

#include "manager/fetch/threshold_prober.h"
#include "protocol/base/logging.h"
#include "protocol/base/mutex_lock.h"
#include "protocol/base/status.h"

namespace rplasma::fetch {

absl::StatusOr<std::shared_ptr<transport::Channel>> ChannelCache::ChannelTo(const std::string& node_id,
                                                                            absl::Time deadline) {
  std::shared_ptr<transport::Channel> cached;
  {
    MutexLock lock(&mu_);
    auto it = channels_.find(node_id);
    if (it != channels_.end()) cached = it->second;
  }
  // healthy() may look at the socket (a syscall): not under the lock every fetch takes.
  if (cached != nullptr && cached->healthy()) return cached;
  absl::StatusOr<NodeRecord> record = directory_->GetNode(node_id);
  if (!record.ok()) {
    // A missing, expired or garbage node record makes this one source unusable, not the object
    // unfetchable: report it as "not found here" so that the fetch keeps waiting for a good source.
    const ErrorCode code = ErrorCodeOf(record.status());
    if (code == ErrorCode::kObjectNotFound || code == ErrorCode::kProtocolError ||
        code == ErrorCode::kInvalidArgument) {
      return MakeError(ErrorCode::kObjectNotFound,
                       absl::StrCat("node ", node_id, " has no usable record: ", record.status().message()));
    }
    return record.status();
  }
  const NodeRecord& node = *record;
  const std::string& address = verbs_ ? node.verbs_address : node.tcp_address;
  if (address.empty()) {
    return MakeError(ErrorCode::kUnavailable,
                     absl::StrCat("node ", node_id, " has no ", verbs_ ? "verbs" : "tcp", " address"));
  }
  absl::StatusOr<std::shared_ptr<transport::Channel>> channel = transport_->Connect(address, deadline);
  if (!channel.ok()) {
    return MakeError(ErrorCodeOf(channel.status()) == ErrorCode::kPermissionDenied ? ErrorCode::kPermissionDenied
                                                                                   : ErrorCode::kUnavailable,
                     absl::StrCat("connect to node ", node_id, " at ", address, ": ", channel.status().message()));
  }
  std::shared_ptr<transport::Channel> chosen;
  std::vector<std::shared_ptr<transport::Channel>> dead;  // closed outside the lock
  {
    MutexLock lock(&mu_);
    auto& slot = channels_[node_id];
    if (slot == nullptr || !slot->healthy()) slot = *channel;
    chosen = slot;
    // Peers that died or restarted (a restarted node has a new id) are never asked for again:
    // drop their channels now, or each restart would keep a connection open here for good.
    for (auto it = channels_.begin(); it != channels_.end();) {
      if (it->second->healthy()) {
        ++it;
      } else {
        dead.push_back(std::move(it->second));
        it = channels_.erase(it);
      }
    }
  }
  MaybeCalibrate(node_id, address, deadline);
  return chosen;
}

void ChannelCache::MaybeCalibrate(const std::string& node_id, const std::string& address, absl::Time deadline) {
  if (!policy_->adaptive() || policy_->Calibrated(node_id)) return;
  {
    MutexLock lock(&mu_);
    if (!calibrating_.insert(node_id).second) return;  // another thread probes it
  }
  // The probe is short; never let it eat more than a few seconds of a fetch's budget.
  const absl::Time probe_deadline = std::min(deadline, clock_->Now() + absl::Seconds(5));
  absl::StatusOr<std::vector<ProbeSample>> samples;
  if (absl::StatusOr<std::shared_ptr<transport::Channel>> own = transport_->ConnectPrivate(address, probe_deadline);
      own.ok()) {
    samples = ProbeThreshold(**own, *store_, probe_deadline, *clock_);
  } else {
    samples = own.status();
  }
  if (samples.ok()) {
    policy_->Calibrate(node_id, *samples);
    stats_->calibrations.fetch_add(1, std::memory_order_relaxed);
    LOG(INFO) << "threshold for peer " << node_id << ": " << policy_->ThresholdFor(node_id) << " bytes (probed)";
  } else {
    LOG(WARNING) << "threshold probe of peer " << node_id << " failed (keeping " << policy_->ThresholdFor(node_id)
                 << " bytes): " << samples.status();
  }
  MutexLock lock(&mu_);
  calibrating_.erase(node_id);
}

void ChannelCache::Forget(const std::string& node_id) {
  std::shared_ptr<transport::Channel> dropped;  // closed outside the lock
  MutexLock lock(&mu_);
  auto it = channels_.find(node_id);
  if (it == channels_.end()) return;
  dropped = std::move(it->second);
  channels_.erase(it);
}

void ChannelCache::Clear() {
  std::map<std::string, std::shared_ptr<transport::Channel>> dropped;
  MutexLock lock(&mu_);
  dropped.swap(channels_);
}

size_t ChannelCache::size() const {
  MutexLock lock(&mu_);
  return channels_.size();
}

}  // namespace rplasma::fetch
