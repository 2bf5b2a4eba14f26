#include "manager/transport/verbs/verbs_channel.h"

#include "protocol/base/mutex_lock.h"
#include "protocol/base/status.h"

namespace rplasma::transport::verbs {

absl::StatusOr<std::shared_ptr<Endpoint>> VerbsChannel::Acquire(absl::Time deadline) {
  {
    MutexLock lock(&mu_);
    if (closed_) return MakeError(ErrorCode::kUnavailable, "verbs channel closed");
    if (endpoint_ && endpoint_->healthy()) return endpoint_;
  }
  MutexLock connect_lock(&connect_mu_);
  std::shared_ptr<Endpoint> failed;
  {
    MutexLock lock(&mu_);
    if (closed_) return MakeError(ErrorCode::kUnavailable, "verbs channel closed");
    if (endpoint_ && endpoint_->healthy()) return endpoint_;  // another thread rebuilt it
    failed = std::move(endpoint_);
  }
  failed.reset();  // drained by its own Close once in-flight operations let go
  ASSIGN_OR_RETURN(std::shared_ptr<Endpoint> fresh, connector_(deadline));
  counters_->reconnects.fetch_add(1);
  MutexLock lock(&mu_);
  if (closed_) {
    fresh->Close();
    return MakeError(ErrorCode::kUnavailable, "verbs channel closed");
  }
  endpoint_ = fresh;
  return fresh;
}

absl::StatusOr<std::string> VerbsChannel::Call(absl::string_view request, absl::Time deadline) {
  absl::StatusOr<std::shared_ptr<Endpoint>> ep = Acquire(deadline);
  if (!ep.ok()) {
    counters_->errors.fetch_add(1);
    return ep.status();
  }
  absl::StatusOr<std::string> reply = (*ep)->Call(request, deadline);
  if (!reply.ok()) counters_->errors.fetch_add(1);
  return reply;
}

absl::Status VerbsChannel::Read(const RemoteRegion& region, uint8_t* dst, absl::Time deadline) {
  absl::StatusOr<std::shared_ptr<Endpoint>> ep = Acquire(deadline);
  if (!ep.ok()) {
    counters_->errors.fetch_add(1);
    return ep.status();
  }
  absl::Status s = (*ep)->Read(region, dst, deadline);
  if (!s.ok()) counters_->errors.fetch_add(1);
  return s;
}

bool VerbsChannel::healthy() const {
  MutexLock lock(&mu_);
  return !closed_ && endpoint_ && endpoint_->healthy();
}

void VerbsChannel::Close() {
  std::shared_ptr<Endpoint> ep;
  {
    MutexLock lock(&mu_);
    closed_ = true;
    ep = std::move(endpoint_);
  }
  if (ep) ep->Close();
}

}  // namespace rplasma::transport::verbs
