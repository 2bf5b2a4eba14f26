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

}  // namespace

PendingReply::~PendingReply() {
  if (owner_ != nullptr) owner_->Unregister(this);
}

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

ClientConnection::~ClientConnection() {
  MutexLock lock(&mu_);
  CHECK(pending_.size() == static_cast<size_t>(detached_outstanding_))
      << "ClientConnection destroyed while callers still wait for replies";
}

absl::Status ClientConnection::health() const {
  MutexLock lock(&mu_);
  return broken_;
}

absl::Status ClientConnection::Send(RequestBody body, PendingReply* pending) {
  ASSIGN_OR_RETURN(uint64_t request_id, NextRequestId());
  ASSIGN_OR_RETURN(std::string payload, Encode(request_id, std::move(body)));
  {
    MutexLock lock(&mu_);
    if (!broken_.ok()) return broken_;
    // Registered before the frame leaves, so the reply always finds its waiter.
    pending->owner_ = this;
    pending->request_id_ = request_id;
    pending->registered_ = true;
    pending->done_ = false;
    pending_.emplace(request_id, pending);
  }
  return WriteFrame(payload);
}

absl::StatusOr<Reply> ClientConnection::Wait(PendingReply* pending) {
  MutexLock lock(&mu_);
  while (!pending->done_) {
    if (!leader_active_) {
      // Lead: read frames (without mu_) until our own reply has been dispatched.
      leader_active_ = true;
      lock.Unlock();
      absl::StatusOr<Reply> reply = ReadReply();
      lock.Lock();
      leader_active_ = false;
      if (reply.ok()) {
        Dispatch(std::move(reply));
      } else {
        Break(reply.status());
      }
      continue;
    }
    lock.Wait(&pending->cv_);
  }
  PromoteLeader();
  return std::move(pending->result_);
}

absl::StatusOr<Reply> ClientConnection::Call(RequestBody body) {
  PendingReply pending;
  RETURN_IF_ERROR(Send(std::move(body), &pending));
  return Wait(&pending);
}

absl::Status ClientConnection::SendDetached(RequestBody body) {
  bool too_many;
  {
    MutexLock lock(&mu_);
    if (!broken_.ok()) return broken_;
    too_many = detached_outstanding_ >= kMaxDetached;
  }
  // Too many unread replies: wait for this one, which also drains the detached ones before it.
  if (too_many) return Call(std::move(body)).status();
  ASSIGN_OR_RETURN(uint64_t request_id, NextRequestId());
  ASSIGN_OR_RETURN(std::string payload, Encode(request_id, std::move(body)));
  {
    MutexLock lock(&mu_);
    if (!broken_.ok()) return broken_;
    pending_.emplace(request_id, nullptr);
    ++detached_outstanding_;
  }
  return WriteFrame(payload);
}

absl::Status ClientConnection::SendNoReply(RequestBody body) {
  ASSIGN_OR_RETURN(uint64_t request_id, NextRequestId());
  ASSIGN_OR_RETURN(std::string payload, Encode(request_id, std::move(body)));
  return WriteFrame(payload);
}

absl::StatusOr<uint64_t> ClientConnection::NextRequestId() {
  MutexLock lock(&mu_);
  if (!broken_.ok()) return broken_;
  return next_request_id_++;
}

absl::StatusOr<std::string> ClientConnection::Encode(uint64_t request_id, RequestBody body) {
  std::string payload = EncodeRequest(Request{request_id, std::move(body)});
  if (payload.size() > kDefaultMaxFrameBytes) {
    return MakeError(ErrorCode::kInvalidArgument, absl::StrCat("request of ", payload.size(), " bytes is too large"));
  }
  return payload;
}

void ClientConnection::Unregister(PendingReply* pending) {
  MutexLock lock(&mu_);
  if (!pending->registered_) return;
  auto it = pending_.find(pending->request_id_);
  if (it != pending_.end() && it->second == pending) {
    // Abandoned: its reply, if it comes, is dropped. Keep the slot as detached so the
    // reply is accounted for.
    it->second = nullptr;
    ++detached_outstanding_;
  }
  pending->registered_ = false;
  PromoteLeader();
}

void ClientConnection::Dispatch(absl::StatusOr<Reply> reply) {
  auto it = pending_.find(reply->request_id);
  if (it == pending_.end()) {
    LOG(WARNING) << "store sent a reply for unknown request " << reply->request_id << "; dropped";
    return;
  }
  PendingReply* pending = it->second;
  pending_.erase(it);
  if (pending == nullptr) {
    --detached_outstanding_;
    if (!reply->status().ok()) {
      LOG(WARNING) << "store: detached request " << reply->request_id << " failed: " << reply->status();
    }
    return;
  }
  pending->result_ = std::move(reply);
  pending->done_ = true;
  pending->registered_ = false;
  pending->cv_.Signal();
}

void ClientConnection::Break(const absl::Status& status) {
  if (broken_.ok()) {
    broken_ = ErrorCodeOf(status) == ErrorCode::kProtocolError
                  ? status
                  : MakeError(ErrorCode::kUnavailable, status.message());
    // Wake up the store side too: a half-read stream is useless.
    ::shutdown(fd_.get(), SHUT_RDWR);
  }
  for (auto& [request_id, pending] : pending_) {
    if (pending == nullptr) continue;
    pending->result_ = broken_;
    pending->done_ = true;
    pending->registered_ = false;
    pending->cv_.Signal();
  }
  pending_.clear();
  detached_outstanding_ = 0;
}

void ClientConnection::PromoteLeader() {
  if (leader_active_ || !broken_.ok()) return;
  for (auto& [request_id, pending] : pending_) {
    if (pending != nullptr && !pending->done_) {
      pending->cv_.Signal();
      return;
    }
  }
}

absl::Status ClientConnection::WriteFrame(const std::string& payload) {
  absl::Status status = WriteFrameBytes(payload);
  if (!status.ok()) {
    // Part of the frame may be on the wire: the stream position is lost for every caller.
    MutexLock lock(&mu_);
    Break(status);
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
