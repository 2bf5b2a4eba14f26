// PartialFrames: which client sessions hold a started but incomplete request frame, since when,
// and how many bytes they buffer, so the store can drop a client that sends half a frame and
// stalls (each may buffer up to max_frame_bytes) and cap the bytes held in partial frames across
// all sessions.
//
// A session is tracked from the moment its buffer holds bytes of a frame that is not complete
// until the buffer is empty again. The start time is that of the current frame: it is reset
// whenever the session completes a frame and still has bytes buffered (the next frame started
// then). Time is passed in; the tracker never reads a clock.
//
// Invariant: total_bytes() == the sum of the tracked sessions' bytes.
// Thread-safety: none (owned by the store's event-loop thread).
#ifndef RPLASMA_STORE_PARTIAL_FRAMES_H_
#define RPLASMA_STORE_PARTIAL_FRAMES_H_

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/btree_set.h"
#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"

#include "store/object_table.h"  // ClientId

namespace rplasma {

class PartialFrames {
 public:
  // REQUIRES: timeout > 0.
  explicit PartialFrames(absl::Duration timeout) : timeout_(timeout) {}

  // After reading from session `id`: it buffers `partial_bytes` of input not yet handled and has
  // completed `frames_completed` frames in total. 0 bytes stops tracking it.
  void Update(ClientId id, uint64_t partial_bytes, uint64_t frames_completed, absl::Time now);
  // The session is gone (or paused by the store, which is then not the client's stall).
  void Remove(ClientId id);

  // When the oldest tracked frame runs out of time; nullopt if none is tracked.
  std::optional<absl::Time> NextDeadline() const;
  // Sessions whose current frame started at least `timeout` before `now`, oldest first.
  std::vector<ClientId> Expired(absl::Time now) const;
  // The session buffering the most bytes (nullopt if none): the one to drop over the cap.
  std::optional<ClientId> Largest() const;

  uint64_t total_bytes() const { return total_bytes_; }
  size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    absl::Time started;
    uint64_t bytes = 0;
    uint64_t frames_completed = 0;
  };

  absl::Duration timeout_;
  absl::flat_hash_map<ClientId, Entry> entries_;
  absl::btree_set<std::pair<absl::Time, ClientId>> by_start_;
  uint64_t total_bytes_ = 0;
};

}  // namespace rplasma

#endif  // RPLASMA_STORE_PARTIAL_FRAMES_H_
