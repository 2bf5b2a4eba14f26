#include "manager/transport/tcp/tcp_socket.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstring>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

#include "protocol/base/logging.h"
#include "protocol/base/status.h"

namespace rplasma::transport::tcp {
namespace {

absl::Status Unavailable(absl::string_view op, absl::string_view object, int err) {
  return MakeError(ErrorCode::kUnavailable, ErrnoError(op, object, err).message());
}

// Waits until `fd` is ready for `events`, `deadline` passes, or `max_stall` passes.
absl::Status WaitReady(int fd, short events, absl::Time deadline, absl::Duration max_stall, absl::string_view op) {
  absl::Time limit =
      std::min(deadline, max_stall == absl::InfiniteDuration() ? absl::InfiniteFuture() : absl::Now() + max_stall);
  while (true) {
    int timeout_ms = -1;
    if (limit != absl::InfiniteFuture()) {
      absl::Duration left = limit - absl::Now();
      if (left <= absl::ZeroDuration()) {
        return MakeError(ErrorCode::kDeadlineExceeded,
                         absl::StrCat(op, "(socket): ", limit == deadline ? "deadline exceeded" : "peer stalled"));
      }
      timeout_ms = static_cast<int>(std::min<int64_t>(absl::ToInt64Milliseconds(left) + 1, 1 << 30));
    }
    pollfd pfd{fd, events, 0};
    int rc = ::poll(&pfd, 1, timeout_ms);
    if (rc < 0 && errno == EINTR) continue;
    if (rc < 0) return Unavailable("poll", op, errno);
    if (rc > 0) return absl::OkStatus();  // ready, or an error/hangup the next syscall reports
  }
}

absl::StatusOr<addrinfo*> Resolve(const HostPort& hp, bool passive) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV | (passive ? AI_PASSIVE : 0);
  addrinfo* result = nullptr;
  std::string port = absl::StrCat(hp.port);
  int rc = ::getaddrinfo(hp.host.c_str(), port.c_str(), &hints, &result);
  if (rc != 0) {
    return MakeError(ErrorCode::kUnavailable,
                     absl::StrCat("getaddrinfo(", FormatHostPort(hp.host, hp.port), "): ", gai_strerror(rc)));
  }
  return result;
}

absl::StatusOr<std::string> SockaddrToString(const sockaddr_storage& ss) {
  char host[INET6_ADDRSTRLEN] = {};
  uint16_t port = 0;
  if (ss.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&ss);
    ::inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
    port = ntohs(in->sin_port);
  } else if (ss.ss_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&ss);
    ::inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
    port = ntohs(in6->sin6_port);
  } else {
    return MakeError(ErrorCode::kInvalidArgument, "not an IP socket");
  }
  return FormatHostPort(host, port);
}

