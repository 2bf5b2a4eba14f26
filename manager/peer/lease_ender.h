// LeaseEnder: ends the leases a reader took on its peers (UnpinBatch) on a thread of its own, so
// that no fetch waits for the Unpin round trip.
//
// A transfer hands its leases here once its Reads are complete: the owner may then reuse those
// bytes, and nothing here reads them again (a Read that finished after its lease's TTL was already
// discarded by the clock alone: peer_call.h). What waits for one channel goes out together, up to
// kMaxBatchIds leases per UnpinBatch, oldest first. An Unpin that fails or times out, or that the
// destructor has no time left for, costs the owner those leases until their TTL, never a wait or
// an error here (the owner also ends a connection's leases when it closes).
//
// Bounded: at most max_queued leases wait. End() on a full queue sends its leases itself, on the
// caller's thread, so a peer that answers Unpins slowly slows its own fetches instead of growing
// the queue.
//
// Thread-safety: thread-safe, but Stop is not to be called concurrently with itself. One thread,
// started by the constructor; Stop (and the destructor) lets it send what waits, within
// drain_timeout, and joins it. After Stop, End sends on the caller's thread.
#ifndef RPLASMA_MANAGER_PEER_LEASE_ENDER_H_
#define RPLASMA_MANAGER_PEER_LEASE_ENDER_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

#include "manager/transport/transport.h"
#include "protocol/base/clock.h"

namespace rplasma::peer {

struct LeaseEnderOptions {
  absl::Duration call_timeout = absl::Seconds(2);          // one UnpinBatch
  size_t max_queued = size_t{1} << 16;                     // leases waiting to be sent
  absl::Duration drain_timeout = absl::Milliseconds(200);  // the destructor's time for what waits
};

class LeaseEnder {
 public:
  // `clock` is borrowed and outlives this; it times the Unpins' deadlines.
  LeaseEnder(LeaseEnderOptions options, const Clock& clock);
  ~LeaseEnder();
  LeaseEnder(const LeaseEnder&) = delete;
  LeaseEnder& operator=(const LeaseEnder&) = delete;

  // Sends what waits (within drain_timeout) and joins the thread. Idempotent; the destructor calls it.
  void Stop();

  // Ends `leases`, taken on `channel`'s peer, soon. Keeps the channel until they are sent.
  void End(std::shared_ptr<transport::Channel> channel, std::vector<uint64_t> leases);

  // Leases whose UnpinBatch the peer answered, and those whose UnpinBatch failed (left to the TTL).
  uint64_t ended() const { return ended_.load(std::memory_order_relaxed); }
  uint64_t failed() const { return failed_.load(std::memory_order_relaxed); }

 private:
  struct Pending {
    std::shared_ptr<transport::Channel> channel;
    std::vector<uint64_t> leases;  // 1..kMaxBatchIds
  };

  void Loop();
  // The oldest entry, with every later one of the same channel that still fits one UnpinBatch.
  Pending TakeLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Send(transport::Channel& channel, std::vector<uint64_t> leases, absl::Time deadline);

  const LeaseEnderOptions options_;
  const Clock& clock_;
  std::atomic<uint64_t> ended_{0};
  std::atomic<uint64_t> failed_{0};

  absl::Mutex mu_;
  absl::CondVar wake_;
  std::deque<Pending> queue_ ABSL_GUARDED_BY(mu_);
  size_t queued_ ABSL_GUARDED_BY(mu_) = 0;  // leases in queue_
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  absl::Time drain_deadline_ ABSL_GUARDED_BY(mu_) = absl::InfiniteFuture();
  std::thread thread_;  // last: started once everything it uses exists
};

}  // namespace rplasma::peer

#endif  // RPLASMA_MANAGER_PEER_LEASE_ENDER_H_
