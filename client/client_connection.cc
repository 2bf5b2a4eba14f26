#include "client/client_connection.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

#include "client/fork_guard.h"
#include "protocol/base/logging.h"
#include "protocol/base/mutex_lock.h"
#include "protocol/base/socket_io.h"
#include "protocol/base/status.h"
#include "protocol/frame.h"

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

// Waits until `fd` is ready for `events` or `deadline` passes (kDeadlineExceeded).
absl::Status PollUntil(int fd, short events, absl::Time deadline, absl::string_view what) {
  for (;;) {
    int timeout_ms = -1;
    if (deadline != absl::InfiniteFuture()) {
      const absl::Duration left = deadline - absl::Now();
      if (left <= absl::ZeroDuration()) {
        return MakeError(ErrorCode::kDeadlineExceeded, absl::StrCat("store connection: ", what, ": deadline exceeded"));
      }
      timeout_ms = static_cast<int>(
          std::min<int64_t>(absl::ToInt64Milliseconds(absl::Ceil(left, absl::Milliseconds(1))), 1 << 30));
    }
    pollfd pfd{fd, events, 0};
    const int rc = ::poll(&pfd, 1, timeout_ms);
    if (rc > 0) return absl::OkStatus();
    if (rc < 0 && errno != EINTR) return ErrnoError("poll", "store socket", errno);
  }
}

}  // namespace

PendingReply::~PendingReply() {
  if (owner_ != nullptr) owner_->demux_.Abandon(this);
}

ClientConnection::ClientConnection(UniqueFd fd, absl::Duration io_timeout)
    : fd_(std::move(fd)),
      io_timeout_(io_timeout),
      demux_(ReplyDemultiplexer::Hooks{
          .on_break =
              [this](const absl::Status& cause) {
                broken_.store(true, std::memory_order_relaxed);
                // Wake up the store side too: a half-read stream is useless.
                ::shutdown(fd_.get(), SHUT_RDWR);
                return cause;
              },
          .expired =
              [](uint64_t request_id) {
                return MakeError(ErrorCode::kDeadlineExceeded,
                                 absl::StrCat("store connection: request ", request_id, ": deadline exceeded"));
              },
          // A Wait that gives up leaves the stream intact (the reader keeps partial bytes buffered):
          // its late reply is dropped like a detached one.
          .on_deadline = ReplyDemultiplexer::OnDeadline::kAbandonWaiter,
      }) {}

absl::StatusOr<ClientConnection::Handshake> ClientConnection::Connect(const std::string& socket_path,
                                                                      absl::string_view client_name,
                                                                      absl::Duration connect_timeout,
                                                                      absl::Duration io_timeout, bool shared_index) {
  const absl::Time deadline = absl::Now() + connect_timeout;
  ASSIGN_OR_RETURN(UniqueFd fd, UnixConnect(socket_path, deadline));
  std::unique_ptr<ClientConnection> connection(new ClientConnection(std::move(fd), io_timeout));
  connection->read_buffer_.resize(kInitialReadBuffer);
  // Nobody else knows the connection yet: the handshake runs single-threaded, without leadership.
  ASSIGN_OR_RETURN(uint64_t request_id, connection->NextRequestId());
  ASSIGN_OR_RETURN(std::string payload, Encode(request_id, ConnectRequest{std::string(client_name), shared_index}));
  RETURN_IF_ERROR(connection->WriteFrame(payload, deadline));

  const int raw_fd = connection->fd_.get();
  if (absl::Status ready = PollUntil(raw_fd, POLLIN, deadline, "connect"); !ready.ok()) {
    if (ErrorCodeOf(ready) != ErrorCode::kDeadlineExceeded) return ready;
    return MakeError(ErrorCode::kDeadlineExceeded,
                     absl::StrCat("connect(", socket_path, "): store did not answer within ",
                                  absl::FormatDuration(connect_timeout)));
  }
  // The arena fd (then the index's and the slots') rides on the first byte of the ConnectReply frame.
  constexpr size_t kConnectFds = 3;
  ASSIGN_OR_RETURN(ReceivedWithFds first,
                   RecvSomeWithFds(raw_fd, connection->read_buffer_.data(), connection->read_buffer_.size(),
                                   kConnectFds, SocketWait::kBlock));
  if (first.bytes == 0) return StoreGone(absl::StrCat("connect(", socket_path, "): closed by the store"));
  connection->read_end_ = first.bytes;
  ASSIGN_OR_RETURN(Reply reply, connection->ReadReply(deadline));
  if (reply.request_id != request_id) {
    return ProtocolError(absl::StrCat("connect(", socket_path, "): reply for request ", reply.request_id));
  }
  RETURN_IF_ERROR(reply.status());
  auto* connect_reply = std::get_if<ConnectReply>(&reply.body);
  if (connect_reply == nullptr) {
    return ProtocolError(absl::StrCat("connect(", socket_path, "): reply is not a ConnectReply"));
  }
  if (first.fds.empty()) {
    return ProtocolError(absl::StrCat("connect(", socket_path, "): reply carried no arena fd"));
  }
  Handshake handshake{std::move(connection), std::move(*connect_reply), std::move(first.fds[0]), {}, {}};
  if (handshake.reply.index_entries != 0) {
    if (first.fds.size() != kConnectFds) {
      return ProtocolError(absl::StrCat("connect(", socket_path, "): reply announced a shared index but carried ",
                                        first.fds.size(), " fds"));
    }
    handshake.index_fd = std::move(first.fds[1]);
    handshake.slots_fd = std::move(first.fds[2]);
  }
  return handshake;
}

