#include "protocol/base/socket_io.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"

#include "protocol/base/logging.h"
#include "protocol/base/status.h"

namespace rplasma {
namespace {

absl::StatusOr<sockaddr_un> UnixAddress(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof(addr.sun_path)) {
    return MakeError(ErrorCode::kInvalidArgument,
                     absl::StrCat("socket path must be 1..", sizeof(addr.sun_path) - 1, " bytes: ", path));
  }
  std::memcpy(addr.sun_path, path.data(), path.size());
  return addr;
}

// Polls `fd` until it is readable (or hung up: the read after it tells), by `deadline`.
absl::Status WaitReadable(int fd, absl::Time deadline) {
  while (true) {
    absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) return MakeError(ErrorCode::kDeadlineExceeded, "read: deadline exceeded");
    pollfd pfd{fd, POLLIN, 0};
    int timeout_ms = static_cast<int>(std::min<int64_t>(absl::ToInt64Milliseconds(left) + 1, 1 << 30));
    int rc = ::poll(&pfd, 1, timeout_ms);
    if (rc < 0 && errno != EINTR) return ErrnoError("poll", "socket", errno);
    if (rc > 0) return absl::OkStatus();
  }
}

}  // namespace

absl::StatusOr<UniqueFd> UnixListen(const std::string& path, int backlog) {
  ASSIGN_OR_RETURN(sockaddr_un addr, UnixAddress(path));
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd) return ErrnoError("socket", path, errno);
  struct stat st;
  if (::lstat(path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) {
      return MakeError(ErrorCode::kInvalidArgument, absl::StrCat("bind(", path, "): exists and is not a socket"));
    }
    ::unlink(path.c_str());
  }
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    return ErrnoError("bind", path, errno);
  }
  if (::listen(fd.get(), backlog) != 0) return ErrnoError("listen", path, errno);
  return fd;
}

absl::StatusOr<UniqueFd> UnixConnect(const std::string& path) {
  ASSIGN_OR_RETURN(sockaddr_un addr, UnixAddress(path));
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd) return ErrnoError("socket", path, errno);
  int rc;
  do {
    rc = ::connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  } while (rc != 0 && errno == EINTR);
  if (rc != 0) {
    int err = errno;
    absl::Status s = ErrnoError("connect", path, err);
    return err == ENOENT || err == ECONNREFUSED ? MakeError(ErrorCode::kUnavailable, s.message()) : s;
  }
  return fd;
}

absl::StatusOr<UniqueFd> UnixConnect(const std::string& path, absl::Time deadline) {
  ASSIGN_OR_RETURN(sockaddr_un addr, UnixAddress(path));
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd) return ErrnoError("socket", path, errno);
  auto set_send_timeout = [&](absl::Duration timeout) -> absl::Status {
    const timeval tv = absl::ToTimeval(timeout);
    if (::setsockopt(fd.get(), SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) != 0) {
      return ErrnoError("setsockopt(SO_SNDTIMEO)", path, errno);
    }
    return absl::OkStatus();
  };
  for (;;) {
    const absl::Duration left = deadline - absl::Now();
    // A zero SO_SNDTIMEO means no timeout: a passed deadline still gets one short try.
    RETURN_IF_ERROR(set_send_timeout(deadline == absl::InfiniteFuture() ? absl::ZeroDuration()
                                                                        : std::max(left, absl::Microseconds(1))));
    if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) break;
    const int err = errno;
    if (err == EINTR && absl::Now() < deadline) continue;
    absl::Status s = ErrnoError("connect", path, err);
    if (err == EAGAIN || err == EINTR) {
      return MakeError(ErrorCode::kDeadlineExceeded,
                       absl::StrCat(s.message(), " (the listener's backlog stayed full until the deadline)"));
    }
    return err == ENOENT || err == ECONNREFUSED ? MakeError(ErrorCode::kUnavailable, s.message()) : s;
  }
  RETURN_IF_ERROR(set_send_timeout(absl::ZeroDuration()));
  return fd;
}

