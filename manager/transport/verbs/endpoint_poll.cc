// Endpoint completion processing: the verbs side of the poller role. PollerRole (poller_role.h)
// decides who polls, when to stop spinning and when to arm; this file polls the CQ, arms it,
// consumes the completion channel's events, and blocks and wakes waiters on the endpoint's CondVar.
#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

#include "manager/transport/verbs/endpoint.h"
#include "protocol/base/logging.h"
#include "protocol/base/status.h"

namespace rplasma::transport::verbs {
namespace {

constexpr int kPollBatch = 32;

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

}  // namespace

int Endpoint::PollOnceLocked(MutexLock& lock, PollerRole::Who who) {
  ibv_wc wc[kPollBatch];
  lock.Unlock();  // posting threads need mu_ while we sit in the provider
  int n = ibv_poll_cq(cq_.get(), kPollBatch, wc);
  lock.Lock();
  if (n < 0) {
    LOG(ERROR) << "ibv_poll_cq failed: " << n;
    FailLocked(MakeError(ErrorCode::kUnavailable, "ibv_poll_cq failed"));
    return -1;
  }
  if (n == 0) return 0;
  poller_.CompletionsPolled(absl::Now);
  if (who == PollerRole::Who::kWaiter) counters_->waiter_completions.fetch_add(n, std::memory_order_relaxed);
  for (int i = 0; i < n; ++i) ProcessCompletionLocked(wc[i]);
  MaybeSendCreditLocked();
  cv_.SignalAll();
  return n;
}

void Endpoint::SpinLocked(MutexLock& lock, PollerRole::Who who, absl::FunctionRef<bool()> done, absl::Time deadline) {
  poller_.TakeRole(who, absl::Now());
  for (;;) {
    const int n = PollOnceLocked(lock, who);
    if (n < 0 || done()) break;
    const PollerRole::SpinStep step = poller_.AfterPoll(n, deadline, absl::Now);
    if (step == PollerRole::SpinStep::kLetGo) break;
    if (step == PollerRole::SpinStep::kPollAgain) continue;
    lock.Unlock();
    if (step == PollerRole::SpinStep::kYield) {
      std::this_thread::yield();
    } else {
      for (int i = 0; i < 16; ++i) CpuRelax();
    }
    lock.Lock();
  }
  if (poller_.MustArmToLetGo(done)) {
    do {
      if (!poller_.armed()) {
        if (int rc = ibv_req_notify_cq(cq_.get(), 0); rc != 0) {
          // The completion thread's periodic wake-up still drains the CQ.
          LOG(ERROR) << "ibv_req_notify_cq failed: " << rc;
          break;
        }
        poller_.Armed();
      }
    } while (poller_.PolledAfterArming(PollOnceLocked(lock, who)));
  }
  poller_.LetGo();
  cv_.SignalAll();  // a waiter that found the role taken may take it now
}

bool Endpoint::AwaitLocked(MutexLock& lock, absl::FunctionRef<bool()> done, absl::Time deadline) {
  bool spun = false;
  while (!done()) {
    if (absl::Now() >= deadline) return false;
    const PollerRole::WaitStep step = poller_.NextWaitStep(spun);
    if (step == PollerRole::WaitStep::kSpin) {
      SpinLocked(lock, PollerRole::Who::kWaiter, done, deadline);
      spun = true;
      continue;
    }
    poller_.Blocked(step);  // a poller letting go now arms the CQ for us
    lock.WaitWithDeadline(&cv_, deadline);
    poller_.Unblocked(step);
  }
  return true;
}

void Endpoint::PollLoop() {
  while (!stop_.load()) {
    pollfd fds[3] = {{comp_channel_->fd, POLLIN, 0}, {wake_fd_.get(), POLLIN, 0}, {-1, POLLIN, 0}};
    int n = 2;
    if (events_) fds[n++].fd = events_->fd;
    int rc = ::poll(fds, n, 1000);
    if (rc < 0 && errno != EINTR) {
      LOG(ERROR) << "verbs endpoint: poll failed: " << std::strerror(errno);
      return;
    }
    if (stop_.load()) return;
    if (n == 3 && fds[2].revents != 0) HandleCmEvents();
    bool event = false;
    if (fds[0].revents != 0) {
      ibv_cq* cq = nullptr;
      void* ctx = nullptr;
      if (ibv_get_cq_event(comp_channel_.get(), &cq, &ctx) == 0) {
        ibv_ack_cq_events(cq, 1);
        counters_->cq_events.fetch_add(1, std::memory_order_relaxed);
        event = true;
      }
    }
    MutexLock lock(&mu_);
    if (event) poller_.EventConsumed();
    // The poller sees the completion, and re-arms when it lets go.
    if (!poller_.CompletionThreadTakesRole()) continue;
    // Spin-then-block; also runs after the 1 s timeout, which drains whatever an arm failure hid.
    SpinLocked(
        lock, PollerRole::Who::kCompletionThread, [this] { return stop_.load(); }, absl::InfiniteFuture());
  }
}

}  // namespace rplasma::transport::verbs
