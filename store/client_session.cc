#include "store/client_session.h"

#include "absl/types/span.h"
#include "protocol/base/socket_io.h"
#include "protocol/base/status.h"

namespace rplasma {

absl::Status ClientSession::ReadAvailable(size_t budget) {
  char chunk[64 * 1024];
  size_t total = 0;
  while (total < budget) {
    // Room for the most fds one message can carry, so none stays in flight; each is closed here.
    ASSIGN_OR_RETURN(ReceivedWithFds got, RecvSomeWithFds(fd_.get(), chunk, sizeof(chunk), kMaxFdsPerMessage,
                                                          SocketWait::kDontWait));
    if (got.would_block) return absl::OkStatus();
    fds_discarded_ += got.fds.size();
    got.fds.clear();
    if (got.bytes == 0) return MakeError(ErrorCode::kUnavailable, "recvmsg(client socket): connection closed");
    reader_.Append(absl::string_view(chunk, got.bytes));
    total += got.bytes;
    // A short read drained the socket: return without the recvmsg that would only say EAGAIN
    // (epoll is level-triggered, so bytes arriving later are reported again).
    if (got.bytes < sizeof(chunk)) return absl::OkStatus();
  }
  return absl::OkStatus();
}

void ClientSession::Enqueue(std::string frame, int fd_to_attach) {
  queued_bytes_ += frame.size();
  out_.push_back(OutFrame{std::move(frame), fd_to_attach});
}

absl::Status ClientSession::Flush() {
  while (!out_.empty()) {
    OutFrame& front = out_.front();
    const absl::string_view rest(front.bytes.data() + out_offset_, front.bytes.size() - out_offset_);
    // The attached fd rides on the frame's first byte only.
    const bool attach = front.fd >= 0 && out_offset_ == 0;
    ASSIGN_OR_RETURN(size_t n, SendSomeWithFds(fd_.get(), rest, attach ? absl::MakeConstSpan(&front.fd, 1)
                                                                         : absl::Span<const int>(),
                                               SocketWait::kDontWait));
    if (n == 0) return absl::OkStatus();  // would block: epoll reports EPOLLOUT later
    out_offset_ += n;
    queued_bytes_ -= n;
    if (out_offset_ == front.bytes.size()) {
      out_.pop_front();
      out_offset_ = 0;
    }
  }
  return absl::OkStatus();
}

}  // namespace rplasma
