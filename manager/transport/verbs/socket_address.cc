#include "manager/transport/verbs/socket_address.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>

#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"

#include "protocol/base/status.h"

namespace rplasma::transport::verbs {

absl::StatusOr<sockaddr_storage> ResolveHostPort(const std::string& address) {
  size_t colon = address.rfind(':');
  if (colon == std::string::npos)
    return MakeError(ErrorCode::kInvalidArgument, absl::StrFormat("address %s has no port", address));
  std::string host = address.substr(0, colon);
  std::string port_text = address.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  uint32_t port = 0;
  if (!absl::SimpleAtoi(port_text, &port) || port > 65535) {
    return MakeError(ErrorCode::kInvalidArgument, absl::StrFormat("address %s: bad port", address));
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV | (host.empty() ? AI_PASSIVE : 0);
  addrinfo* res = nullptr;
  int rc = getaddrinfo(host.empty() ? nullptr : host.c_str(), port_text.c_str(), &hints, &res);
  if (rc != 0 || res == nullptr) {
    return MakeError(ErrorCode::kInvalidArgument, absl::StrFormat("address %s: %s", address, gai_strerror(rc)));
  }
  sockaddr_storage out{};
  std::memcpy(&out, res->ai_addr, res->ai_addrlen);
  freeaddrinfo(res);
  return out;
}

std::string FormatHostPort(const sockaddr* addr) {
  char buf[INET6_ADDRSTRLEN] = "?";
  if (addr->sa_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(addr);
    inet_ntop(AF_INET, &in->sin_addr, buf, sizeof(buf));
    return absl::StrFormat("%s:%u", buf, ntohs(in->sin_port));
  }
  if (addr->sa_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(addr);
    inet_ntop(AF_INET6, &in6->sin6_addr, buf, sizeof(buf));
    return absl::StrFormat("[%s]:%u", buf, ntohs(in6->sin6_port));
  }
  return "?";
}

uint16_t PortOf(const sockaddr_storage& addr) {
  if (addr.ss_family == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6*>(&addr)->sin6_port);
  return ntohs(reinterpret_cast<const sockaddr_in*>(&addr)->sin_port);
}

void SetPort(sockaddr_storage& addr, uint16_t port) {
  if (addr.ss_family == AF_INET6) {
    reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port = htons(port);
  } else {
    reinterpret_cast<sockaddr_in*>(&addr)->sin_port = htons(port);
  }
}

}  // namespace rplasma::transport::verbs