absl::Status SetInt(int fd, int level, int name, int value, absl::string_view what) {
  if (::setsockopt(fd, level, name, &value, sizeof(value)) != 0) return ErrnoError("setsockopt", what, errno);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<HostPort> ParseHostPort(absl::string_view address) {
  auto invalid = [&](absl::string_view why) {
    return MakeError(ErrorCode::kInvalidArgument, absl::StrCat("address \"", address, "\": ", why));
  };
  size_t colon = address.rfind(':');
  if (colon == absl::string_view::npos) return invalid("expected host:port");
  absl::string_view host = address.substr(0, colon);
  absl::string_view port_text = address.substr(colon + 1);
  if (!host.empty() && host.front() == '[') {
    if (host.size() < 3 || host.back() != ']') return invalid("unbalanced [ ] around an IPv6 address");
    host = host.substr(1, host.size() - 2);
  } else if (host.find(':') != absl::string_view::npos) {
    return invalid("an IPv6 address needs [brackets]");
  }
  if (host.empty()) return invalid("empty host");
  uint32_t port = 0;
  if (port_text.empty() || port_text.size() > 5 ||
      !std::all_of(port_text.begin(), port_text.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
      !absl::SimpleAtoi(port_text, &port) || port > 65535) {
    return invalid("port must be 0..65535");
  }
  return HostPort{std::string(host), static_cast<uint16_t>(port)};
}

std::string FormatHostPort(absl::string_view host, uint16_t port) {
  if (host.find(':') != absl::string_view::npos) return absl::StrFormat("[%s]:%d", host, port);
  return absl::StrFormat("%s:%d", host, port);
}

absl::StatusOr<UniqueFd> TcpListen(const std::string& address, int backlog) {
  ASSIGN_OR_RETURN(HostPort hp, ParseHostPort(address));
  ASSIGN_OR_RETURN(addrinfo * list, Resolve(hp, /*passive=*/true));
  absl::Status last = MakeError(ErrorCode::kUnavailable, absl::StrCat("listen(", address, "): no address"));
  for (addrinfo* ai = list; ai != nullptr; ai = ai->ai_next) {
    UniqueFd fd(::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol));
    if (!fd) {
      last = ErrnoError("socket", address, errno);
      continue;
    }
    (void)SetInt(fd.get(), SOL_SOCKET, SO_REUSEADDR, 1, "SO_REUSEADDR");
    if (::bind(fd.get(), ai->ai_addr, ai->ai_addrlen) != 0) {
      last = ErrnoError("bind", address, errno);
      continue;
    }
    if (::listen(fd.get(), backlog) != 0) {
      last = ErrnoError("listen", address, errno);
      continue;
    }
    ::freeaddrinfo(list);
    return fd;
  }
  ::freeaddrinfo(list);
  return last;
}

absl::StatusOr<UniqueFd> TcpAccept(int listen_fd, absl::Time deadline) {
  while (true) {
    RETURN_IF_ERROR(WaitReady(listen_fd, POLLIN, deadline, absl::InfiniteDuration(), "accept"));
    int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd >= 0) return UniqueFd(fd);
    int err = errno;
    if (err == EINTR || err == EAGAIN || err == EWOULDBLOCK || err == ECONNABORTED || err == EPROTO) continue;
    if (err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM) {
      // Out of fds/memory: back off instead of spinning; the caller decides whether to go on.
      ::usleep(10000);
      return ErrnoError("accept", "listener", err);
    }
    return Unavailable("accept", "listener", err);  // EINVAL after shutdown(), EBADF, ...
  }
}

absl::StatusOr<UniqueFd> TcpConnect(const std::string& address, absl::Time deadline) {
  ASSIGN_OR_RETURN(HostPort hp, ParseHostPort(address));
  ASSIGN_OR_RETURN(addrinfo * list, Resolve(hp, /*passive=*/false));
  absl::Status last = MakeError(ErrorCode::kUnavailable, absl::StrCat("connect(", address, "): no address"));
  for (addrinfo* ai = list; ai != nullptr; ai = ai->ai_next) {
    UniqueFd fd(::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol));
    if (!fd) {
      last = ErrnoError("socket", address, errno);
      continue;
    }
    int rc = ::connect(fd.get(), ai->ai_addr, ai->ai_addrlen);
    if (rc != 0 && errno != EINPROGRESS && errno != EINTR) {
      last = Unavailable("connect", address, errno);
      continue;
    }
    if (rc != 0) {
      absl::Status ready = WaitReady(fd.get(), POLLOUT, deadline, absl::InfiniteDuration(), "connect");
      if (!ready.ok()) {
        last = MakeError(ErrorCodeOf(ready), absl::StrCat("connect(", address, "): ", ready.message()));
        if (ErrorCodeOf(ready) == ErrorCode::kDeadlineExceeded) break;
        continue;
      }
      int err = 0;
      socklen_t len = sizeof(err);
      if (::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
      if (err != 0) {
        last = Unavailable("connect", address, err);
        continue;
      }
    }
    ::freeaddrinfo(list);
    return fd;
  }
  ::freeaddrinfo(list);
  return last;
}

absl::StatusOr<std::string> LocalAddress(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof(ss);
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return ErrnoError("getsockname", "socket", errno);
  return SockaddrToString(ss);
}

absl::StatusOr<std::string> RemoteAddress(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof(ss);
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0)
    return Unavailable("getpeername", "socket", errno);
  return SockaddrToString(ss);
}

