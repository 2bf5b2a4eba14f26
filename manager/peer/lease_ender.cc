#include "manager/peer/lease_ender.h"

#include <algorithm>
#include <string>
#include <utility>
#include <variant>

#include "manager/peer/peer_call.h"
#include "manager/peer/peer_messages.h"
#include "protocol/base/logging.h"
#include "protocol/base/mutex_lock.h"
#include "protocol/base/status.h"

namespace rplasma::peer {

LeaseEnder::LeaseEnder(LeaseEnderOptions options, const Clock& clock)
    : options_(options), clock_(clock), thread_([this] { Loop(); }) {}

LeaseEnder::~LeaseEnder() { Stop(); }

void LeaseEnder::Stop() {
  {
    MutexLock lock(&mu_);
    if (!stopping_) drain_deadline_ = clock_.Now() + options_.drain_timeout;
    stopping_ = true;
    wake_.Signal();
  }
  if (thread_.joinable()) thread_.join();
}

void LeaseEnder::End(std::shared_ptr<transport::Channel> channel, std::vector<uint64_t> leases) {
  for (size_t at = 0; at < leases.size(); at += kMaxBatchIds) {
    const auto first = leases.begin() + static_cast<std::ptrdiff_t>(at);
    std::vector<uint64_t> part(first, first + static_cast<std::ptrdiff_t>(std::min(kMaxBatchIds, leases.size() - at)));
    {
      MutexLock lock(&mu_);
      if (!stopping_ && queued_ + part.size() <= options_.max_queued) {
        queued_ += part.size();
        queue_.push_back(Pending{channel, std::move(part)});
        wake_.Signal();
        continue;
      }
    }
    Send(*channel, std::move(part), clock_.Now() + options_.call_timeout);  // full: the caller waits
  }
}

LeaseEnder::Pending LeaseEnder::TakeLocked() {
  Pending taken = std::move(queue_.front());
  queue_.pop_front();
  for (auto it = queue_.begin(); it != queue_.end();) {
    if (it->channel != taken.channel || taken.leases.size() + it->leases.size() > kMaxBatchIds) {
      ++it;
      continue;
    }
    taken.leases.insert(taken.leases.end(), it->leases.begin(), it->leases.end());
    it = queue_.erase(it);
  }
  queued_ -= taken.leases.size();
  return taken;
}

void LeaseEnder::Loop() {
  for (;;) {
    Pending next;
    absl::Time deadline;
    {
      MutexLock lock(&mu_);
      while (queue_.empty() && !stopping_) lock.Wait(&wake_);
      if (queue_.empty()) return;
      next = TakeLocked();
      deadline = std::min(drain_deadline_, clock_.Now() + options_.call_timeout);
    }
    Send(*next.channel, std::move(next.leases), deadline);
  }
}

void LeaseEnder::Send(transport::Channel& channel, std::vector<uint64_t> leases, absl::Time deadline) {
  const size_t count = leases.size();
  if (clock_.Now() >= deadline) {  // draining, out of time: the owner's TTL ends them
    failed_.fetch_add(count, std::memory_order_relaxed);
    return;
  }
  std::string wire;
  absl::StatusOr<PeerReplyView> reply = CallPeer(channel, UnpinBatchRequest{std::move(leases)}, deadline, wire);
  if (reply.ok() && std::holds_alternative<UnpinReply>(*reply)) {
    ended_.fetch_add(count, std::memory_order_relaxed);
    return;
  }
  failed_.fetch_add(count, std::memory_order_relaxed);
  LOG(INFO) << "unpin of " << count << " leases at " << channel.peer_address() << ": "
            << (reply.ok() ? absl::Status(ProtocolError("another reply kind")) : reply.status());
}

}  // namespace rplasma::peer
