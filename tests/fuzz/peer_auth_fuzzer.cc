// Fuzzes the peer-auth handshake (manager/auth/peer_auth.h) from a peer that does not know the
// secret: the input is everything the other end sends (and then it half-closes), played over a
// socketpair against both AuthenticateAsServer and AuthenticateAsClient.
//
// Invariants: no byte string is ever accepted (each proof depends on a fresh nonce of ours, so a
// peer without the secret cannot produce it); the refusal is a definite error — denied, malformed
// or closed — well before the deadline, never a hang.
#include <sys/socket.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>

#include "absl/time/clock.h"
#include "absl/time/time.h"

#include "manager/auth/peer_auth.h"
#include "protocol/base/logging.h"
#include "protocol/base/socket_io.h"
#include "protocol/base/status.h"
#include "protocol/base/unique_fd.h"

namespace rplasma::auth {
namespace {

constexpr absl::string_view kSecret = "a fuzzing secret of thirty-two b";
// More than a socketpair buffers could block the write below; no message is longer than 56 bytes.
constexpr size_t kMaxInputBytes = 16 * 1024;

enum class Role { kServer, kClient };

void CheckHandshake(Role role, const uint8_t* data, size_t size) {
  int fds[2];
  CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) == 0);
  UniqueFd ours(fds[0]);
  UniqueFd theirs(fds[1]);
  CHECK(WriteAll(theirs.get(), data, size).ok());
  CHECK(shutdown(theirs.get(), SHUT_WR) == 0);

  const absl::Time start = absl::Now();
  const absl::Time deadline = start + absl::Seconds(5);
  const absl::Status status = role == Role::kServer ? AuthenticateAsServer(ours.get(), kSecret, deadline)
                                                    : AuthenticateAsClient(ours.get(), kSecret, deadline);
  CHECK(!status.ok()) << "a peer without the secret was accepted";
  const ErrorCode code = ErrorCodeOf(status);
  CHECK(code == ErrorCode::kPermissionDenied || code == ErrorCode::kProtocolError || code == ErrorCode::kUnavailable)
      << status;
  CHECK(absl::Now() - start < absl::Seconds(4)) << "refusal took " << (absl::Now() - start);
}

}  // namespace
}  // namespace rplasma::auth

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace rplasma::auth;
  if (size > kMaxInputBytes) return 0;
  CheckHandshake(Role::kServer, data, size);
  CheckHandshake(Role::kClient, data, size);
  return 0;
}
