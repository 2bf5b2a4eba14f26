#include "bench-mpi/common/tcp_stream_peer.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_format.h"

#include "protocol/base/socket_io.h"
#include "protocol/base/status.h"

namespace rplasma::bench {
namespace {

void SetNoDelay(int fd) {
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

sockaddr_in Loopback(int port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  return addr;
}

}  // namespace

absl::StatusOr<std::unique_ptr<TcpStreamServer>> TcpStreamServer::Start(uint64_t max_bytes) {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd) return ErrnoError("socket", "tcp stream peer", errno);
  sockaddr_in addr = Loopback(0);
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    return ErrnoError("bind", "127.0.0.1:0", errno);
  }
  if (::listen(fd.get(), 4) != 0) return ErrnoError("listen", "tcp stream peer", errno);
  socklen_t len = sizeof(addr);
  if (::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    return ErrnoError("getsockname", "tcp stream peer", errno);
  }
  return std::unique_ptr<TcpStreamServer>(new TcpStreamServer(std::move(fd), ntohs(addr.sin_port), max_bytes));
}

TcpStreamServer::TcpStreamServer(UniqueFd listener, int port, uint64_t max_bytes)
    : listener_(std::move(listener)), port_(port), payload_(max_bytes, 0x6b) {
  thread_ = std::thread([this] { Serve(); });
}

TcpStreamServer::~TcpStreamServer() {
  stopping_ = true;
  ::shutdown(listener_.get(), SHUT_RDWR);  // wakes accept/poll
  if (int fd = active_fd_.load(); fd >= 0) ::shutdown(fd, SHUT_RDWR);
  thread_.join();
}

void TcpStreamServer::Serve() {
  while (!stopping_) {
    pollfd p{listener_.get(), POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    UniqueFd conn(::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (!conn) continue;
    SetNoDelay(conn.get());
    active_fd_ = conn.get();
    if (stopping_) ::shutdown(conn.get(), SHUT_RDWR);
    uint64_t want = 0;
    while (ReadAll(conn.get(), &want, sizeof(want)).ok()) {
      if (want > payload_.size()) break;  // not ours to serve: drop the connection
      if (!WriteAll(conn.get(), payload_.data(), want).ok()) break;
    }
    active_fd_ = -1;
  }
}

absl::StatusOr<TcpStreamClient> TcpStreamClient::Connect(int port) {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd) return ErrnoError("socket", "tcp stream client", errno);
  sockaddr_in addr = Loopback(port);
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    return ErrnoError("connect", absl::StrFormat("127.0.0.1:%d", port), errno);
  }
  SetNoDelay(fd.get());
  return TcpStreamClient(std::move(fd));
}

absl::Status TcpStreamClient::Transfer(uint8_t* destination, uint64_t bytes) {
  RETURN_IF_ERROR(WriteAll(fd_.get(), &bytes, sizeof(bytes)));
  return ReadAll(fd_.get(), destination, bytes);
}

}  // namespace rplasma::bench
