#include "store/client_session.h"

#include <algorithm>

#include "absl/types/span.h"

#include "protocol/base/socket_io.h"
#include "protocol/base/status.h"

namespace rplasma {

absl::Status ClientSession::ReadAvailable(size_t budget) {
  char chunk[64 * 1024];
  size_t total = 0;
  while (total < budget) {
    // Room for the most fds one message can carry, so none stays in flight; each is closed here.
    ASSIGN_OR_RETURN(ReceivedWithFds got,
                     RecvSomeWithFds(fd_.get(), chunk, sizeof(chunk), kMaxFdsPerMessage, SocketWait::kDontWait));
    if (got.would_block) return absl::OkStatus();
    fds_discarded_ += got.fds.size();
    got.fds.clear();
    if (got.bytes == 0) return MakeError(ErrorCode::kUnavailable, "recvmsg(client socket): connection closed");
    reader_.Append(absl::string_view(chunk, got.bytes));
    buffered_bytes_ += got.bytes;
    total += got.bytes;
    // A short read drained the socket: return without the recvmsg that would only say EAGAIN
    // (epoll is level-triggered, so bytes arriving later are reported again).
    if (got.bytes < sizeof(chunk)) return absl::OkStatus();
  }
  return absl::OkStatus();
}

absl::StatusOr<std::optional<std::string>> ClientSession::NextFrame() {
  absl::StatusOr<std::optional<std::string>> frame = reader_.Next();
  if (frame.ok() && frame->has_value()) {
    buffered_bytes_ -= kFrameHeaderBytes + (*frame)->size();
    ++frames_completed_;
  }
  return frame;
}

void ClientSession::Enqueue(std::string frame, std::vector<int> fds_to_attach) {
  PackEvents();
  queued_bytes_ += frame.size();
  out_.push_back(OutFrame{std::move(frame), std::move(fds_to_attach)});
}

void ClientSession::QueueEvent(const ObjectEvent& event) { events_.push_back(event); }

void ClientSession::PackEvents() {
  for (size_t begin = 0; begin < events_.size(); begin += kMaxEventsPerFrame) {
    const size_t end = std::min(events_.size(), begin + kMaxEventsPerFrame);
    Reply reply;
    if (end - begin == 1) {
      reply.body = events_[begin];
    } else {
      reply.body = ObjectEvents{std::vector<ObjectEvent>(events_.begin() + begin, events_.begin() + end)};
    }
    std::string frame = EncodeFrame(EncodeReply(reply));
    queued_bytes_ += frame.size();
    out_.push_back(OutFrame{std::move(frame), {}});
  }
  events_.clear();
}

absl::Status ClientSession::Flush() {
  PackEvents();
  while (!out_.empty()) {
    // The front frame (what is left of it) and the whole frames after it, up to one that carries
    // fds, go out in one gathered sendmsg: a burst of events or replies is one system call.
    // Attached fds ride on the frame's first byte only.
    const bool attach = !out_.front().fds.empty() && out_offset_ == 0;
    absl::string_view pieces[kMaxGatherPieces];
    size_t n_pieces = 0;
    for (const OutFrame& frame : out_) {
      if (n_pieces == kMaxGatherPieces || (n_pieces > 0 && !frame.fds.empty())) break;
      const size_t skip = n_pieces == 0 ? out_offset_ : 0;
      pieces[n_pieces++] = absl::string_view(frame.bytes.data() + skip, frame.bytes.size() - skip);
    }
    ASSIGN_OR_RETURN(size_t n,
                     SendSomeGathered(fd_.get(), absl::MakeConstSpan(pieces, n_pieces),
                                      attach ? absl::MakeConstSpan(out_.front().fds) : absl::Span<const int>(),
                                      SocketWait::kDontWait));
    if (n == 0) return absl::OkStatus();  // would block: epoll reports EPOLLOUT later
    queued_bytes_ -= n;
    while (n > 0) {
      const size_t left = out_.front().bytes.size() - out_offset_;
      if (n < left) {
        out_offset_ += n;
        break;
      }
      n -= left;
      out_.pop_front();
      out_offset_ = 0;
    }
  }
  return absl::OkStatus();
}

}  // namespace rplasma