ClientConnection::~ClientConnection() = default;  // the demultiplexer checks nobody still waits

absl::Status ClientConnection::health() const { return demux_.health(); }

absl::Time ClientConnection::IoDeadline() const {
  return io_timeout_ == absl::InfiniteDuration() ? absl::InfiniteFuture() : absl::Now() + io_timeout_;
}

absl::Status ClientConnection::Send(RequestBody body, PendingReply* pending) {
  return Send(std::move(body), pending, IoDeadline());
}

absl::Status ClientConnection::Send(RequestBody body, PendingReply* pending, absl::Time deadline) {
  ASSIGN_OR_RETURN(uint64_t request_id, NextRequestId());
  const bool is_get = std::holds_alternative<GetRequest>(body);
  ASSIGN_OR_RETURN(std::string payload, Encode(request_id, std::move(body)));
  // Registered before the frame leaves, so the reply always finds its waiter (and a Get's
  // references are released whoever reads a reply nobody waits for any more).
  if (is_get) {
    MutexLock lock(&gets_mu_);
    open_gets_.insert(request_id);
  }
  RETURN_IF_ERROR(demux_.Register(request_id, pending));
  pending->owner_ = this;
  pending->request_id_ = request_id;
  return WriteFrame(payload, deadline);
}

absl::StatusOr<Reply> ClientConnection::Wait(PendingReply* pending, absl::Time deadline) {
  absl::Status waited = demux_.Wait(pending, deadline, [this](absl::Time d) { return ReadAndDispatchOne(d); });
  if (waited.ok() || ErrorCodeOf(waited) != ErrorCode::kDeadlineExceeded) {
    // The reply was taken (or will never come): nothing is left to release behind the caller.
    MutexLock lock(&gets_mu_);
    open_gets_.erase(pending->request_id_);
  }
  RETURN_IF_ERROR(waited);
  return std::move(pending->reply_);
}

absl::StatusOr<Reply> ClientConnection::Call(RequestBody body, absl::Time deadline) {
  PendingReply pending;
  RETURN_IF_ERROR(Send(std::move(body), &pending, deadline));
  return Wait(&pending, deadline);
}

absl::Status ClientConnection::SendDetached(RequestBody body) {
  ASSIGN_OR_RETURN(size_t detached, demux_.DetachedOutstanding());
  // Too many unread replies: wait for this one, which also drains the detached ones before it.
  if (detached >= static_cast<size_t>(kMaxDetached)) return Call(std::move(body)).status();
  ASSIGN_OR_RETURN(uint64_t request_id, NextRequestId());
  ASSIGN_OR_RETURN(std::string payload, Encode(request_id, std::move(body)));
  RETURN_IF_ERROR(demux_.RegisterDetached(request_id));
  return WriteFrame(payload, IoDeadline());
}

absl::Status ClientConnection::SendNoReply(RequestBody body) {
  ASSIGN_OR_RETURN(uint64_t request_id, NextRequestId());
  ASSIGN_OR_RETURN(std::string payload, Encode(request_id, std::move(body)));
  return WriteFrame(payload, IoDeadline());
}

