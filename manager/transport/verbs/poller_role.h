// PollerRole: which thread polls an endpoint's completion queue (CQ), and when the CQ is armed.
//
// At most one thread at a time polls the CQ: the one that holds the role, the "poller". A thread
// that waits for a completion (a Call for its reply, a Read for its READs, a sender for a credit,
// the dispatch thread for the next request, Close for flushes) takes the role itself when it is
// free, and spins: it polls until done, until its deadline, or until no completion came for one
// spin window (SpinWindow). The completion it waits for then needs no thread hand-off. A waiter
// that finds the role taken blocks until the poller lets go or its condition holds.
//
// A waiter spins again only if something completed since a spin last ran dry, or the CQ is
// unarmed: waiters never take turns spinning on an idle CQ. While spinning the poller reads the
// clock once every kPollsPerClockRead empty polls and yields the CPU once every kPollsPerYield.
//
// The completion thread is the fallback. Woken by a CQ event (or its periodic timeout), it takes
// the role only if nobody holds it, and spins the same way, except that it lets go at once when
// its first poll finds nothing (a waiter already took what the event announced) and as soon as a
// waiter wants the role (that waiter saves a hand-off).
//
// Letting go: a poller arms the CQ (so it raises an event) unless it is still armed — armed, and
// no event consumed since — then polls once more, again while polls find something, so nothing
// that landed before the arm is stranded. Exception, the active side with spinning on: when no
// thread is blocked waiting and the poller is the completion thread or got what it waited for,
// the CQ stays unarmed (every completion there answers a thread that polls for itself, and arms
// before it blocks). Letting go always ends with the endpoint waking its blocked waiters: one of
// them may take the role now.
//
// cq_spin 0: nobody spins. Waiters always block, letting go always arms, and the completion
// thread drains the CQ (polls until a poll finds nothing) after each event.
//
//   free ──TakeRole(waiter | completion thread)──► held ──AfterPoll: kLetGo, or its wait is done──┐
//    ▲                                                                                             │
//    └──LetGo◄── [MustArmToLetGo: arm unless armed(), poll while PolledAfterArming] ◄──────────────┘
//
// The endpoint makes the verbs calls (ibv_poll_cq, ibv_req_notify_cq, ibv_get_cq_event) and waits
// on its CondVar; this type only decides and counts. Not thread-safe: the endpoint calls it under
// its mutex (which it releases around each poll). Device-free; time is passed in.
#ifndef RPLASMA_MANAGER_TRANSPORT_VERBS_POLLER_ROLE_H_
#define RPLASMA_MANAGER_TRANSPORT_VERBS_POLLER_ROLE_H_

#include <cstdint>

#include "absl/functional/function_ref.h"
#include "absl/time/time.h"

#include "manager/transport/verbs/spin_window.h"

namespace rplasma::transport::verbs {

class PollerRole {
 public:
  enum class Who { kWaiter, kCompletionThread };

  // What a waiting thread does while its condition does not hold.
  enum class WaitStep {
    kSpin,          // take the role (TakeRole) and spin
    kBlockForRole,  // block: another thread holds the role this one would take
    kBlock,         // block: it may not spin now (cq_spin 0, or it spun dry and nothing came since)
  };
  // What the poller does after a poll that did not end its wait.
  enum class SpinStep {
    kPollAgain,  // at once: the poll found completions
    kPause,      // a few CPU pause instructions, with the endpoint's mutex released, then poll
    kYield,      // yield the CPU, with the endpoint's mutex released, then poll
    kLetGo,      // stop spinning and let go of the role
  };

  static constexpr uint32_t kPollsPerClockRead = 4;
  static constexpr uint32_t kPollsPerYield = 32;

  // `passive`: the endpoint serves requests, which arrive unasked, so it always arms its CQ.
  PollerRole(absl::Duration cq_spin, bool passive)
      : spinning_(cq_spin > absl::ZeroDuration()), passive_(passive), spin_window_(cq_spin) {}

  bool held() const { return held_; }

  // The CQ's arm. Armed: ibv_req_notify_cq succeeded. EventConsumed: the completion thread took
  // a CQ event, so the arm has fired.
  bool armed() const { return armed_; }
  void Armed() { armed_ = true; }
  void EventConsumed() { armed_ = false; }

  // A waiting thread. `spun`: this wait has spun before.
  WaitStep NextWaitStep(bool spun) const;
  // Around the block of a kBlock or kBlockForRole step.
  void Blocked(WaitStep step);
  void Unblocked(WaitStep step);

  // The completion thread, woken: it spins only if nobody holds the role.
  bool CompletionThreadTakesRole() const { return !held_; }

  // REQUIRES: !held(). The spin's window starts at `now`.
  void TakeRole(Who who, absl::Time now);
  // A poll (by the holder) returned completions. Calls `clock` only when the spin window needs the
  // time: reading the clock can cost more than a poll.
  void CompletionsPolled(absl::FunctionRef<absl::Time()> clock);
  // REQUIRES: held(). After a poll that found `n` >= 0 completions and did not end the wait.
  SpinStep AfterPoll(int n, absl::Time deadline, absl::FunctionRef<absl::Time()> clock);

  // REQUIRES: held(). Whether to arm the CQ (unless armed()) and poll once more before LetGo.
  // `done`: whether the holder got what it waited for; called only when that decides it.
  bool MustArmToLetGo(absl::FunctionRef<bool()> done) const;
  // A poll after arming found `n` completions (-1: the poll failed). Returns whether to poll again
  // (arming first unless armed()).
  bool PolledAfterArming(int n);
  // REQUIRES: held(). Frees the role; the endpoint then wakes its blocked waiters.
  void LetGo();

  absl::Duration spin_window() const { return spin_window_.get(); }

 private:
  const bool spinning_;  // cq_spin > 0
  const bool passive_;
  bool held_ = false;
  bool armed_ = false;
  uint64_t batches_ = 0;                  // non-empty polls so far
  uint64_t dry_at_batch_ = ~uint64_t{0};  // batches_ when a spin last ran dry
  uint32_t wanting_role_ = 0;             // threads blocked only because the role is held
  uint32_t blocked_ = 0;                  // threads blocked waiting
  SpinWindow spin_window_;
  // The holder's spin.
  Who who_ = Who::kWaiter;
  bool first_poll_ = false;
  bool ran_dry_ = false;
  uint32_t empty_polls_ = 0;
  absl::Time now_;
  absl::Time last_completion_;
};

}  // namespace rplasma::transport::verbs

#endif  // RPLASMA_MANAGER_TRANSPORT_VERBS_POLLER_ROLE_H_
