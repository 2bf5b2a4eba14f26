#include "protocol/base/reply_demultiplexer.h"

#include <utility>

#include "absl/strings/str_cat.h"

#include "protocol/base/logging.h"
#include "protocol/base/mutex_lock.h"
#include "protocol/base/status.h"

namespace rplasma {

ReplyDemultiplexer::~ReplyDemultiplexer() {
  MutexLock lock(&mu_);
  CHECK(table_.size() == detached_) << "connection destroyed while callers still wait for replies";
}

absl::Status ReplyDemultiplexer::Register(uint64_t id, ReplyWaiter* waiter) {
  MutexLock lock(&mu_);
  if (!broken_.ok()) return broken_;
  waiter->id_ = id;
  waiter->registered_ = true;
  waiter->done_ = false;
  waiter->receiving_ = false;
  table_[id] = waiter;
  return absl::OkStatus();
}

absl::Status ReplyDemultiplexer::RegisterDetached(uint64_t id) {
  MutexLock lock(&mu_);
  if (!broken_.ok()) return broken_;
  table_.emplace(id, nullptr);
  ++detached_;
  return absl::OkStatus();
}

absl::Status ReplyDemultiplexer::Wait(ReplyWaiter* waiter, absl::Time deadline, ReadOne read_one) {
  MutexLock lock(&mu_);
  // Each waiter sleeps on its own CondVar and checks its own predicate after a wake-up.
  while (!waiter->done_) {
    if (!leading_ && broken_.ok()) {
      // Lead: read replies (ours or others') until ours is in.
      leading_ = true;
      lock.Unlock();
      absl::Status read = read_one(deadline);
      lock.Lock();
      if (read.ok()) {
        StopLeadingLocked();
        continue;
      }
      if (ErrorCodeOf(read) == ErrorCode::kDeadlineExceeded) return ExpireLocked(lock, waiter, /*leading=*/true);
      // The stream position is lost. Our waiter is not receiving (we were the reader): the break
      // ends it, unless the reader already finished it with its own failure.
      BreakLocked(read);
      StopLeadingLocked();
      return EndAbortedLocked(lock, waiter, waiter->status_);
    }
    // Someone else leads (and may complete ours), or the connection broke while ours is received.
    if (lock.WaitWithDeadline(&waiter->cv_, deadline) && !waiter->done_) {
      return ExpireLocked(lock, waiter, /*leading=*/false);
    }
  }
  HandOverLocked();
  return waiter->status_;
}

absl::Status ReplyDemultiplexer::ExpireLocked(MutexLock& lock, ReplyWaiter* waiter, bool leading) {
  const absl::Status expired = hooks_.expired(waiter->id_);
  if (hooks_.on_deadline == OnDeadline::kBreakConnection) {
    // The reply may still be in flight: the stream position is lost.
    BreakLocked(expired);
    if (leading) StopLeadingLocked();
    return EndAbortedLocked(lock, waiter, expired);
  }
  if (leading) StopLeadingLocked();
  AbandonLocked(lock, waiter);                // hands leadership over
  if (waiter->done_) return waiter->status_;  // the reply came while we gave up
  return expired;
}

absl::Status ReplyDemultiplexer::EndAbortedLocked(MutexLock& lock, ReplyWaiter* waiter, const absl::Status& result) {
  WaitWhileReceivingLocked(lock, waiter);
  UnregisterLocked(waiter);
  if (waiter->done_ && waiter->status_.ok()) return absl::OkStatus();  // completed in the race: the data is good
  return result;
}

absl::Status ReplyDemultiplexer::Abort(ReplyWaiter* waiter, const absl::Status& cause) {
  MutexLock lock(&mu_);
  BreakLocked(cause);
  return EndAbortedLocked(lock, waiter, cause);
}

absl::Status ReplyDemultiplexer::Withdraw(ReplyWaiter* waiter, const absl::Status& result) {
  MutexLock lock(&mu_);
  WaitWhileReceivingLocked(lock, waiter);
  UnregisterLocked(waiter);
  if (waiter->done_) return waiter->status_;
  return result;
}

void ReplyDemultiplexer::Abandon(ReplyWaiter* waiter) {
  MutexLock lock(&mu_);
  AbandonLocked(lock, waiter);
}

void ReplyDemultiplexer::AbandonLocked(MutexLock& lock, ReplyWaiter* waiter) {
  WaitWhileReceivingLocked(lock, waiter);
  if (!waiter->registered_) return;
  auto it = table_.find(waiter->id_);
  if (it != table_.end() && it->second == waiter) {
    // Keep the id as detached, so its reply is still read and accounted for.
    it->second = nullptr;
    ++detached_;
  }
  waiter->registered_ = false;
  HandOverLocked();
}

absl::Status ReplyDemultiplexer::Deliver(uint64_t id, DeliverFn deliver) {
  MutexLock lock(&mu_);
  auto it = table_.find(id);
  if (it == table_.end()) return ProtocolError(absl::StrCat("reply for unknown request id ", id));
  ReplyWaiter* waiter = it->second;
  if (waiter == nullptr) {
    table_.erase(it);
    --detached_;
    (void)deliver(nullptr);
    return absl::OkStatus();
  }
  CompleteLocked(waiter, deliver(waiter));
  return absl::OkStatus();
}

absl::StatusOr<ReplyWaiter*> ReplyDemultiplexer::Claim(uint64_t id, AcceptFn accept) {
  MutexLock lock(&mu_);
  auto it = table_.find(id);
  if (it == table_.end()) return ProtocolError(absl::StrCat("reply for unknown request id ", id));
  ReplyWaiter* waiter = it->second;
  if (waiter == nullptr) {
    table_.erase(it);
    --detached_;
    return nullptr;
  }
  absl::Status accepted = accept(*waiter);
  if (!accepted.ok()) return accepted;
  waiter->receiving_ = true;
  return waiter;
}

void ReplyDemultiplexer::Finish(ReplyWaiter* waiter, absl::Status status, const absl::Status& break_cause) {
  MutexLock lock(&mu_);
  waiter->receiving_ = false;
  CompleteLocked(waiter, std::move(status));
  // Break before the waiter can run: once it sees its failure the connection is already broken.
  if (!break_cause.ok()) BreakLocked(break_cause);
}

void ReplyDemultiplexer::Unclaim(ReplyWaiter* waiter, bool expired) {
  MutexLock lock(&mu_);
  waiter->receiving_ = false;
  if (expired) {
    CompleteLocked(waiter, hooks_.expired(waiter->id_));
  } else {
    waiter->cv_.Signal();  // it may wait out its own deadline again, or lead
  }
}

void ReplyDemultiplexer::Break(const absl::Status& cause) {
  MutexLock lock(&mu_);
  BreakLocked(cause);
}

void ReplyDemultiplexer::BreakAndWaitForLeader(const absl::Status& cause) {
  MutexLock lock(&mu_);
  BreakLocked(cause);
  while (leading_) lock.Wait(&leader_gone_);
}

absl::Status ReplyDemultiplexer::health() const {
  MutexLock lock(&mu_);
  return broken_;
}

absl::StatusOr<size_t> ReplyDemultiplexer::DetachedOutstanding() const {
  MutexLock lock(&mu_);
  if (!broken_.ok()) return broken_;
  return detached_;
}

void ReplyDemultiplexer::BreakLocked(const absl::Status& cause) {
  if (!broken_.ok()) return;
  broken_ = cause.ok() ? MakeError(ErrorCode::kInternal, "connection broken without a cause") : cause;
  const absl::Status failed = hooks_.on_break(broken_);
  for (auto it = table_.begin(); it != table_.end();) {
    ReplyWaiter* waiter = it->second;
    if (waiter != nullptr && waiter->receiving_) {  // its leader finishes it (its read fails now)
      ++it;
      continue;
    }
    if (waiter != nullptr) {
      waiter->status_ = failed;
      waiter->done_ = true;
      waiter->registered_ = false;
      waiter->cv_.Signal();
    }
    table_.erase(it++);
  }
  detached_ = 0;
}

void ReplyDemultiplexer::CompleteLocked(ReplyWaiter* waiter, absl::Status status) {
  table_.erase(waiter->id_);
  waiter->status_ = std::move(status);
  waiter->done_ = true;
  waiter->registered_ = false;
  waiter->cv_.Signal();
}

void ReplyDemultiplexer::StopLeadingLocked() {
  leading_ = false;
  leader_gone_.SignalAll();
}

void ReplyDemultiplexer::HandOverLocked() {
  if (leading_ || !broken_.ok()) return;
  // A waiter still sending its request is asked too: it leads when it comes to Wait.
  for (const auto& [id, waiter] : table_) {
    if (waiter != nullptr && !waiter->done_) {
      waiter->cv_.Signal();
      return;
    }
  }
}

void ReplyDemultiplexer::WaitWhileReceivingLocked(MutexLock& lock, ReplyWaiter* waiter) {
  while (waiter->receiving_) lock.Wait(&waiter->cv_);
}

void ReplyDemultiplexer::UnregisterLocked(ReplyWaiter* waiter) {
  if (!waiter->registered_) return;
  auto it = table_.find(waiter->id_);
  if (it != table_.end() && it->second == waiter) table_.erase(it);
  waiter->registered_ = false;
}

}  // namespace rplasma