absl::Status PrepareSocketDirectory(const std::string& socket_path, absl::string_view what) {
  size_t slash = socket_path.rfind('/');
  std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : socket_path.substr(0, slash));
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) {
    if (errno != ENOENT) return ErrnoError("stat", dir, errno);
    if (::mkdir(dir.c_str(), 0700) != 0) return ErrnoError("mkdir", dir, errno);
    LOG(INFO) << "created " << what << " directory " << dir << " (mode 0700)";
    return absl::OkStatus();
  }
  if (!S_ISDIR(st.st_mode)) return MakeError(ErrorCode::kInvalidArgument, absl::StrCat(dir, ": not a directory"));
  if ((st.st_mode & 077) != 0) {
    LOG(WARNING) << what << " directory " << dir << " is accessible to other users (mode "
                 << absl::StrFormat("%04o", st.st_mode & 07777)
                 << "); connections from other uids are refused, but a private 0700 directory is safer";
  }
  return absl::OkStatus();
}

absl::Status SetNonBlocking(int fd, bool non_blocking) {
  int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0) return ErrnoError("fcntl", "F_GETFL", errno);
  flags = non_blocking ? (flags | O_NONBLOCK) : (flags & ~O_NONBLOCK);
  if (::fcntl(fd, F_SETFL, flags) != 0) return ErrnoError("fcntl", "F_SETFL", errno);
  return absl::OkStatus();
}

absl::StatusOr<PeerCredentials> GetPeerCredentials(int fd) {
  struct ucred cred {};
  socklen_t len = sizeof(cred);
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
    return ErrnoError("getsockopt", "SO_PEERCRED", errno);
  }
  return PeerCredentials{cred.pid, cred.uid, cred.gid};
}

absl::Status WriteAll(int fd, const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = ::send(fd, p, size, MSG_NOSIGNAL);
    if (n < 0 && errno == ENOTSOCK) n = ::write(fd, p, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return MakeError(ErrorCode::kUnavailable, ErrnoError("write", "socket", errno).message());
    }
    p += n;
    size -= static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

absl::Status ReadAll(int fd, void* data, size_t size) { return ReadAllUntil(fd, data, size, absl::InfiniteFuture()); }

absl::Status ReadAllUntil(int fd, void* data, size_t size, absl::Time deadline) {
  char* p = static_cast<char*>(data);
  const bool bounded = deadline != absl::InfiniteFuture();
  while (size > 0) {
    ssize_t n;
    if (!bounded) {
      n = ::read(fd, p, size);
    } else {
      // The bytes are usually there already (a frame's header and body arrive together): read
      // first, without blocking, and poll only when nothing has come yet.
      n = ::recv(fd, p, size, MSG_DONTWAIT);
      if (n < 0 && errno == ENOTSOCK) {  // a pipe or a file: wait, then a plain read
        RETURN_IF_ERROR(WaitReadable(fd, deadline));
        n = ::read(fd, p, size);
      } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        RETURN_IF_ERROR(WaitReadable(fd, deadline));
        continue;
      }
    }
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN && bounded) continue;
      return MakeError(ErrorCode::kUnavailable, ErrnoError("read", "socket", errno).message());
    }
    if (n == 0) return MakeError(ErrorCode::kUnavailable, "read(socket): connection closed");
    p += n;
    size -= static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

absl::StatusOr<size_t> SendSomeWithFds(int fd, absl::string_view data, absl::Span<const int> fds_to_pass,
                                       SocketWait wait) {
  return SendSomeGathered(fd, absl::MakeConstSpan(&data, 1), fds_to_pass, wait);
}

