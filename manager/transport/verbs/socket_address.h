// "host:port" <-> sockaddr for the verbs listener and connector (IPv4 and "[v6]:port").
#ifndef RPLASMA_MANAGER_TRANSPORT_VERBS_SOCKET_ADDRESS_H_
#define RPLASMA_MANAGER_TRANSPORT_VERBS_SOCKET_ADDRESS_H_

#include <sys/socket.h>

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace rplasma::transport::verbs {

// Resolves "host:port" (numeric or by name; port 0 allowed). kInvalidArgument if malformed.
absl::StatusOr<sockaddr_storage> ResolveHostPort(const std::string& address);
std::string FormatHostPort(const sockaddr* addr);
uint16_t PortOf(const sockaddr_storage& addr);
void SetPort(sockaddr_storage& addr, uint16_t port);

}  // namespace rplasma::transport::verbs

#endif  // RPLASMA_MANAGER_TRANSPORT_VERBS_SOCKET_ADDRESS_H_
