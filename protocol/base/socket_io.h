// Unix-domain socket I/O shared by every process: listen/connect, blocking exact reads and
// writes, SCM_RIGHTS fd passing, and peer credentials.
//
// Received fds are always taken with MSG_CMSG_CLOEXEC; a truncated control message is an error
// and every fd that did arrive is closed. Writes use MSG_NOSIGNAL: a dead peer is an error, never
// a SIGPIPE.
#ifndef RPLASMA_PROTOCOL_BASE_SOCKET_IO_H_
#define RPLASMA_PROTOCOL_BASE_SOCKET_IO_H_

#include <sys/types.h>

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"

#include "protocol/base/unique_fd.h"

namespace rplasma {

// Binds and listens on `path` (a stale socket file there is replaced). The socket is CLOEXEC.
absl::StatusOr<UniqueFd> UnixListen(const std::string& path, int backlog = 128);
// Connects to `path`; the socket is blocking and CLOEXEC.
absl::StatusOr<UniqueFd> UnixConnect(const std::string& path);
// UnixConnect that gives up with kDeadlineExceeded once `deadline` passes (a listener whose
// backlog is full makes a Unix connect wait; a non-blocking one fails with EAGAIN at once, so the
// wait is bounded with SO_SNDTIMEO, which the kernel applies to it). The fd is blocking, with no
// send timeout left set.
absl::StatusOr<UniqueFd> UnixConnect(const std::string& path, absl::Time deadline);

// The directory a listening socket at `socket_path` goes in: created 0700 if missing; a warning is
// logged if others may enter it (the listener still checks each peer's uid). `what` names the
// socket in log lines ("socket", "client socket").
absl::Status PrepareSocketDirectory(const std::string& socket_path, absl::string_view what);

absl::Status SetNonBlocking(int fd, bool non_blocking = true);

// Credentials of the process at the other end of a connected Unix socket (SO_PEERCRED).
struct PeerCredentials {
  pid_t pid;
  uid_t uid;
  gid_t gid;
};
absl::StatusOr<PeerCredentials> GetPeerCredentials(int fd);

// Writes all of `data` on a blocking fd (retries short writes and EINTR).
absl::Status WriteAll(int fd, const void* data, size_t size);
// Reads exactly `size` bytes from a blocking fd. A clean EOF is kUnavailable "connection closed".
absl::Status ReadAll(int fd, void* data, size_t size);
// Like ReadAll, but gives up with kDeadlineExceeded once `deadline` passes: reads what has come
// (non-blocking on a socket) and polls only when nothing has.
absl::Status ReadAllUntil(int fd, void* data, size_t size, absl::Time deadline);

// The most fds one SCM_RIGHTS message can carry (the kernel's SCM_MAX_FD).
inline constexpr size_t kMaxFdsPerMessage = 253;

// Whether one send or receive may wait: kDontWait passes MSG_DONTWAIT and reports "would block"
// instead of waiting (for the store's non-blocking sockets; works on blocking ones too).
enum class SocketWait { kBlock, kDontWait };

// The one place an SCM_RIGHTS message is built: a single sendmsg of (a prefix of) `data` with
// `fds_to_pass` (at most kMaxFdsPerMessage; empty = none) attached to its first byte. EINTR is
// retried. Returns the bytes sent — the fds went with them when that is > 0; with kDontWait, 0
// means the socket would block and nothing was sent. `data` must not be empty.
absl::StatusOr<size_t> SendSomeWithFds(int fd, absl::string_view data, absl::Span<const int> fds_to_pass,
                                       SocketWait wait);
// The same for several pieces sent as one message, in order (a gathered sendmsg): returns the bytes
// sent of their concatenation. Many small frames cost one system call instead of one each. At
// most kMaxGatherPieces pieces; the first must not be empty.
inline constexpr size_t kMaxGatherPieces = 64;
absl::StatusOr<size_t> SendSomeGathered(int fd, absl::Span<const absl::string_view> pieces,
                                        absl::Span<const int> fds_to_pass, SocketWait wait);

// The result of one RecvSomeWithFds.
struct ReceivedWithFds {
  size_t bytes = 0;            // 0 with !would_block: the peer closed the connection
  bool would_block = false;    // kDontWait and nothing was ready
  std::vector<UniqueFd> fds;   // every fd that arrived, in order (taken with MSG_CMSG_CLOEXEC)
  bool fds_truncated = false;  // MSG_CTRUNC: more fds came than there was room for; the kernel
                               // closed those, and `fds` holds the ones that did arrive
};
// The one place an SCM_RIGHTS message is parsed: a single recvmsg of up to `size` bytes with room
// for `max_fds` (1..kMaxFdsPerMessage) fds. EINTR is retried.
absl::StatusOr<ReceivedWithFds> RecvSomeWithFds(int fd, void* data, size_t size, size_t max_fds, SocketWait wait);

// Sends `data` (at least one byte) with `fd_to_pass` attached as SCM_RIGHTS on the first byte.
absl::Status SendWithFd(int fd, absl::string_view data, int fd_to_pass);

// Receives up to `size` bytes into `data` and, if one was attached, one fd. More than one fd or a
// truncated control message is an error (all received fds are closed). Returns bytes read (0 = EOF).
struct ReceivedWithFd {
  size_t bytes;
  UniqueFd fd;  // invalid if none was attached
};
absl::StatusOr<ReceivedWithFd> RecvWithFd(int fd, void* data, size_t size);

}  // namespace rplasma

#endif  // RPLASMA_PROTOCOL_BASE_SOCKET_IO_H_
