// ReplyDemultiplexer: matches replies read off one connection to the callers waiting for them, by
// request id, with no reader thread (leader/follower). The store client's connection and the tcp
// transport's channel both use it; what a reply looks like on the wire is theirs.
//
// A caller registers a ReplyWaiter for a request id before the request leaves, then Waits. A
// waiting caller either leads — it is the one thread reading the connection: it calls the
// caller-supplied `read_one`, which reads one reply and hands it to its waiter (Deliver, or
// Claim + Finish) — or sleeps on its own CondVar until its reply is in or it is asked to lead. A
// leader stops once its own reply is in and hands leadership to a waiter that still waits. A single
// caller therefore pays one read of its own reply and no thread hand-off.
//
//   Register ──> Wait ──┬── leads: read_one() until its own reply is in ──┐
//                       └── follows: sleeps until done or asked to lead ──┴──> done (status final)
//
// A leader may fill a waiter's memory without the lock (Claim ... Finish: e.g. a payload received
// straight into the caller's buffer); such a waiter is "receiving", and nothing — a break, its
// own deadline, Abandon — lets it leave Wait until the leader has finished it, or has let go of it
// with Unclaim (so a slow reply never holds a waiter past its deadline: the reader bounds each
// piece it receives by the waiter's deadline and unclaims it then).
//
// Breaking: the first failure that loses the stream position (a read or write error, bytes that are
// not a valid reply, or a deadline under kBreakConnection) breaks the connection for good. Hooks::
// on_break runs once, under the lock: it must wake a leader blocked in a read (shutdown(2)) and
// returns the status every waiter not yet answered gets. Later Register calls, and health(), give
// the cause the connection broke with.
//
// Deadlines: a waiter whose deadline passes gets Hooks::expired(id) (DeadlineExceeded). Under
// kBreakConnection that also breaks the connection (its reply may still come and the reader cannot
// skip it); under kAbandonWaiter the waiter is abandoned: its reply, when it comes, is dropped,
// and the other waiters still get theirs.
//
// Detached ids: registered with no waiter; the leader reads their reply and drops it.
//
// Invariants (under mu_): at most one thread leads (leading_); every table entry is a registered,
// not-done waiter or a detached id (nullptr), and detached_ counts the nullptr entries; a done
// waiter is in no table and its status is final; once broken_ is set it never clears, and the
// table then holds only receiving waiters.
//
// Thread-safety: all methods are thread-safe. A ReplyWaiter belongs to one caller; only a leader
// holding its claim touches it besides. The hooks run under the internal lock: they must not call
// back into the demultiplexer.
#ifndef RPLASMA_PROTOCOL_BASE_REPLY_DEMULTIPLEXER_H_
#define RPLASMA_PROTOCOL_BASE_REPLY_DEMULTIPLEXER_H_

#include <cstddef>
#include <cstdint>
#include <functional>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace rplasma {

class MutexLock;

// One caller's slot for one reply; lives on the caller's stack. Derive from it to hold the reply's
// data (the demultiplexer hands the derived object to `read_one` as a ReplyWaiter).
class ReplyWaiter {
 public:
  ReplyWaiter() = default;
  ReplyWaiter(const ReplyWaiter&) = delete;
  ReplyWaiter& operator=(const ReplyWaiter&) = delete;

 private:
  friend class ReplyDemultiplexer;
  // All guarded by the owning ReplyDemultiplexer's mu_.
  uint64_t id_ = 0;
  bool registered_ = false;  // in the table: a reply for id_ is handed to this waiter
  bool done_ = false;        // status_ is final; no leader touches this waiter any more
  bool receiving_ = false;   // claimed: a leader fills it without the lock
  absl::Status status_;
  absl::CondVar cv_;  // signalled when done_ turns true, receiving_ false, or to lead
};

class ReplyDemultiplexer {
 public:
  enum class OnDeadline { kBreakConnection, kAbandonWaiter };
  struct Hooks {
    // Runs once, under the lock, when the connection breaks because of `cause`. Must make a
    // leader blocked in a read return. Returns the status of every waiter not yet answered.
    std::function<absl::Status(const absl::Status& cause)> on_break;
    // The status of the waiter for request `id` whose deadline passed (kDeadlineExceeded).
    std::function<absl::Status(uint64_t id)> expired;
    OnDeadline on_deadline = OnDeadline::kBreakConnection;
  };
  // Reads one reply as the leader, without the lock, by `deadline`, and hands it over with Deliver
  // or Claim + Finish (or drops it). Any error breaks the connection with that error as the cause —
  // except kDeadlineExceeded under kAbandonWaiter, which the reader may return at a reply boundary,
  // or mid-reply if it keeps the stream position for the next leader and holds no claim (Unclaim):
  // then the leader's own waiter is abandoned.
  using ReadOne = absl::FunctionRef<absl::Status(absl::Time deadline)>;
  // Under the lock: hands a reply already read whole to `waiter` (nullptr for a detached id: drop
  // it) and returns the waiter's final status.
  using DeliverFn = absl::FunctionRef<absl::Status(ReplyWaiter* waiter)>;
  // Under the lock: whether the reply about to be received suits `waiter`; an error is returned by
  // Claim, which then claims nothing.
  using AcceptFn = absl::FunctionRef<absl::Status(const ReplyWaiter& waiter)>;

  explicit ReplyDemultiplexer(Hooks hooks) : hooks_(std::move(hooks)) {}
  // REQUIRES: no waiter is registered (detached ids may be).
  ~ReplyDemultiplexer();
  ReplyDemultiplexer(const ReplyDemultiplexer&) = delete;
  ReplyDemultiplexer& operator=(const ReplyDemultiplexer&) = delete;

