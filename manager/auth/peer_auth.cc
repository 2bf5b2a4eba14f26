#include "manager/auth/peer_auth.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include "manager/auth/server_handshake.h"
#include "protocol/base/logging.h"
#include "protocol/base/status.h"

namespace rplasma::auth {
namespace {

constexpr uint16_t kVerdictOk = 0;
constexpr uint16_t kVerdictDenied = 1;

// Waits until `fd` is ready for `events` or `deadline` passes. Works on blocking and non-blocking
// fds alike, so the handshake never blocks past its deadline.
absl::Status WaitReady(int fd, short events, absl::Time deadline, absl::string_view op) {
  while (true) {
    absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) {
      return MakeError(ErrorCode::kDeadlineExceeded, absl::StrCat("peer auth ", op, ": deadline exceeded"));
    }
    int timeout_ms = left == absl::InfiniteDuration()
                         ? -1
                         : static_cast<int>(std::min<int64_t>(absl::ToInt64Milliseconds(left) + 1, 1 << 30));
    pollfd pfd{fd, events, 0};
    int rc = ::poll(&pfd, 1, timeout_ms);
    if (rc < 0 && errno == EINTR) continue;
    if (rc < 0) return MakeError(ErrorCode::kUnavailable, ErrnoError("poll", op, errno).message());
    if (rc > 0) return absl::OkStatus();  // readable, or an error/hangup the I/O call will report
  }
}

absl::Status SendExact(int fd, const uint8_t* p, size_t size, absl::Time deadline) {
  while (size > 0) {
    RETURN_IF_ERROR(WaitReady(fd, POLLOUT, deadline, "send"));
    ssize_t n = ::send(fd, p, size, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) continue;
      return MakeError(ErrorCode::kUnavailable, ErrnoError("send", "peer auth", errno).message());
    }
    p += n;
    size -= static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

absl::Status RecvExact(int fd, uint8_t* p, size_t size, absl::Time deadline) {
  while (size > 0) {
    RETURN_IF_ERROR(WaitReady(fd, POLLIN, deadline, "recv"));
    ssize_t n = ::recv(fd, p, size, MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) continue;
      return MakeError(ErrorCode::kUnavailable, ErrnoError("recv", "peer auth", errno).message());
    }
    if (n == 0) return MakeError(ErrorCode::kUnavailable, "peer auth: connection closed by peer");
    p += n;
    size -= static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

void PutU16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v);
  p[1] = static_cast<uint8_t>(v >> 8);
}
void PutU32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
uint16_t GetU16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }
uint32_t GetU32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) | (static_cast<uint32_t>(p[2]) << 16) |
         (static_cast<uint32_t>(p[3]) << 24);
}

// Every message starts with magic | version | a u16 that is 0 (or the verdict).
void PutPrefix(uint8_t* p, uint16_t last) {
  PutU32(p, kAuthMagic);
  PutU16(p + 4, kAuthVersion);
  PutU16(p + 6, last);
}
absl::Status CheckPrefix(const uint8_t* p, absl::string_view what) {
  if (GetU32(p) != kAuthMagic) {
    return MakeError(ErrorCode::kProtocolError, absl::StrCat("peer auth ", what, ": bad magic (not an rplasma peer)"));
  }
  if (GetU16(p + 4) != kAuthVersion) {
    return MakeError(ErrorCode::kProtocolError,
                     absl::StrCat("peer auth ", what, ": unsupported version ", GetU16(p + 4)));
  }
  return absl::OkStatus();
}

absl::Status EmptySecretError() {
  return MakeError(ErrorCode::kPermissionDenied, "peer auth: no shared secret configured; refusing");
}

}  // namespace

Nonce RandomNonce() {
  Nonce nonce;
  CHECK(RAND_bytes(nonce.data(), static_cast<int>(nonce.size())) == 1) << "RAND_bytes failed";
  return nonce;
}

Mac ComputeMac(absl::string_view secret, absl::string_view label, absl::Span<const uint8_t> a,
               absl::Span<const uint8_t> b) {
  // The one-shot HMAC() is the API OpenSSL 3 keeps undeprecated; the inputs are tiny.
  std::string message;
  message.reserve(label.size() + a.size() + b.size());
  message.append(label.data(), label.size());
  message.append(reinterpret_cast<const char*>(a.data()), a.size());
  message.append(reinterpret_cast<const char*>(b.data()), b.size());
  Mac mac{};
  unsigned int len = 0;
  const uint8_t* out = HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
                            reinterpret_cast<const uint8_t*>(message.data()), message.size(), mac.data(), &len);
  CHECK(out != nullptr && len == kMacBytes) << "HMAC-SHA256 failed";
  return mac;
}

