#include "manager/transport/verbs/auth_port.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "absl/strings/str_format.h"

#include "manager/auth/peer_auth.h"
#include "protocol/base/logging.h"
#include "protocol/base/socket_io.h"
#include "protocol/base/status.h"

namespace rplasma::transport::verbs {
namespace {

constexpr uint8_t kTicketMagic[4] = {'R', 'P', 'V', 'T'};

// "ip:port" ("[v6]:port") of an accepted peer, for logs and the per-source cap.
std::string PeerAddress(const sockaddr_storage& a) {
  char host[INET6_ADDRSTRLEN] = "unknown";
  uint16_t port = 0;
  if (a.ss_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&a);
    ::inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
    port = ntohs(in6->sin6_port);
    return absl::StrFormat("[%s]:%d", host, port);
  }
  const auto* in4 = reinterpret_cast<const sockaddr_in*>(&a);
  ::inet_ntop(AF_INET, &in4->sin_addr, host, sizeof(host));
  port = ntohs(in4->sin_port);
  return absl::StrFormat("%s:%d", host, port);
}

socklen_t AddrLen(const sockaddr_storage& a) {
  return a.ss_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
}

}  // namespace

absl::StatusOr<std::unique_ptr<AuthPort>> AuthPort::Create(const sockaddr_storage& addr, std::string secret,
                                                           TicketBook* tickets, AuthPortCounters* counters,
                                                           const auth::HandshakeLimits& limits) {
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
  auto port = std::unique_ptr<AuthPort>(new AuthPort(std::move(fd), std::move(wake), tickets, counters));
  AuthPort* raw = port.get();
  ASSIGN_OR_RETURN(port->pool_,
                   auth::HandshakePool::Create(
                       "verbs auth port", std::move(secret), limits,
                       [raw](UniqueFd conn, const std::string& peer) { raw->SendTicket(std::move(conn), peer); },
                       [raw](const std::string& peer, const absl::Status& why) { raw->CountFailure(peer, why); }));
  port->thread_ = std::thread([p = port.get()] { p->Run(); });
  return port;
}

AuthPort::AuthPort(UniqueFd listen_fd, UniqueFd wake_fd, TicketBook* tickets, AuthPortCounters* counters)
    : listen_fd_(std::move(listen_fd)), wake_fd_(std::move(wake_fd)), tickets_(tickets), counters_(counters) {}

AuthPort::~AuthPort() {
  uint64_t one = 1;
  if (::write(wake_fd_.get(), &one, sizeof(one)) < 0) LOG(WARNING) << "verbs auth port: wake failed";
  if (thread_.joinable()) thread_.join();
  if (pool_ != nullptr) pool_->Shutdown();
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
    sockaddr_storage peer{};
    socklen_t peer_len = sizeof(peer);
    UniqueFd conn(::accept4(listen_fd_.get(), reinterpret_cast<sockaddr*>(&peer), &peer_len, SOCK_CLOEXEC));
    if (!conn) continue;                             // EAGAIN / ECONNABORTED: nothing to serve
    pool_->Add(std::move(conn), PeerAddress(peer));  // never blocks
  }
}

void AuthPort::SendTicket(UniqueFd fd, const std::string& peer) {
  Ticket t = tickets_->Issue(absl::Now());
  uint8_t msg[4 + kTicketBytes];
  std::memcpy(msg, kTicketMagic, 4);
  std::memcpy(msg + 4, t.data(), kTicketBytes);
  // The socket's buffer is empty but for the verdict: the ticket fits without waiting.
  const ssize_t n = ::send(fd.get(), msg, sizeof(msg), MSG_NOSIGNAL | MSG_DONTWAIT);
  if (n != static_cast<ssize_t>(sizeof(msg))) {
    LOG(WARNING) << "verbs auth port: sending the ticket to " << peer << " failed"
                 << (n < 0 ? absl::StrFormat(": %s", std::strerror(errno)) : std::string(" (short write)"));
    return;
  }
  counters_->tickets_issued.fetch_add(1, std::memory_order_relaxed);
}

void AuthPort::CountFailure(const std::string& peer, const absl::Status& why) {
  const uint64_t failures = counters_->failures.fetch_add(1, std::memory_order_relaxed) + 1;
  // A flood must not flood the log too: the first few, then one line per thousand.
  if (failures <= 10 || failures % 1000 == 0) {
    LOG(WARNING) << "verbs auth port: peer " << peer << " refused (" << failures << " so far): " << why.ToString();
  }
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
      return MakeError(ErrorCode::kUnavailable,
                       ErrnoError("connect", "verbs auth port", rc < 0 ? errno : err).message());
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
