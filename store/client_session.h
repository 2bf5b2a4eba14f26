// ClientSession: one accepted connection to the store — its socket, the frames it has sent so far
// and the bytes still to be written to it.
//
// Input: ReadAvailable receives with RecvSomeWithFds (protocol/base/socket_io.h), room for the most
// fds a message can carry, and closes every fd a client attaches (the store never accepts fds), then hands the bytes to
// a FrameReader whose length cap is checked before allocation. Output: a queue of encoded frames written
// non-blockingly; the first byte of a frame may carry fds (the arena's and the shared index's, attached to
// ConnectReply), sent with SendSomeWithFds. A subscriber's events are gathered (QueueEvent) and
// packed into ObjectEvents frames of up to kMaxEventsPerFrame when the session is flushed or
// another frame is queued after them, so a batch of seals costs the subscriber one frame.
//
// Thread-safety: none (owned by the store's event-loop thread).
#ifndef RPLASMA_STORE_CLIENT_SESSION_H_
#define RPLASMA_STORE_CLIENT_SESSION_H_

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include "protocol/base/object_id.h"
#include "protocol/base/unique_fd.h"
#include "protocol/frame.h"
#include "protocol/store_messages.h"
#include "store/object_table.h"

namespace rplasma {

class ClientSession {
 public:
  ClientSession(ClientId id, UniqueFd fd, pid_t pid, uint32_t max_frame_bytes)
      : id_(id), fd_(std::move(fd)), pid_(pid), reader_(max_frame_bytes) {}

  ClientId id() const { return id_; }
  int fd() const { return fd_.get(); }
  pid_t pid() const { return pid_; }

  // Reads what the socket has now, at most about `budget` bytes (fairness between clients).
  // kUnavailable on EOF or a socket error (bytes read before it are still buffered).
  absl::Status ReadAvailable(size_t budget);
  // The next complete frame payload; see FrameReader::Next.
  absl::StatusOr<std::optional<std::string>> NextFrame();
  // Bytes read but not yet returned by NextFrame (a partial frame, or frames not yet handled).
  uint64_t buffered_bytes() const { return buffered_bytes_; }
  // Frames NextFrame has returned so far.
  uint64_t frames_completed() const { return frames_completed_; }

  // Queues one encoded frame (after the events queued before it); `fds_to_attach` (not owned;
  // open until sent) ride on its first byte.
  void Enqueue(std::string frame, std::vector<int> fds_to_attach = {});
  // Queues one event for a subscriber; it goes out with the others of this turn (see above).
  void QueueEvent(const ObjectEvent& event);
  // Writes queued bytes until the socket would block or the queue is empty. kUnavailable if the
  // peer is gone.
  absl::Status Flush();
  // Bytes queued, events not yet packed counted at their approximate wire size.
  uint64_t queued_bytes() const { return queued_bytes_ + events_.size() * kEventWireBytes; }

  // fds that arrived with SCM_RIGHTS and were closed.
  uint64_t fds_discarded() const { return fds_discarded_; }

  // Per-connection protocol state, driven by StoreServer.
  std::string name;        // from ConnectRequest
  bool connected = false;  // ConnectRequest handled
  bool subscribed = false;
  bool backfilling = false;                 // subscribed with include_existing; existing objects not all sent
  std::optional<ObjectID> backfill_cursor;  // last id sent by the backfill
  bool input_paused = false;                // too much output queued: requests are not read
  bool doomed = false;                      // closing at the end of this loop iteration
  uint32_t epoll_events = 0;                // interest currently registered

 private:
  struct OutFrame {
    std::string bytes;
    std::vector<int> fds;
  };
  static constexpr uint64_t kEventWireBytes = 80;

  // Encodes the gathered events into frames at the end of the queue.
  void PackEvents();

  ClientId id_;
  UniqueFd fd_;
  pid_t pid_;
  FrameReader reader_;
  std::deque<OutFrame> out_;
  std::vector<ObjectEvent> events_;  // queued, not yet packed into a frame
  size_t out_offset_ = 0;            // bytes of out_.front() already written
  uint64_t queued_bytes_ = 0;
  uint64_t fds_discarded_ = 0;
  uint64_t buffered_bytes_ = 0;
  uint64_t frames_completed_ = 0;
};

}  // namespace rplasma

#endif  // RPLASMA_STORE_CLIENT_SESSION_H_
