#include "bench-mpi/launch/loopback_http.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>

#include "absl/strings/str_cat.h"

#include "protocol/base/status.h"

namespace rplasma::bench {
namespace {

sockaddr_in Loopback(uint16_t port) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return address;
}

}  // namespace

absl::StatusOr<uint16_t> UnusedLoopbackPort() {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in address = Loopback(0);
  socklen_t length = sizeof(address);
  if (!fd || ::bind(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    return ErrnoError("bind", "127.0.0.1:0", errno);
  }
  return ntohs(address.sin_port);
}

absl::StatusOr<UniqueFd> LoopbackConnect(uint16_t port) {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in address = Loopback(port);
  if (!fd || ::connect(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    return MakeError(ErrorCode::kUnavailable, ErrnoError("connect", absl::StrCat("127.0.0.1:", port), errno).message());
  }
  return fd;
}

absl::StatusOr<std::string> LoopbackHttpExchange(uint16_t port, absl::string_view request) {
  const std::string where = absl::StrCat("127.0.0.1:", port);
  ASSIGN_OR_RETURN(UniqueFd fd, LoopbackConnect(port));
  if (::send(fd.get(), request.data(), request.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(request.size())) {
    return MakeError(ErrorCode::kUnavailable, ErrnoError("send", where, errno).message());
  }
  std::string reply;
  char chunk[16384];
  ssize_t n;
  while ((n = ::recv(fd.get(), chunk, sizeof(chunk), 0)) > 0) reply.append(chunk, static_cast<size_t>(n));
  return reply;
}

}  // namespace rplasma::bench