void WarmUpCrypto() {
  static const bool warmed = [] {
    const Nonce nonce = RandomNonce();
    (void)ComputeMac("warm-up", kClientLabel, nonce, nonce);
    return true;
  }();
  (void)warmed;
}

bool MacEquals(const Mac& x, const Mac& y) { return CRYPTO_memcmp(x.data(), y.data(), kMacBytes) == 0; }

absl::Status AuthenticateAsClient(int fd, absl::string_view secret, absl::Time deadline) {
  if (secret.empty()) return EmptySecretError();

  uint8_t challenge[kChallengeBytes];
  RETURN_IF_ERROR(RecvExact(fd, challenge, sizeof(challenge), deadline));
  RETURN_IF_ERROR(CheckPrefix(challenge, "challenge"));
  if (GetU16(challenge + 6) != 0) return MakeError(ErrorCode::kProtocolError, "peer auth challenge: reserved bits set");
  Nonce server_nonce;
  std::memcpy(server_nonce.data(), challenge + 8, kNonceBytes);

  Nonce client_nonce = RandomNonce();
  Mac client_mac = ComputeMac(secret, kClientLabel, server_nonce, client_nonce);
  uint8_t response[kResponseBytes];
  PutPrefix(response, 0);
  std::memcpy(response + 8, client_nonce.data(), kNonceBytes);
  std::memcpy(response + 8 + kNonceBytes, client_mac.data(), kMacBytes);
  RETURN_IF_ERROR(SendExact(fd, response, sizeof(response), deadline));

  uint8_t verdict[kVerdictBytes];
  RETURN_IF_ERROR(RecvExact(fd, verdict, sizeof(verdict), deadline));
  RETURN_IF_ERROR(CheckPrefix(verdict, "verdict"));
  uint16_t result = GetU16(verdict + 6);
  if (result == kVerdictDenied) {
    return MakeError(ErrorCode::kPermissionDenied, "peer auth: the server refused our proof (secrets differ)");
  }
  if (result != kVerdictOk) return MakeError(ErrorCode::kProtocolError, "peer auth verdict: unknown result");
  Mac server_mac;
  std::memcpy(server_mac.data(), verdict + 8, kMacBytes);
  if (!MacEquals(server_mac, ComputeMac(secret, kServerLabel, client_nonce, server_nonce))) {
    return MakeError(ErrorCode::kPermissionDenied, "peer auth: the server's proof is wrong (secrets differ)");
  }
  return absl::OkStatus();
}

void EncodeChallenge(const Nonce& server_nonce, uint8_t out[kChallengeBytes]) {
  PutPrefix(out, 0);
  std::memcpy(out + 8, server_nonce.data(), kNonceBytes);
}

absl::Status ParseResponse(const uint8_t in[kResponseBytes], Nonce* client_nonce, Mac* client_mac) {
  RETURN_IF_ERROR(CheckPrefix(in, "response"));
  if (GetU16(in + 6) != 0) return MakeError(ErrorCode::kProtocolError, "peer auth response: reserved bits set");
  std::memcpy(client_nonce->data(), in + 8, kNonceBytes);
  std::memcpy(client_mac->data(), in + 8 + kNonceBytes, kMacBytes);
  return absl::OkStatus();
}

void EncodeVerdict(bool ok, const Mac& server_mac, uint8_t out[kVerdictBytes]) {
  PutPrefix(out, ok ? kVerdictOk : kVerdictDenied);
  if (ok) {
    std::memcpy(out + 8, server_mac.data(), kMacBytes);
  } else {
    std::memset(out + 8, 0, kMacBytes);
  }
}

absl::Status AuthenticateAsServer(int fd, absl::string_view secret, absl::Time deadline) {
  // The one server implementation, driven here by a blocking loop.
  ServerHandshake handshake(secret);
  absl::Time refusal_deadline = absl::InfiniteFuture();
  while (true) {
    const ServerHandshake::Want want = handshake.Advance(fd);
    if (handshake.done()) break;
    absl::Time wait_until = deadline;
    if (handshake.state() == ServerHandshake::State::kSendingVerdict && !handshake.status().ok()) {
      // Telling a refused peer why is best effort: it must not hold us for long.
      if (refusal_deadline == absl::InfiniteFuture()) refusal_deadline = absl::Now() + absl::Milliseconds(100);
      wait_until = std::min(deadline, refusal_deadline);
    }
    absl::Status ready = WaitReady(fd, want == ServerHandshake::Want::kWrite ? POLLOUT : POLLIN, wait_until,
                                   want == ServerHandshake::Want::kWrite ? "send" : "recv");
    if (!ready.ok()) handshake.Fail(std::move(ready));
  }
  return handshake.status();
}

}  // namespace rplasma::auth
