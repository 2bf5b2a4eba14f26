// TCP socket helpers for the tcp transport: "host:port" parsing, listen/connect with a deadline,
// socket options, and deadline-bounded exact I/O.
//
// Every socket made here is CLOEXEC and NON-BLOCKING: all I/O goes through SendAll/RecvAll,
// which try the syscall first and poll() only when it would block, so a deadline is honoured on
// every wait and a thread blocked in RecvAll wakes as soon as another thread calls
// ::shutdown(fd, SHUT_RDWR). Writes use MSG_NOSIGNAL: a dead peer is an error, never a SIGPIPE.
// All functions are reentrant.
#ifndef RPLASMA_MANAGER_TRANSPORT_TCP_TCP_SOCKET_H_
#define RPLASMA_MANAGER_TRANSPORT_TCP_TCP_SOCKET_H_

#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

#include "protocol/base/unique_fd.h"

namespace rplasma::transport::tcp {

struct HostPort {
  std::string host;  // name or numeric address, without IPv6 brackets
  uint16_t port = 0;
};

// Parses "host:port" or "[v6addr]:port". kInvalidArgument on anything else (empty host, missing
// or non-numeric port, port > 65535).
absl::StatusOr<HostPort> ParseHostPort(absl::string_view address);
// The inverse: brackets an IPv6 literal.
std::string FormatHostPort(absl::string_view host, uint16_t port);

// Binds and listens on `address` (port 0 picks a free port); SO_REUSEADDR set.
absl::StatusOr<UniqueFd> TcpListen(const std::string& address, int backlog = 128);
// Accepts one connection (non-blocking, CLOEXEC). Waits until one arrives (kDeadlineExceeded once
// `deadline` passes) or the listening socket is shut down (kUnavailable). Transient errors
// (ECONNABORTED, EINTR) are retried; fd exhaustion is kResourceExhausted after a short back-off.
absl::StatusOr<UniqueFd> TcpAccept(int listen_fd, absl::Time deadline);
// Connects to `address`, trying each resolved address until `deadline`. kUnavailable when refused
// or unreachable, kDeadlineExceeded when the deadline passes.
absl::StatusOr<UniqueFd> TcpConnect(const std::string& address, absl::Time deadline);

// "ip:port" of the local / remote end of a connected or bound socket.
absl::StatusOr<std::string> LocalAddress(int fd);
absl::StatusOr<std::string> RemoteAddress(int fd);

// What ConfigureConnection sets besides TCP_NODELAY (TcpTuning's per-connection part).
struct ConnectionOptions {
  // Keepalive probes and TCP_USER_TIMEOUT: a vanished host is noticed even while we only send.
  absl::Duration dead_peer_timeout = absl::Seconds(30);
  // SO_SNDBUF/SO_RCVBUF if non-zero; 0 keeps kernel autotuning.
  int buffer_bytes = 0;
  // TCP_CONGESTION if non-empty; "" keeps the system's default (net.ipv4.tcp_congestion_control).
  std::string congestion_control;
};

// Options every transport connection gets: TCP_NODELAY (small Calls go out at once) and
// `options`. A congestion control the kernel refuses (not built, not in
// net.ipv4.tcp_allowed_congestion_control) leaves the system's default and logs one warning per
// process: it costs speed, never the connection. Errors: a socket option the kernel refuses.
absl::Status ConfigureConnection(int fd, const ConnectionOptions& options);

// Sends every byte of iov[0..iovcnt) (the array is not modified; any count: IOV_MAX at a time). Fails with
// kDeadlineExceeded once `deadline` passes or no byte could be sent for `max_stall`; kUnavailable on socket errors.
absl::Status SendAll(int fd, const iovec* iov, int iovcnt, absl::Time deadline,
                     absl::Duration max_stall = absl::InfiniteDuration());
// Receives exactly `size` bytes into `dst`. A clean EOF is kUnavailable "connection closed".
absl::Status RecvAll(int fd, void* dst, size_t size, absl::Time deadline,
                     absl::Duration max_stall = absl::InfiniteDuration());
// Receives at least one and at most `size` bytes (whatever has arrived, with one recv() when
// bytes are already waiting); returns how many. Errors as RecvAll. REQUIRES: size > 0.
absl::StatusOr<size_t> RecvSome(int fd, void* dst, size_t size, absl::Time deadline,
                                absl::Duration max_stall = absl::InfiniteDuration());

}  // namespace rplasma::transport::tcp

#endif  // RPLASMA_MANAGER_TRANSPORT_TCP_TCP_SOCKET_H_
