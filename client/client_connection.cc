#include "client/client_connection.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "protocol/frame.h"
#include "protocol/base/logging.h"
#include "protocol/base/mutex_lock.h"
#include "protocol/base/socket_io.h"
#include "protocol/base/status.h"

namespace rplasma {
namespace {

// Initial receive buffer: holds many small replies, so one read() usually serves several frames.
constexpr size_t kInitialReadBuffer = 64 * 1024;

absl::Status StoreGone(absl::string_view what) {
  return MakeError(ErrorCode::kUnavailable, absl::StrCat("store connection: ", what));
}

// What a read or write error breaks the connection with: bytes that are not a valid reply stay a
// kProtocolError; everything else means the store is gone.
absl::Status BrokenBy(const absl::Status& error) {
  return ErrorCodeOf(error) == ErrorCode::kProtocolError ? error : MakeError(ErrorCode::kUnavailable, error.message());
}

}  // namespace

PendingReply::~PendingReply() {
  if (owner_ != nullptr) owner_->demux_.Abandon(this);
}

ClientConnection::ClientConnection(UniqueFd fd)
    : fd_(std::move(fd)),
      demux_(ReplyDemultiplexer::Hooks{
          .on_break =
              [this](const absl::Status& cause) {
                // Wake up the store side too: a half-read stream is useless.
                ::shutdown(fd_.get(), SHUT_RDWR);
                return cause;
              },
          .expired =
              [](uint64_t request_id) {
                return MakeError(ErrorCode::kDeadlineExceeded,
                                 absl::StrCat("store connection: request ", request_id, ": deadline exceeded"));
              },
          // Wait has no deadline today; were it given one, the late reply is dropped like a detached one.
          .on_deadline = ReplyDemultiplexer::OnDeadline::kAbandonWaiter,
      }) {}

absl::StatusOr<ClientConnection::Handshake> ClientConnection::Connect(const std::string& socket_path,
                                                                       absl::string_view client_name,
                                                                       absl::Duration timeout) {
  ASSIGN_OR_RETURN(UniqueFd fd, UnixConnect(socket_path));
  std::unique_ptr<ClientConnection> connection(new ClientConnection(std::move(fd)));
  connection->read_buffer_.resize(kInitialReadBuffer);
  // Nobody else knows the connection yet: the handshake runs single-threaded, without leadership.
  ASSIGN_OR_RETURN(uint64_t request_id, connection->NextRequestId());
  ASSIGN_OR_RETURN(std::string payload, Encode(request_id, ConnectRequest{std::string(client_name)}));
  RETURN_IF_ERROR(connection->WriteFrame(payload));

  const int raw_fd = connection->fd_.get();
  pollfd pfd{raw_fd, POLLIN, 0};
  int rc;
  do {
    rc = ::poll(&pfd, 1, static_cast<int>(absl::ToInt64Milliseconds(timeout)));
  } while (rc < 0 && errno == EINTR);
  if (rc < 0) return ErrnoError("poll", socket_path, errno);
  if (rc == 0) {
    return MakeError(ErrorCode::kDeadlineExceeded,
                     absl::StrCat("connect(", socket_path, "): store did not answer within ",
                                  absl::FormatDuration(timeout)));
  }
  // The arena fd rides on the first byte of the ConnectReply frame.
  ASSIGN_OR_RETURN(ReceivedWithFd first,
                   RecvWithFd(raw_fd, connection->read_buffer_.data(), connection->read_buffer_.size()));
  if (first.bytes == 0) return StoreGone(absl::StrCat("connect(", socket_path, "): closed by the store"));
  connection->read_end_ = first.bytes;
  ASSIGN_OR_RETURN(Reply reply, connection->ReadReply());
  if (reply.request_id != request_id) {
    return ProtocolError(absl::StrCat("connect(", socket_path, "): reply for request ", reply.request_id));
  }
  RETURN_IF_ERROR(reply.status());
  auto* connect_reply = std::get_if<ConnectReply>(&reply.body);
  if (connect_reply == nullptr) {
    return ProtocolError(absl::StrCat("connect(", socket_path, "): reply is not a ConnectReply"));
  }
  if (!first.fd.valid()) {
    return ProtocolError(absl::StrCat("connect(", socket_path, "): reply carried no arena fd"));
  }
  return Handshake{std::move(connection), std::move(*connect_reply), std::move(first.fd)};
}

ClientConnection::~ClientConnection() = default;  // the demultiplexer checks nobody still waits

absl::Status ClientConnection::health() const { return demux_.health(); }

absl::Status ClientConnection::Send(RequestBody body, PendingReply* pending) {
  ASSIGN_OR_RETURN(uint64_t request_id, NextRequestId());
  ASSIGN_OR_RETURN(std::string payload, Encode(request_id, std::move(body)));
  // Registered before the frame leaves, so the reply always finds its waiter.
  RETURN_IF_ERROR(demux_.Register(request_id, pending));
  pending->owner_ = this;
  return WriteFrame(payload);
}

absl::StatusOr<Reply> ClientConnection::Wait(PendingReply* pending) {
  RETURN_IF_ERROR(demux_.Wait(pending, absl::InfiniteFuture(), [this](absl::Time) { return ReadAndDispatchOne(); }));
  return std::move(pending->reply_);
}

absl::StatusOr<Reply> ClientConnection::Call(RequestBody body) {
  PendingReply pending;
  RETURN_IF_ERROR(Send(std::move(body), &pending));
  return Wait(&pending);
}

absl::Status ClientConnection::SendDetached(RequestBody body) {
  ASSIGN_OR_RETURN(size_t detached, demux_.DetachedOutstanding());
  // Too many unread replies: wait for this one, which also drains the detached ones before it.
  if (detached >= static_cast<size_t>(kMaxDetached)) return Call(std::move(body)).status();
  ASSIGN_OR_RETURN(uint64_t request_id, NextRequestId());
  ASSIGN_OR_RETURN(std::string payload, Encode(request_id, std::move(body)));
  RETURN_IF_ERROR(demux_.RegisterDetached(request_id));
  return WriteFrame(payload);
}

absl::Status ClientConnection::SendNoReply(RequestBody body) {
  ASSIGN_OR_RETURN(uint64_t request_id, NextRequestId());
  ASSIGN_OR_RETURN(std::string payload, Encode(request_id, std::move(body)));
  return WriteFrame(payload);
}

absl::StatusOr<uint64_t> ClientConnection::NextRequestId() {
  RETURN_IF_ERROR(demux_.health());
  return next_request_id_.fetch_add(1, std::memory_order_relaxed);
}

absl::StatusOr<std::string> ClientConnection::Encode(uint64_t request_id, RequestBody body) {
  std::string payload = EncodeRequest(Request{request_id, std::move(body)});
  if (payload.size() > kDefaultMaxFrameBytes) {
    return MakeError(ErrorCode::kInvalidArgument, absl::StrCat("request of ", payload.size(), " bytes is too large"));
  }
  return payload;
}

absl::Status ClientConnection::ReadAndDispatchOne() {
  absl::StatusOr<Reply> reply = ReadReply();
  if (!reply.ok()) return BrokenBy(reply.status());
  const uint64_t request_id = reply->request_id;
  absl::Status dispatched = demux_.Deliver(request_id, [&](ReplyWaiter* waiter) {
    if (waiter == nullptr) {  // detached or abandoned: nobody reads this reply
      if (!reply->status().ok()) {
        LOG(WARNING) << "store: detached request " << request_id << " failed: " << reply->status();
      }
      return absl::OkStatus();
    }
    // The reply's own error code is the caller's to check: delivered as is.
    static_cast<PendingReply*>(waiter)->reply_ = std::move(*reply);
    return absl::OkStatus();
  });
  if (!dispatched.ok()) LOG(WARNING) << "store sent a reply for unknown request " << request_id << "; dropped";
  return absl::OkStatus();
}

absl::Status ClientConnection::WriteFrame(const std::string& payload) {
  absl::Status status = WriteFrameBytes(payload);
  if (!status.ok()) {
    // Part of the frame may be on the wire: the stream position is lost for every caller.
    demux_.Break(BrokenBy(status));
  }
  return status;
}

absl::Status ClientConnection::WriteFrameBytes(const std::string& payload) {
  char header[kFrameHeaderBytes];
  EncodeFrameHeader(static_cast<uint32_t>(payload.size()), header);
  iovec iov[2] = {{header, sizeof(header)}, {const_cast<char*>(payload.data()), payload.size()}};
  int iov_index = 0;
  MutexLock lock(&write_mu_);
  while (iov_index < 2) {
    msghdr msg{};
    msg.msg_iov = &iov[iov_index];
    msg.msg_iovlen = static_cast<size_t>(2 - iov_index);
    ssize_t n = ::sendmsg(fd_.get(), &msg, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return StoreGone(ErrnoError("send", "store socket", errno).message());
    }
    size_t sent = static_cast<size_t>(n);
    while (iov_index < 2 && sent >= iov[iov_index].iov_len) {
      sent -= iov[iov_index].iov_len;
      ++iov_index;
    }
    if (iov_index < 2) {
      iov[iov_index].iov_base = static_cast<char*>(iov[iov_index].iov_base) + sent;
      iov[iov_index].iov_len -= sent;
    }
  }
  return absl::OkStatus();
}

absl::Status ClientConnection::Fill(size_t bytes) {
  if (read_end_ - read_begin_ >= bytes) return absl::OkStatus();
  if (read_buffer_.size() - read_begin_ < bytes) {
    // Move the partial frame to the front, growing the buffer if the frame is bigger than it.
    std::memmove(read_buffer_.data(), read_buffer_.data() + read_begin_, read_end_ - read_begin_);
    read_end_ -= read_begin_;
    read_begin_ = 0;
    if (read_buffer_.size() < bytes) read_buffer_.resize(bytes);
  }
  while (read_end_ - read_begin_ < bytes) {
    ssize_t n = ::read(fd_.get(), read_buffer_.data() + read_end_, read_buffer_.size() - read_end_);
    if (n > 0) {
      read_end_ += static_cast<size_t>(n);
    } else if (n == 0) {
      return StoreGone("closed by the store");
    } else if (errno != EINTR) {
      return StoreGone(ErrnoError("read", "store socket", errno).message());
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Reply> ClientConnection::ReadReply() {
  RETURN_IF_ERROR(Fill(kFrameHeaderBytes));
  ASSIGN_OR_RETURN(uint32_t length, ParseFrameHeader(read_buffer_.data() + read_begin_, kDefaultMaxFrameBytes));
  RETURN_IF_ERROR(Fill(kFrameHeaderBytes + length));
  absl::StatusOr<Reply> reply =
      DecodeReply(absl::string_view(read_buffer_.data() + read_begin_ + kFrameHeaderBytes, length));
  read_begin_ += kFrameHeaderBytes + length;
  if (read_begin_ == read_end_) read_begin_ = read_end_ = 0;
  return reply;
}

}  // namespace rplasma
