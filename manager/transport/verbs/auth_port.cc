#include "manager/transport/verbs/auth_port.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_format.h"
#include "manager/auth/peer_auth.h"
#include "protocol/base/logging.h"
#include "protocol/base/socket_io.h"
#include "protocol/base/status.h"

namespace rplasma::transport::verbs {
namespace {

constexpr uint8_t kTicketMagic[4] = {'R', 'P', 'V', 'T'};

socklen_t AddrLen(const sockaddr_storage& a) {
  return a.ss_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
}

}  // namespace

absl::StatusOr<std::unique_ptr<AuthPort>> AuthPort::Create(const sockaddr_storage& addr, std::string secret,
                                                           TicketBook* tickets, AuthPortCounters* counters,
                                                           absl::Duration handshake_timeout) {
  UniqueFd fd(::socket(addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd) return ErrnoError("socket", "verbs auth port", errno);
  int one = 1;
  ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&addr), AddrLen(addr)) != 0) {
    int err = errno;
    return MakeError(ErrorCode::kUnavailable, ErrnoError("bind", "verbs auth port", err).message());
  }
  if (::listen(fd.get(), 64) != 0) return ErrnoError("listen", "verbs auth port", errno);
  RETURN_IF_ERROR(SetNonBlocking(fd.get()));
  UniqueFd wake(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!wake) return ErrnoError("eventfd", "verbs auth port", errno);
  auto port = std::unique_ptr<AuthPort>(new AuthPort(std::move(fd), std::move(wake), std::move(secret), tickets,
                                                     counters, handshake_timeout));
  port->thread_ = std::thread([p = port.get()] { p->Run(); });
  return port;
}

AuthPort::AuthPort(UniqueFd listen_fd, UniqueFd wake_fd, std::string secret, TicketBook* tickets,
                   AuthPortCounters* counters, absl::Duration handshake_timeout)
    : listen_fd_(std::move(listen_fd)),
      wake_fd_(std::move(wake_fd)),
      secret_(std::move(secret)),
      tickets_(tickets),
      counters_(counters),
      handshake_timeout_(handshake_timeout) {}

AuthPort::~AuthPort() {
  uint64_t one = 1;
  if (::write(wake_fd_.get(), &one, sizeof(one)) < 0) LOG(WARNING) << "verbs auth port: wake failed";
  if (thread_.joinable()) thread_.join();
}

void AuthPort::Run() {
  for (;;) {
    pollfd fds[2] = {{listen_fd_.get(), POLLIN, 0}, {wake_fd_.get(), POLLIN, 0}};
    int rc = ::poll(fds, 2, -1);
    if (rc < 0) {
      if (errno == EINTR) continue;
      LOG(ERROR) << "verbs auth port: poll failed: " << std::strerror(errno);
      return;
    }
    if (fds[1].revents != 0) return;
    if (fds[0].revents == 0) continue;
    UniqueFd conn(::accept4(listen_fd_.get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (!conn) continue;  // EAGAIN / ECONNABORTED: nothing to serve
    Serve(conn.get());
  }
}

void AuthPort::Serve(int fd) {
  absl::Time deadline = absl::Now() + handshake_timeout_;
  absl::Status s = auth::AuthenticateAsServer(fd, secret_, deadline);
  if (!s.ok()) {
    counters_->failures.fetch_add(1, std::memory_order_relaxed);
    LOG(WARNING) << "verbs auth port: peer refused: " << s.ToString();
    return;
  }
  Ticket t = tickets_->Issue(absl::Now());
  uint8_t msg[4 + kTicketBytes];
  std::memcpy(msg, kTicketMagic, 4);
  std::memcpy(msg + 4, t.data(), kTicketBytes);
  if (absl::Status w = WriteAll(fd, msg, sizeof(msg)); !w.ok()) {
    LOG(WARNING) << "verbs auth port: sending ticket failed: " << w.ToString();
    return;
  }
  counters_->tickets_issued.fetch_add(1, std::memory_order_relaxed);
}

absl::StatusOr<Ticket> RequestTicket(const sockaddr_storage& addr, absl::string_view secret, absl::Time deadline) {
  UniqueFd fd(::socket(addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd) return ErrnoError("socket", "verbs auth", errno);
  if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr), AddrLen(addr)) != 0) {
    if (errno != EINPROGRESS) {
      return MakeError(ErrorCode::kUnavailable, ErrnoError("connect", "verbs auth port", errno).message());
    }
    pollfd p{fd.get(), POLLOUT, 0};
    int64_t ms = absl::ToInt64Milliseconds(deadline - absl::Now());
    int rc = ms <= 0 ? 0 : ::poll(&p, 1, static_cast<int>(std::min<int64_t>(ms, 1 << 30)));
    if (rc == 0) return MakeError(ErrorCode::kDeadlineExceeded, "connect(verbs auth port): timed out");
    int err = 0;
    socklen_t len = sizeof(err);
    ::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &len);
    if (rc < 0 || err != 0) {
      return MakeError(ErrorCode::kUnavailable, ErrnoError("connect", "verbs auth port", rc < 0 ? errno : err).message());
    }
  }
  int one = 1;
  ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  RETURN_IF_ERROR(auth::AuthenticateAsClient(fd.get(), secret, deadline));
  uint8_t msg[4 + kTicketBytes];
  RETURN_IF_ERROR(ReadAllUntil(fd.get(), msg, sizeof(msg), deadline));
  if (std::memcmp(msg, kTicketMagic, 4) != 0) return ProtocolError("verbs auth port sent no ticket");
  Ticket t;
  std::memcpy(t.data(), msg + 4, kTicketBytes);
  return t;
}

}  // namespace rplasma::transport::verbs
