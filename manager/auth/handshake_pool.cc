#include "manager/auth/handshake_pool.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"

#include "manager/auth/peer_auth.h"
#include "manager/auth/server_handshake.h"
#include "protocol/base/logging.h"
#include "protocol/base/mutex_lock.h"
#include "protocol/base/status.h"

namespace rplasma::auth {

struct HandshakePool::Connection {
  Connection(UniqueFd fd_in, std::string peer_in, absl::string_view secret, absl::Time deadline_in)
      : fd(std::move(fd_in)),
        peer(std::move(peer_in)),
        source(SourceOf(peer)),
        deadline(deadline_in),
        handshake(secret) {}

  UniqueFd fd;
  const std::string peer;
  const std::string source;
  const absl::Time deadline;
  ServerHandshake handshake;
  ServerHandshake::Want want = ServerHandshake::Want::kWrite;
};

std::string SourceOf(const std::string& peer_address) {
  if (!peer_address.empty() && peer_address.front() == '[') {
    const size_t close = peer_address.find(']');
    return close == std::string::npos ? peer_address : peer_address.substr(1, close - 1);
  }
  const size_t colon = peer_address.rfind(':');
  return colon == std::string::npos ? peer_address : peer_address.substr(0, colon);
}

absl::Status HandshakeLimits::Validate() const {
  if (timeout < absl::Milliseconds(10) || timeout > absl::Minutes(1)) {
    return MakeError(ErrorCode::kInvalidArgument, "handshake timeout must be 10 ms..1 min");
  }
  if (max_pending < 1 || max_pending > 65536) {
    return MakeError(ErrorCode::kInvalidArgument, "max pending handshakes must be 1..65536");
  }
  if (max_pending_per_source < 1 || max_pending_per_source > max_pending) {
    return MakeError(ErrorCode::kInvalidArgument, "max pending handshakes per source must be 1..max_pending");
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<HandshakePool>> HandshakePool::Create(std::string name, std::string secret,
                                                                     const HandshakeLimits& limits,
                                                                     OnAuthenticated on_authenticated,
                                                                     OnFailed on_failed) {
  RETURN_IF_ERROR(limits.Validate());
  WarmUpCrypto();  // before the first peer's deadline runs (peer_auth.h)
  UniqueFd wake(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!wake) return ErrnoError("eventfd", absl::StrCat(name, " handshake pool"), errno);
  std::unique_ptr<HandshakePool> pool(new HandshakePool(std::move(name), std::move(secret), limits, std::move(wake),
                                                        std::move(on_authenticated), std::move(on_failed)));
  pool->thread_ = std::thread([p = pool.get()] { p->Run(); });
  return pool;
}

HandshakePool::HandshakePool(std::string name, std::string secret, const HandshakeLimits& limits, UniqueFd wake_fd,
                             OnAuthenticated on_authenticated, OnFailed on_failed)
    : name_(std::move(name)),
      secret_(std::move(secret)),
      limits_(limits),
      wake_fd_(std::move(wake_fd)),
      on_authenticated_(std::move(on_authenticated)),
      on_failed_(std::move(on_failed)) {}

HandshakePool::~HandshakePool() { Shutdown(); }

void HandshakePool::Add(UniqueFd fd, std::string peer_address) {
  if (!fd) return;
  const int flags = ::fcntl(fd.get(), F_GETFL);
  if (flags < 0 || ::fcntl(fd.get(), F_SETFL, flags | O_NONBLOCK) != 0) {
    LOG(WARNING) << name_ << ": cannot make " << peer_address << " non-blocking: " << std::strerror(errno);
    return;
  }
  auto connection =
      std::make_unique<Connection>(std::move(fd), std::move(peer_address), secret_, absl::Now() + limits_.timeout);
  std::unique_ptr<Connection> dropped;
  {
    MutexLock lock(&mu_);
    if (stopping_) return;  // closes the fd
    // Bounded even if the pool thread lags: the newest connections are the ones worth keeping.
    if (queued_.size() >= limits_.max_pending) {
      dropped = std::move(queued_.front());
      queued_.erase(queued_.begin());
      pending_.fetch_sub(1, std::memory_order_acq_rel);
    }
    queued_.push_back(std::move(connection));
    pending_.fetch_add(1, std::memory_order_acq_rel);
  }
  if (dropped != nullptr) {
    on_failed_(dropped->peer, MakeError(ErrorCode::kUnavailable,
                                        absl::StrCat("peer auth: evicted by a newer connection before its handshake ",
                                                     "started (", limits_.max_pending, " pending at most)")));
  }
  const uint64_t one = 1;
  if (::write(wake_fd_.get(), &one, sizeof(one)) < 0 && errno != EAGAIN) {
    LOG(WARNING) << name_ << ": waking the handshake pool failed: " << std::strerror(errno);
  }
}

void HandshakePool::Shutdown() {
  MutexLock serial(&shutdown_mu_);
  {
    MutexLock lock(&mu_);
    if (stopping_ && !thread_.joinable()) return;
    stopping_ = true;
  }
  const uint64_t one = 1;
  (void)!::write(wake_fd_.get(), &one, sizeof(one));
  if (thread_.joinable()) thread_.join();
  MutexLock lock(&mu_);
  pending_.fetch_sub(queued_.size(), std::memory_order_acq_rel);
  queued_.clear();
}

void HandshakePool::Finish(std::vector<std::unique_ptr<Connection>>& live, size_t i, const absl::Status& why) {
  std::unique_ptr<Connection> c = std::move(live[i]);
  live.erase(live.begin() + static_cast<ptrdiff_t>(i));  // keeps the age order eviction relies on
  pending_.fetch_sub(1, std::memory_order_acq_rel);
  if (c->handshake.state() == ServerHandshake::State::kAuthenticated) {
    on_authenticated_(std::move(c->fd), c->peer);
  } else {
    on_failed_(c->peer, why);
  }
}

void HandshakePool::AdmitQueued(std::vector<std::unique_ptr<Connection>>& live) {
  std::vector<std::unique_ptr<Connection>> arrived;
  {
    MutexLock lock(&mu_);
    arrived.swap(queued_);
  }
  for (std::unique_ptr<Connection>& c : arrived) {
    size_t same_source = 0;
    size_t oldest_same_source = live.size();
    for (size_t i = 0; i < live.size(); ++i) {
      if (live[i]->source != c->source) continue;
      if (same_source++ == 0) oldest_same_source = i;
    }
    if (same_source >= limits_.max_pending_per_source) {
      Finish(live, oldest_same_source,
             MakeError(ErrorCode::kUnavailable,
                       absl::StrCat("peer auth: evicted by a newer connection from ", c->source, " (",
                                    limits_.max_pending_per_source, " pending from one source at most)")));
    } else if (live.size() >= limits_.max_pending) {
      Finish(live, 0,
             MakeError(ErrorCode::kUnavailable, absl::StrCat("peer auth: evicted by a newer connection (",
                                                             limits_.max_pending, " pending handshakes at most)")));
    }
    live.push_back(std::move(c));
    Connection& admitted = *live.back();
    admitted.want = admitted.handshake.Advance(admitted.fd.get());  // sends the challenge at once
    if (admitted.handshake.done()) Finish(live, live.size() - 1, admitted.handshake.status());
  }
}

void HandshakePool::Run() {
  std::vector<std::unique_ptr<Connection>> live;  // oldest first
  std::vector<pollfd> fds;
  while (true) {
    {
      MutexLock lock(&mu_);
      if (stopping_) break;
    }
    AdmitQueued(live);
    fds.assign(1, pollfd{wake_fd_.get(), POLLIN, 0});
    absl::Time next_deadline = absl::InfiniteFuture();
    for (const std::unique_ptr<Connection>& c : live) {
      fds.push_back(
          pollfd{c->fd.get(), static_cast<short>(c->want == ServerHandshake::Want::kWrite ? POLLOUT : POLLIN), 0});
      next_deadline = std::min(next_deadline, c->deadline);
    }
    int timeout_ms = -1;
    if (next_deadline != absl::InfiniteFuture()) {
      timeout_ms = static_cast<int>(
          std::clamp<int64_t>(absl::ToInt64Milliseconds(next_deadline - absl::Now()) + 1, 0, 60 * 1000));
    }
    const int rc = ::poll(fds.data(), fds.size(), timeout_ms);
    if (rc < 0 && errno != EINTR) {
      LOG(ERROR) << name_ << ": handshake pool poll failed: " << std::strerror(errno);
      absl::SleepFor(absl::Milliseconds(10));
      continue;
    }
    if (rc > 0 && fds[0].revents != 0) {
      uint64_t count;
      (void)!::read(wake_fd_.get(), &count, sizeof(count));
    }
    // Back to front, so Finish's erase does not shift entries still to visit; fds[i + 1] is live[i].
    for (size_t i = live.size(); rc > 0 && i-- > 0;) {
      if (fds[i + 1].revents == 0) continue;
      Connection& c = *live[i];
      c.want = c.handshake.Advance(c.fd.get());
      if (c.handshake.done()) Finish(live, i, c.handshake.status());
    }
    const absl::Time now = absl::Now();
    for (size_t i = live.size(); i-- > 0;) {
      if (now < live[i]->deadline) continue;
      Finish(live, i,
             MakeError(ErrorCode::kDeadlineExceeded, absl::StrCat("peer auth: handshake not finished within ",
                                                                  absl::FormatDuration(limits_.timeout))));
    }
  }
  pending_.fetch_sub(live.size(), std::memory_order_acq_rel);
  live.clear();  // closes them, without callbacks: the owner is shutting down
}

}  // namespace rplasma::auth