absl::Status ConfigureConnection(int fd, const ConnectionOptions& options) {
  RETURN_IF_ERROR(SetInt(fd, IPPROTO_TCP, TCP_NODELAY, 1, "TCP_NODELAY"));
  if (!options.congestion_control.empty() &&
      ::setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, options.congestion_control.data(),
                   static_cast<socklen_t>(options.congestion_control.size())) != 0) {
    static std::atomic<bool> warned{false};
    if (!warned.exchange(true)) {
      LOG(WARNING) << "tcp transport: TCP_CONGESTION " << options.congestion_control << ": " << std::strerror(errno)
                   << "; connections keep the system's congestion control";
    }
  }
  int timeout_s = static_cast<int>(std::max<int64_t>(1, absl::ToInt64Seconds(options.dead_peer_timeout)));
  // Idle connections: probe after a third of the timeout, every sixth, give up after 3 misses.
  RETURN_IF_ERROR(SetInt(fd, SOL_SOCKET, SO_KEEPALIVE, 1, "SO_KEEPALIVE"));
  RETURN_IF_ERROR(SetInt(fd, IPPROTO_TCP, TCP_KEEPIDLE, std::max(1, timeout_s / 3), "TCP_KEEPIDLE"));
  RETURN_IF_ERROR(SetInt(fd, IPPROTO_TCP, TCP_KEEPINTVL, std::max(1, timeout_s / 6), "TCP_KEEPINTVL"));
  RETURN_IF_ERROR(SetInt(fd, IPPROTO_TCP, TCP_KEEPCNT, 3, "TCP_KEEPCNT"));
  // Busy connections: unacknowledged data older than this kills the connection.
  RETURN_IF_ERROR(SetInt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, timeout_s * 1000, "TCP_USER_TIMEOUT"));
  if (options.buffer_bytes > 0) {
    RETURN_IF_ERROR(SetInt(fd, SOL_SOCKET, SO_SNDBUF, options.buffer_bytes, "SO_SNDBUF"));
    RETURN_IF_ERROR(SetInt(fd, SOL_SOCKET, SO_RCVBUF, options.buffer_bytes, "SO_RCVBUF"));
  }
  return absl::OkStatus();
}

absl::Status SendAll(int fd, const iovec* iov, int iovcnt, absl::Time deadline, absl::Duration max_stall) {
  // A private copy of the iovecs, advanced as bytes go out; one sendmsg takes at most IOV_MAX.
  if (iovcnt < 0) return MakeError(ErrorCode::kInternal, "SendAll: negative iovec count");
  absl::InlinedVector<iovec, 8> local(iov, iov + iovcnt);
  int first = 0;
  while (first < iovcnt) {
    if (local[first].iov_len == 0) {
      ++first;
      continue;
    }
    msghdr msg{};
    msg.msg_iov = &local[first];
    msg.msg_iovlen = static_cast<size_t>(std::min(iovcnt - first, IOV_MAX));
    ssize_t n = ::sendmsg(fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        RETURN_IF_ERROR(WaitReady(fd, POLLOUT, deadline, max_stall, "send"));
        continue;
      }
      return Unavailable("send", "peer", errno);
    }
    size_t sent = static_cast<size_t>(n);
    while (sent > 0 && first < iovcnt) {
      size_t take = std::min(sent, local[first].iov_len);
      local[first].iov_base = static_cast<char*>(local[first].iov_base) + take;
      local[first].iov_len -= take;
      sent -= take;
      if (local[first].iov_len == 0) ++first;
    }
  }
  return absl::OkStatus();
}

absl::Status RecvAll(int fd, void* dst, size_t size, absl::Time deadline, absl::Duration max_stall) {
  char* p = static_cast<char*>(dst);
  while (size > 0) {
    ssize_t n = ::recv(fd, p, size, MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        RETURN_IF_ERROR(WaitReady(fd, POLLIN, deadline, max_stall, "recv"));
        continue;
      }
      return Unavailable("recv", "peer", errno);
    }
    if (n == 0) return MakeError(ErrorCode::kUnavailable, "recv(peer): connection closed");
    p += n;
    size -= static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

absl::StatusOr<size_t> RecvSome(int fd, void* dst, size_t size, absl::Time deadline, absl::Duration max_stall) {
  if (size == 0) return MakeError(ErrorCode::kInternal, "RecvSome: empty buffer");
  while (true) {
    ssize_t n = ::recv(fd, dst, size, MSG_DONTWAIT);
    if (n > 0) return static_cast<size_t>(n);
    if (n == 0) return MakeError(ErrorCode::kUnavailable, "recv(peer): connection closed");
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      RETURN_IF_ERROR(WaitReady(fd, POLLIN, deadline, max_stall, "recv"));
      continue;
    }
    return Unavailable("recv", "peer", errno);
  }
}

}  // namespace rplasma::transport::tcp