absl::StatusOr<uint64_t> ClientConnection::NextRequestId() {
  // Every request goes through here: in a forked child none may reach the parent's socket.
  if (fork_guard_.forked()) return ForkedError("store connection");
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

absl::Status ClientConnection::ReadAndDispatchOne(absl::Time deadline) {
  absl::StatusOr<Reply> reply = ReadReply(deadline);
  if (!reply.ok()) {
    // A deadline leaves the stream whole (partial bytes stay buffered): only the waiter gives up.
    if (ErrorCodeOf(reply.status()) == ErrorCode::kDeadlineExceeded) return reply.status();
    return BrokenBy(reply.status());
  }
  const uint64_t request_id = reply->request_id;
  bool unclaimed = false;
  absl::Status dispatched = demux_.Deliver(request_id, [&](ReplyWaiter* waiter) {
    if (waiter == nullptr) {  // detached or abandoned: nobody reads this reply
      if (!reply->status().ok()) {
        LOG(WARNING) << "store: detached request " << request_id << " failed: " << reply->status();
      }
      unclaimed = true;
      return absl::OkStatus();
    }
    // The reply's own error code is the caller's to check: delivered as is.
    static_cast<PendingReply*>(waiter)->reply_ = std::move(*reply);
    return absl::OkStatus();
  });
  if (!dispatched.ok()) LOG(WARNING) << "store sent a reply for unknown request " << request_id << "; dropped";
  if (unclaimed) DropUnclaimed(request_id, *reply);
  return absl::OkStatus();
}

void ClientConnection::DropUnclaimed(uint64_t request_id, const Reply& reply) {
  {
    MutexLock lock(&gets_mu_);
    if (open_gets_.erase(request_id) == 0) return;
  }
  const auto* objects = std::get_if<ObjectsReply>(&reply.body);
  if (objects == nullptr) return;
  std::vector<ObjectID> held;
  for (const ObjectInfo& info : objects->objects) {
    if (info.error == ErrorCode::kOk) held.push_back(info.id);
  }
  if (held.empty()) return;
  // The Get's caller gave up at its deadline: give the references back (the store answers nothing).
  absl::Status released = SendNoReply(ReleaseRequest{std::move(held), /*no_reply=*/true});
  if (!released.ok()) LOG(WARNING) << "store: releasing a late Get reply's references: " << released;
}

absl::Status ClientConnection::WriteFrame(const std::string& payload, absl::Time deadline) {
  absl::Status status = WriteFrameBytes(payload, deadline);
  if (!status.ok()) {
    // Part of the frame may be on the wire: the stream position is lost for every caller.
    demux_.Break(BrokenBy(status));
  }
  return status;
}

absl::Status ClientConnection::WriteFrameBytes(const std::string& payload, absl::Time deadline) {
  char header[kFrameHeaderBytes];
  EncodeFrameHeader(static_cast<uint32_t>(payload.size()), header);
  iovec iov[2] = {{header, sizeof(header)}, {const_cast<char*>(payload.data()), payload.size()}};
  int iov_index = 0;
  MutexLock lock(&write_mu_);
  while (iov_index < 2) {
    msghdr msg{};
    msg.msg_iov = &iov[iov_index];
    msg.msg_iovlen = static_cast<size_t>(2 - iov_index);
    // Non-blocking, so a store that stopped reading cannot hold the writer past its deadline.
    ssize_t n = ::sendmsg(fd_.get(), &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        RETURN_IF_ERROR(PollUntil(fd_.get(), POLLOUT, deadline, "send"));
        continue;
      }
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

absl::Status ClientConnection::Fill(size_t bytes, absl::Time deadline) {
  if (read_end_ - read_begin_ >= bytes) return absl::OkStatus();
  if (read_buffer_.size() - read_begin_ < bytes) {
    // Move the partial frame to the front, growing the buffer if the frame is bigger than it.
    std::memmove(read_buffer_.data(), read_buffer_.data() + read_begin_, read_end_ - read_begin_);
    read_end_ -= read_begin_;
    read_begin_ = 0;
    if (read_buffer_.size() < bytes) read_buffer_.resize(bytes);
  }
  while (read_end_ - read_begin_ < bytes) {
    // Try first, poll only when nothing is there: a reply that already arrived costs one syscall.
    // Never a blocking read, so the deadline holds whatever the store does.
    ssize_t n = ::recv(fd_.get(), read_buffer_.data() + read_end_, read_buffer_.size() - read_end_, MSG_DONTWAIT);
    if (n > 0) {
      read_end_ += static_cast<size_t>(n);
    } else if (n == 0) {
      return StoreGone("closed by the store");
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      RETURN_IF_ERROR(PollUntil(fd_.get(), POLLIN, deadline, "read"));
    } else if (errno != EINTR) {
      return StoreGone(ErrnoError("recv", "store socket", errno).message());
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Reply> ClientConnection::ReadReply(absl::Time deadline) {
  RETURN_IF_ERROR(Fill(kFrameHeaderBytes, deadline));
  ASSIGN_OR_RETURN(uint32_t length, ParseFrameHeader(read_buffer_.data() + read_begin_, kDefaultMaxFrameBytes));
  RETURN_IF_ERROR(Fill(kFrameHeaderBytes + length, deadline));
  absl::StatusOr<Reply> reply =
      DecodeReply(absl::string_view(read_buffer_.data() + read_begin_ + kFrameHeaderBytes, length));
  read_begin_ += kFrameHeaderBytes + length;
  if (read_begin_ == read_end_) read_begin_ = read_end_ = 0;
  return reply;
}

}  // namespace rplasma
