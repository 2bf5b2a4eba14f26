// Why waiters poll: with blocking completion channels a Call round trip costs four thread
// wake-ups (server completion thread -> dispatch thread, client completion thread -> caller), each
// far slower than the wire on a virtualised or loaded host. Here the thread that needs the next
// completion polls for it, so on the fast path no thread hands anything to another.
//
// Why only one poller: completions of one QP must be processed in order (credits, fragment
// reassembly, slot recycling), and two threads spinning on one CQ only burn a core.
//
// Why the one letting go arms: the CQ must be armed whenever nobody polls it, and a completion
// that landed between the last empty poll and the arm raises no event, hence the poll after
// arming. armed_ skips the ibv_req_notify_cq syscall while the previous arm has not fired (an event
// already raised but not yet consumed leaves armed_ true; the completion thread consumes it, finds
// the role free and polls, so nothing is stranded either way).
//
// Why the active side may leave the CQ unarmed: there every completion is the consequence of
// some thread's own request (its SEND, its READ, the reply or credit it waits for), and every
// thread that waits polls for itself, arming before it blocks; so while no thread is blocked the
// CQ need not raise events. Arming anyway would make the next Call's first completion wake the
// completion thread for nothing. What nobody waits for (a late reply, a stray credit update, the
// SEND completion that lags its reply) is picked up by the next waiter, by Close, or by the
// completion thread's periodic drain. A waiter that finds the CQ unarmed may spin even if its last
// spin ran dry: its letting go is what arms the CQ before it blocks. The passive side always arms:
// requests arrive unasked.
#include "manager/transport/verbs/poller_role.h"

namespace rplasma::transport::verbs {

PollerRole::WaitStep PollerRole::NextWaitStep(bool spun) const {
  const bool may_spin = spinning_ && (!spun || dry_at_batch_ != batches_ || !armed_);
  if (!may_spin) return WaitStep::kBlock;
  return held_ ? WaitStep::kBlockForRole : WaitStep::kSpin;
}

void PollerRole::Blocked(WaitStep step) {
  if (step == WaitStep::kBlockForRole) ++wanting_role_;
  ++blocked_;
}

void PollerRole::Unblocked(WaitStep step) {
  --blocked_;
  if (step == WaitStep::kBlockForRole) --wanting_role_;
}

void PollerRole::TakeRole(Who who, absl::Time now) {
  held_ = true;
  who_ = who;
  first_poll_ = true;
  ran_dry_ = false;
  empty_polls_ = 0;
  now_ = now;
  last_completion_ = now;
}

void PollerRole::CompletionsPolled(absl::FunctionRef<absl::Time()> clock) {
  ++batches_;
  if (spin_window_.dry()) spin_window_.Completed(clock());
}

PollerRole::SpinStep PollerRole::AfterPoll(int n, absl::Time deadline, absl::FunctionRef<absl::Time()> clock) {
  const bool first = first_poll_;
  first_poll_ = false;
  // An event whose completions a waiter already took (the thread wakes late on a busy host):
  // spinning now would only keep the role from the waiter that comes back for it.
  if (first && n == 0 && who_ == Who::kCompletionThread) return SpinStep::kLetGo;
  // Reading the clock can cost more than a poll (a guest on an emulated HPET): not every time.
  if (n > 0 || empty_polls_ % kPollsPerClockRead == 0) now_ = clock();
  if (n > 0) last_completion_ = now_;  // the window restarts after every completion
  if (now_ >= deadline) return SpinStep::kLetGo;
  // The completion thread makes way for a thread that waits: that one saves a hand-off.
  if (who_ == Who::kCompletionThread && wanting_role_ > 0) return SpinStep::kLetGo;
  if (n > 0) return SpinStep::kPollAgain;
  if (now_ - last_completion_ >= spin_window_.get()) {
    ran_dry_ = true;
    spin_window_.RanDry(last_completion_);
    return SpinStep::kLetGo;
  }
  // Now and then let a runnable thread on this CPU go first: on an oversubscribed host it may be
  // the one (e.g. the kernel's softirq thread for a software RDMA device) that makes progress.
  return ++empty_polls_ % kPollsPerYield == 0 ? SpinStep::kYield : SpinStep::kPause;
}

bool PollerRole::MustArmToLetGo(absl::FunctionRef<bool()> done) const {
  const bool leave_unarmed = spinning_ && !passive_ && blocked_ == 0 && (who_ == Who::kCompletionThread || done());
  return !leave_unarmed;
}

bool PollerRole::PolledAfterArming(int n) {
  if (n <= 0) return false;
  ran_dry_ = false;  // something came after all: the spin did not end on an idle CQ
  return true;
}

void PollerRole::LetGo() {
  if (ran_dry_) dry_at_batch_ = batches_;
  held_ = false;
}

}  // namespace rplasma::transport::verbs