absl::StatusOr<size_t> SendSomeGathered(int fd, absl::Span<const absl::string_view> pieces,
                                        absl::Span<const int> fds_to_pass, SocketWait wait) {
  if (pieces.empty() || pieces[0].empty()) {
    return MakeError(ErrorCode::kInvalidArgument, "sendmsg: the first piece needs at least one byte");
  }
  if (pieces.size() > kMaxGatherPieces) {
    return MakeError(ErrorCode::kInvalidArgument,
                     absl::StrCat("sendmsg: ", pieces.size(), " pieces exceed ", kMaxGatherPieces, " per message"));
  }
  if (fds_to_pass.size() > kMaxFdsPerMessage) {
    return MakeError(ErrorCode::kInvalidArgument,
                     absl::StrCat("sendmsg: ", fds_to_pass.size(), " fds exceed ", kMaxFdsPerMessage, " per message"));
  }
  iovec iov[kMaxGatherPieces];
  for (size_t i = 0; i < pieces.size(); ++i) iov[i] = iovec{const_cast<char*>(pieces[i].data()), pieces[i].size()};
  alignas(cmsghdr) char control[CMSG_SPACE(kMaxFdsPerMessage * sizeof(int))] = {};
  msghdr msg{};
  msg.msg_iov = iov;
  msg.msg_iovlen = pieces.size();
  if (!fds_to_pass.empty()) {
    const size_t fd_bytes = fds_to_pass.size() * sizeof(int);
    msg.msg_control = control;
    msg.msg_controllen = CMSG_SPACE(fd_bytes);
    cmsghdr* cmsg = CMSG_FIRSTHDR(&msg);
    cmsg->cmsg_level = SOL_SOCKET;
    cmsg->cmsg_type = SCM_RIGHTS;
    cmsg->cmsg_len = CMSG_LEN(fd_bytes);
    std::memcpy(CMSG_DATA(cmsg), fds_to_pass.data(), fd_bytes);
  }
  const int flags = MSG_NOSIGNAL | (wait == SocketWait::kDontWait ? MSG_DONTWAIT : 0);
  for (;;) {
    ssize_t n = ::sendmsg(fd, &msg, flags);
    if (n >= 0) return static_cast<size_t>(n);
    if (errno == EINTR) continue;
    if (wait == SocketWait::kDontWait && (errno == EAGAIN || errno == EWOULDBLOCK)) return 0;
    return MakeError(ErrorCode::kUnavailable, ErrnoError("sendmsg", "socket", errno).message());
  }
}

absl::StatusOr<ReceivedWithFds> RecvSomeWithFds(int fd, void* data, size_t size, size_t max_fds, SocketWait wait) {
  if (max_fds == 0 || max_fds > kMaxFdsPerMessage) {
    return MakeError(ErrorCode::kInvalidArgument, absl::StrCat("recvmsg: room for ", max_fds, " fds"));
  }
  iovec iov{data, size};
  alignas(cmsghdr) char control[CMSG_SPACE(kMaxFdsPerMessage * sizeof(int))];
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = CMSG_SPACE(max_fds * sizeof(int));
  const int flags = MSG_CMSG_CLOEXEC | (wait == SocketWait::kDontWait ? MSG_DONTWAIT : 0);
  ReceivedWithFds out;
  ssize_t n;
  for (;;) {
    n = ::recvmsg(fd, &msg, flags);
    if (n >= 0) break;
    if (errno == EINTR) continue;
    if (wait == SocketWait::kDontWait && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      out.would_block = true;
      return out;
    }
    return MakeError(ErrorCode::kUnavailable, ErrnoError("recvmsg", "socket", errno).message());
  }
  out.bytes = static_cast<size_t>(n);
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    const size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < count; ++i) {
      int received;
      std::memcpy(&received, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
      out.fds.emplace_back(received);
    }
  }
  out.fds_truncated = (msg.msg_flags & MSG_CTRUNC) != 0;
  return out;
}

absl::Status SendWithFd(int fd, absl::string_view data, int fd_to_pass) {
  const int fds[1] = {fd_to_pass};
  ASSIGN_OR_RETURN(size_t sent, SendSomeWithFds(fd, data, fds, SocketWait::kBlock));
  // The fd went with the first byte; the rest is ordinary data.
  return WriteAll(fd, data.data() + sent, data.size() - sent);
}

absl::StatusOr<ReceivedWithFd> RecvWithFd(int fd, void* data, size_t size) {
  // Room for a few fds so that a peer sending several is detected (and all are closed).
  constexpr size_t kRoom = 4;
  ASSIGN_OR_RETURN(ReceivedWithFds got, RecvSomeWithFds(fd, data, size, kRoom, SocketWait::kBlock));
  if (got.fds_truncated) return ProtocolError("recvmsg: control message truncated (fds dropped)");
  if (got.fds.size() > 1) return ProtocolError(absl::StrCat("recvmsg: expected at most one fd, got ", got.fds.size()));
  ReceivedWithFd out{got.bytes, UniqueFd()};
  if (!got.fds.empty()) out.fd = std::move(got.fds.front());
  return out;
}

}  // namespace rplasma
