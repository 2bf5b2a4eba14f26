// Endpoint completion processing: the poller role, spin-then-block, the completion thread.
//
// Why waiters poll: with blocking completion channels a Call round trip costs four thread
// wake-ups (server completion thread -> dispatch thread, client completion thread -> caller), each
// far slower than the wire on a virtualised or loaded host. Here the thread that needs the next
// completion polls for it, so on the fast path no thread hands anything to another.
//
// Why only one poller: completions of one QP must be processed in order (credits, fragment
// reassembly, slot recycling), and two threads spinning on one CQ only burn a core.
//
// Why the releaser arms: the CQ must be armed whenever nobody polls it, and a completion that
// landed between the last empty poll and the arm raises no event, hence the poll after arming.
// cq_armed_ skips the ibv_req_notify_cq syscall while the previous arm has not fired (an event
// already raised but not yet consumed leaves cq_armed_ true; the completion thread consumes it,
// finds the role free and polls, so nothing is stranded either way).
//
// Why the active side may leave the CQ unarmed: there every completion is the consequence of
// some thread's own request (its SEND, its READ, the reply or credit it waits for), and every
// thread that waits polls for itself, arming before it blocks; so while no thread is blocked the
// CQ need not raise events. Arming anyway would make the next Call's first completion wake the
// completion thread for nothing. What nobody waits for (a late reply, a stray credit update, the
// SEND completion that lags its reply) is picked up by the next waiter, by Close, or by the
// completion thread's periodic drain. The passive side always arms: requests arrive unasked.
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

constexpr uint32_t kPollsPerClockRead = 4;
constexpr uint32_t kPollsPerYield = 32;

}  // namespace

int Endpoint::PollOnceLocked(MutexLock& lock, Poller who) {
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
  ++poll_batches_;
  if (spin_window_.dry()) spin_window_.Completed(absl::Now());
  if (who == Poller::kWaiter) counters_->waiter_completions.fetch_add(n, std::memory_order_relaxed);
  for (int i = 0; i < n; ++i) ProcessCompletionLocked(wc[i]);
  MaybeSendCreditLocked();
  cv_.SignalAll();
  return n;
}

void Endpoint::SpinLocked(MutexLock& lock, Poller who, absl::FunctionRef<bool()> done, absl::Time deadline) {
  poller_active_ = true;
  absl::Time last_completion = absl::Now();
  bool ran_dry = false;
  uint32_t empty_polls = 0;
  absl::Time now = last_completion;
  for (bool first = true;; first = false) {
    int n = PollOnceLocked(lock, who);
    if (n < 0 || done()) break;
    // An event whose completions a waiter already took (the thread wakes late on a busy host):
    // spinning now would only keep the role from the waiter that comes back for it.
    if (first && n == 0 && who == Poller::kCompletionThread) break;
    // Reading the clock can cost more than a poll (a guest on an emulated HPET): not every time.
    if (n > 0 || empty_polls % kPollsPerClockRead == 0) now = absl::Now();
    if (n > 0) last_completion = now;  // the window restarts after every completion
    if (now >= deadline) break;
    // The completion thread makes way for a thread that waits: that one saves a hand-off.
    if (who == Poller::kCompletionThread && role_wanted_ > 0) break;
    if (n > 0) continue;
    if (now - last_completion >= spin_window_.get()) {
      ran_dry = true;
      spin_window_.RanDry(last_completion);
      break;
    }
    lock.Unlock();
    // Now and then let a runnable thread on this CPU go first: on an oversubscribed host it may be
    // the one (e.g. the kernel's softirq thread for a software RDMA device) that makes progress.
    if (++empty_polls % kPollsPerYield == 0) {
      std::this_thread::yield();
    } else {
      for (int i = 0; i < 16; ++i) CpuRelax();
    }
    lock.Lock();
  }
  // Let go of the role: arm (unless still armed), then poll once more to close the race. Active
  // side, spinning on: when no thread is blocked waiting, the CQ stays unarmed (see the header).
  const bool leave_unarmed = options_.cq_spin > absl::ZeroDuration() && handler_ == nullptr && blocked_waiters_ == 0 &&
                             (who == Poller::kCompletionThread || done());
  while (!leave_unarmed) {
    if (!cq_armed_) {
      if (int rc = ibv_req_notify_cq(cq_.get(), 0); rc != 0) {
        // The completion thread's periodic wake-up still drains the CQ.
        LOG(ERROR) << "ibv_req_notify_cq failed: " << rc;
        break;
      }
      cq_armed_ = true;
    }
    int n = PollOnceLocked(lock, who);
    if (n <= 0) break;
    ran_dry = false;
  }
  if (ran_dry) idle_at_batch_ = poll_batches_;
  poller_active_ = false;
  cv_.SignalAll();  // a waiter that found the role taken may take it now
}

bool Endpoint::AwaitLocked(MutexLock& lock, absl::FunctionRef<bool()> done, absl::Time deadline) {
  const bool may_spin = options_.cq_spin > absl::ZeroDuration();
  bool spun = false;
  while (!done()) {
    if (absl::Now() >= deadline) return false;
    // Spin unless this wait already spun and nothing completed since the last spin ran dry:
    // waiters must not take turns spinning on an idle CQ.
    // An unarmed CQ (active side) must be armed before anyone blocks: the spin's release does it.
    const bool eligible = may_spin && (!spun || idle_at_batch_ != poll_batches_ || !cq_armed_);
    if (eligible && !poller_active_) {
      SpinLocked(lock, Poller::kWaiter, done, deadline);
      spun = true;
      continue;
    }
    if (eligible) ++role_wanted_;
    ++blocked_waiters_;  // a poller letting go now arms the CQ for us
    lock.WaitWithDeadline(&cv_, deadline);
    --blocked_waiters_;
    if (eligible) --role_wanted_;
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
    if (event) cq_armed_ = false;
    if (poller_active_) continue;  // the poller sees the completion, and re-arms when it lets go
    // Spin-then-block; also runs after the 1 s timeout, which drains whatever an arm failure hid.
    SpinLocked(
        lock, Poller::kCompletionThread, [this] { return stop_.load(); }, absl::InfiniteFuture());
  }
}

}  // namespace rplasma::transport::verbs
