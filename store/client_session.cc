#include "store/client_session.h"

#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "protocol/base/status.h"

namespace rplasma {

absl::Status ClientSession::ReadAvailable(size_t budget) {
  char chunk[64 * 1024];
  size_t total = 0;
  while (total < budget) {
    iovec iov{chunk, sizeof(chunk)};
    // Room for the most fds one message can carry (SCM_MAX_FD = 253), so none stays in flight.
    alignas(cmsghdr) char control[CMSG_SPACE(253 * sizeof(int))];
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof(control);
    ssize_t n = ::recvmsg(fd_.get(), &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return absl::OkStatus();
      return MakeError(ErrorCode::kUnavailable, ErrnoError("recvmsg", "client socket", errno).message());
    }
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
      if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
      size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      for (size_t i = 0; i < count; ++i) {
        int received;
        std::memcpy(&received, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
        ::close(received);
        ++fds_discarded_;
      }
    }
    if (n == 0) return MakeError(ErrorCode::kUnavailable, "recvmsg(client socket): connection closed");
    reader_.Append(absl::string_view(chunk, static_cast<size_t>(n)));
    total += static_cast<size_t>(n);
    // A short read drained the socket: return without the recvmsg that would only say EAGAIN
    // (epoll is level-triggered, so bytes arriving later are reported again).
    if (static_cast<size_t>(n) < sizeof(chunk)) return absl::OkStatus();
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
    const char* data = front.bytes.data() + out_offset_;
    size_t size = front.bytes.size() - out_offset_;
    ssize_t n;
    if (front.fd >= 0 && out_offset_ == 0) {
      iovec iov{const_cast<char*>(data), size};
      alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
      msghdr msg{};
      msg.msg_iov = &iov;
      msg.msg_iovlen = 1;
      msg.msg_control = control;
      msg.msg_controllen = sizeof(control);
      cmsghdr* cmsg = CMSG_FIRSTHDR(&msg);
      cmsg->cmsg_level = SOL_SOCKET;
      cmsg->cmsg_type = SCM_RIGHTS;
      cmsg->cmsg_len = CMSG_LEN(sizeof(int));
      std::memcpy(CMSG_DATA(cmsg), &front.fd, sizeof(int));
      n = ::sendmsg(fd_.get(), &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
    } else {
      n = ::send(fd_.get(), data, size, MSG_NOSIGNAL | MSG_DONTWAIT);
    }
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return absl::OkStatus();
      return MakeError(ErrorCode::kUnavailable, ErrnoError("send", "client socket", errno).message());
    }
    out_offset_ += static_cast<size_t>(n);
    queued_bytes_ -= static_cast<uint64_t>(n);
    if (out_offset_ == front.bytes.size()) {
      out_.pop_front();
      out_offset_ = 0;
    }
  }
  return absl::OkStatus();
}

}  // namespace rplasma