  // Registers `waiter` for the reply to `id`; call before the request leaves, so the reply always
  // finds it. The cause when broken (then nothing is registered).
  // REQUIRES: `waiter` is not registered; `id` is not registered.
  absl::Status Register(uint64_t id, ReplyWaiter* waiter) ABSL_LOCKS_EXCLUDED(mu_);
  // Registers `id` with no waiter: its reply is read and dropped. The cause when broken.
  absl::Status RegisterDetached(uint64_t id) ABSL_LOCKS_EXCLUDED(mu_);

  // Waits until `waiter`'s reply is in (leading the reads while nobody else does) or `deadline`
  // passes, and returns its final status: the one Deliver or Finish gave, the break status, or
  // Hooks::expired. Afterwards `waiter` is no longer registered.
  // REQUIRES: `waiter` was registered, and not waited for since (its reply may be in already).
  absl::Status Wait(ReplyWaiter* waiter, absl::Time deadline, ReadOne read_one) ABSL_LOCKS_EXCLUDED(mu_);

  // The ways out other than Wait. Each waits while `waiter` is receiving and leaves it unregistered.
  // Abort: the request broke the stream (e.g. part of it was written): breaks the connection with
  // `cause`; returns OK if the reply came intact after all, else `cause`.
  absl::Status Abort(ReplyWaiter* waiter, const absl::Status& cause) ABSL_LOCKS_EXCLUDED(mu_);
  // Withdraw: the request was never sent; the connection stays as it is. Returns the waiter's
  // status if it is done already (the connection broke), else `result`.
  absl::Status Withdraw(ReplyWaiter* waiter, const absl::Status& result) ABSL_LOCKS_EXCLUDED(mu_);
  // Abandon: nobody will Wait; the reply, when it comes, is dropped. No-op if not registered.
  void Abandon(ReplyWaiter* waiter) ABSL_LOCKS_EXCLUDED(mu_);

  // For `read_one`. Deliver: hands a reply read whole to its waiter in one step; ProtocolError for an
  // id not registered (the reply is not delivered).
  absl::Status Deliver(uint64_t id, DeliverFn deliver) ABSL_LOCKS_EXCLUDED(mu_);
  // Claim: the waiter the reply for `id` is about to be received into, now receiving; nullptr for a
  // detached id (now forgotten). ProtocolError for an id not registered, or what `accept` returned.
  absl::StatusOr<ReplyWaiter*> Claim(uint64_t id, AcceptFn accept) ABSL_LOCKS_EXCLUDED(mu_);
  // Finish: ends a Claim with the waiter's final status. With a non-OK `break_cause` the connection
  // breaks in the same step, so the waiter never sees its failure before the connection is broken.
  void Finish(ReplyWaiter* waiter, absl::Status status, const absl::Status& break_cause = absl::OkStatus())
      ABSL_LOCKS_EXCLUDED(mu_);
  // Unclaim: ends a Claim before the reply is whole; the reader keeps what it has received. With
  // `expired` the waiter is done with Hooks::expired (its deadline passed; the reader drops the
  // rest of the reply); else it stays registered and waiting, and a later Claim of its id resumes
  // it — or returns nullptr if it was abandoned meanwhile.
  void Unclaim(ReplyWaiter* waiter, bool expired) ABSL_LOCKS_EXCLUDED(mu_);

  // Breaks the connection with `cause` (no-op if broken already).
  void Break(const absl::Status& cause) ABSL_LOCKS_EXCLUDED(mu_);
  // Break, then waits until no thread leads (on_break's wake-up makes that prompt).
  void BreakAndWaitForLeader(const absl::Status& cause) ABSL_LOCKS_EXCLUDED(mu_);
  // OK while the connection works; else the cause it broke with.
  absl::Status health() const ABSL_LOCKS_EXCLUDED(mu_);
  // Detached ids whose reply has not come yet; the cause when broken.
  absl::StatusOr<size_t> DetachedOutstanding() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  void BreakLocked(const absl::Status& cause) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Marks `waiter` done with `status`, unregisters it and wakes it.
  void CompleteLocked(ReplyWaiter* waiter, absl::Status status) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void StopLeadingLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // If nobody leads and the connection works, asks one registered waiter to lead.
  void HandOverLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The one exit of a wait that did not end with the reply. REQUIRES: the connection is broken.
  // Waits while `waiter` is receiving, unregisters it; OK if its reply came intact, else `result`.
  // (The *Locked functions that take `lock` may wait on it: `lock` holds mu_.)
  absl::Status EndAbortedLocked(MutexLock& lock, ReplyWaiter* waiter, const absl::Status& result)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // `waiter`'s deadline passed (`leading`: while it led).
  absl::Status ExpireLocked(MutexLock& lock, ReplyWaiter* waiter, bool leading) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void AbandonLocked(MutexLock& lock, ReplyWaiter* waiter) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void WaitWhileReceivingLocked(MutexLock& lock, ReplyWaiter* waiter) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void UnregisterLocked(ReplyWaiter* waiter) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Hooks hooks_;
  mutable absl::Mutex mu_;
  // Registered ids: a waiter, or nullptr for a detached id.
  absl::flat_hash_map<uint64_t, ReplyWaiter*> table_ ABSL_GUARDED_BY(mu_);
  size_t detached_ ABSL_GUARDED_BY(mu_) = 0;
  bool leading_ ABSL_GUARDED_BY(mu_) = false;  // a thread is in read_one
  absl::Status broken_ ABSL_GUARDED_BY(mu_);   // the cause; OK while the connection works
  absl::CondVar leader_gone_;                  // signalled when leading_ turns false
};

}  // namespace rplasma

#endif  // RPLASMA_PROTOCOL_BASE_REPLY_DEMULTIPLEXER_H_
