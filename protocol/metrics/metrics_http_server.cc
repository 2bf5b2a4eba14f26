#include "protocol/metrics/metrics_http_server.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

#include "protocol/base/logging.h"
#include "protocol/base/socket_io.h"
#include "protocol/base/status.h"
#include "protocol/metrics/prometheus_text.h"

namespace rplasma {
namespace {

std::string Response(absl::string_view status, absl::string_view content_type, absl::string_view body, bool with_body) {
  return absl::StrCat("HTTP/1.1 ", status, "\r\nContent-Type: ", content_type, "\r\nContent-Length: ", body.size(),
                      "\r\nConnection: close\r\n", absl::StartsWith(status, "405") ? "Allow: GET, HEAD\r\n" : "",
                      "\r\n", with_body ? body : "");
}

absl::StatusOr<UniqueFd> BindTcp(const MetricsHttpServerOptions& options, uint16_t* bound_port) {
  const std::string where = absl::StrCat(options.address, ":", options.port);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICHOST | AI_PASSIVE;
  addrinfo* found = nullptr;
  const int rc = ::getaddrinfo(options.address.c_str(), nullptr, &hints, &found);
  if (rc != 0 || found == nullptr) {
    return MakeError(
        ErrorCode::kInvalidArgument,
        absl::StrCat("metrics address '", options.address, "': not a numeric IP address (", ::gai_strerror(rc), ")"));
  }
  sockaddr_storage address{};
  std::memcpy(&address, found->ai_addr, found->ai_addrlen);
  const socklen_t length = found->ai_addrlen;
  const int family = found->ai_family;
  ::freeaddrinfo(found);
  if (family == AF_INET) {
    reinterpret_cast<sockaddr_in*>(&address)->sin_port = htons(options.port);
  } else {
    reinterpret_cast<sockaddr_in6*>(&address)->sin6_port = htons(options.port);
  }
  UniqueFd fd(::socket(family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd) return ErrnoError("socket", where, errno);
  const int one = 1;
  ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&address), length) != 0) return ErrnoError("bind", where, errno);
  if (::listen(fd.get(), options.backlog) != 0) return ErrnoError("listen", where, errno);
  sockaddr_storage bound{};
  socklen_t bound_length = sizeof(bound);
  if (::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&bound), &bound_length) != 0) {
    return ErrnoError("getsockname", where, errno);
  }
  *bound_port = ntohs(family == AF_INET ? reinterpret_cast<sockaddr_in*>(&bound)->sin_port
                                        : reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port);
  return fd;
}

}  // namespace

absl::StatusOr<std::unique_ptr<MetricsHttpServer>> MetricsHttpServer::Start(const MetricsHttpServerOptions& options,
                                                                            RenderFn render) {
  uint16_t port = 0;
  ASSIGN_OR_RETURN(UniqueFd listen_fd, BindTcp(options, &port));
  UniqueFd wake_fd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!wake_fd) return ErrnoError("eventfd", "metrics server", errno);
  std::unique_ptr<MetricsHttpServer> server(
      new MetricsHttpServer(options, std::move(render), std::move(listen_fd), std::move(wake_fd), port));
  server->thread_ = std::thread([s = server.get()] { s->Serve(); });
  return server;
}

MetricsHttpServer::MetricsHttpServer(MetricsHttpServerOptions options, RenderFn render, UniqueFd listen_fd,
                                     UniqueFd wake_fd, uint16_t port)
    : options_(std::move(options)),
      render_(std::move(render)),
      listen_fd_(std::move(listen_fd)),
      wake_fd_(std::move(wake_fd)),
      port_(port) {}

MetricsHttpServer::~MetricsHttpServer() { Shutdown(); }

void MetricsHttpServer::Shutdown() {
  if (!thread_.joinable()) return;
  const uint64_t one = 1;
  (void)!::write(wake_fd_.get(), &one, sizeof(one));
  thread_.join();
}

bool MetricsHttpServer::WaitReady(int fd, short events, absl::Time deadline) {
  for (;;) {
    const absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) return false;
    pollfd fds[2] = {{fd, events, 0}, {wake_fd_.get(), POLLIN, 0}};
    const int n = ::poll(fds, 2, static_cast<int>(absl::ToInt64Milliseconds(absl::Ceil(left, absl::Milliseconds(1)))));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0 || fds[1].revents != 0) return false;
    return true;  // ready, or an error/hangup the next read/write reports
  }
}

void MetricsHttpServer::Serve() {
  for (;;) {
    pollfd fds[2] = {{listen_fd_.get(), POLLIN, 0}, {wake_fd_.get(), POLLIN, 0}};
    const int n = ::poll(fds, 2, -1);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      LOG(ERROR) << "metrics server: poll: " << std::strerror(errno);
      return;
    }
    if (fds[1].revents != 0) return;
    UniqueFd fd(::accept4(listen_fd_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
    if (!fd) {
      // EAGAIN: the client went away. Out of fds (EMFILE...), the listener stays readable: pause
      // instead of spinning, then the next poll retries.
      if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR && errno != ECONNABORTED) {
        pollfd wake{wake_fd_.get(), POLLIN, 0};
        ::poll(&wake, 1, 100);
      }
      continue;
    }
    HandleConnection(fd.get());
  }
}

void MetricsHttpServer::HandleConnection(int fd) {
  const absl::Time deadline = absl::Now() + options_.request_deadline;
  // The request head, up to the blank line; only its first line matters.
  std::string head;
  size_t end = std::string::npos;
  while ((end = head.find("\r\n\r\n")) == std::string::npos && (end = head.find("\n\n")) == std::string::npos) {
    if (head.size() > options_.max_request_bytes) break;
    if (!WaitReady(fd, POLLIN, deadline)) {
      timed_out_.fetch_add(1);
      return;
    }
    char chunk[2048];
    const ssize_t got = ::recv(fd, chunk, sizeof(chunk), 0);
    if (got < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (got <= 0) return;  // closed or reset before a whole head: nothing to answer
    head.append(chunk, static_cast<size_t>(got));
  }
  std::string reply;
  const std::vector<absl::string_view> words =
      absl::StrSplit(absl::string_view(head).substr(0, head.find_first_of("\r\n")), ' ', absl::SkipEmpty());
  const bool head_only = !words.empty() && words[0] == "HEAD";
  if (end == std::string::npos || words.size() != 3 || !absl::StartsWith(words[2], "HTTP/1.")) {
    reply = Response("400 Bad Request", "text/plain", "bad request\n", true);
  } else if (words[0] != "GET" && !head_only) {
    reply = Response("405 Method Not Allowed", "text/plain", "only GET /metrics\n", true);
  } else if (words[1] != "/metrics" && !absl::StartsWith(words[1], "/metrics?")) {
    reply = Response("404 Not Found", "text/plain", "only GET /metrics\n", !head_only);
  } else {
    reply = Response("200 OK", kPrometheusContentType, render_(), !head_only);
  }
  const bool ok = absl::StartsWith(reply, "HTTP/1.1 200");
  (ok ? scrapes_ : rejected_).fetch_add(1);
  size_t sent = 0;
  while (sent < reply.size()) {
    const ssize_t n = ::send(fd, reply.data() + sent, reply.size() - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<size_t>(n);
    } else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
      if (!WaitReady(fd, POLLOUT, deadline)) {
        timed_out_.fetch_add(1);
        return;
      }
    } else {
      return;  // the client went away
    }
  }
  ::shutdown(fd, SHUT_WR);
}

}  // namespace rplasma
