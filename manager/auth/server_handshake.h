// ServerHandshake: the server side of the peer-auth handshake (peer_auth.h) as a non-blocking state
// machine, so one thread can run many handshakes at once (HandshakePool) and no connection holds a
// thread before it has proved the secret.
//
//   kSendingChallenge --challenge sent--> kReadingResponse --56 B, MAC ok--> kSendingVerdict(ok) --sent-->
//   kAuthenticated
//                                               |  \--56 B, MAC wrong--> kSendingVerdict(denied) --sent--> kFailed
//                                               \--bad magic/version/reserved, EOF, socket error----------> kFailed
//   (an empty secret starts in kFailed; any state but kAuthenticated may end in kFailed on an I/O error)
//
// Nothing past the 56-byte response is ever read: bytes the client sends after it stay in the socket
// for whoever serves the connection. The machine has no clock: its owner enforces the deadline.
// The pure half (output/OnSent, input_wanted/OnReceived, OnEof) takes bytes as arguments, so tests
// can feed any chunking and any hostile bytes; Advance(fd) does the non-blocking socket I/O.
//
// Thread-safety: none; one owner at a time.
#ifndef RPLASMA_MANAGER_AUTH_SERVER_HANDSHAKE_H_
#define RPLASMA_MANAGER_AUTH_SERVER_HANDSHAKE_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

#include "manager/auth/peer_auth.h"

namespace rplasma::auth {

class ServerHandshake {
 public:
  enum class State { kSendingChallenge, kReadingResponse, kSendingVerdict, kAuthenticated, kFailed };
  // What Advance needs before it can go on.
  enum class Want { kWrite, kRead, kNothing };

  // `secret` must outlive the handshake. Draws a fresh nonce.
  explicit ServerHandshake(absl::string_view secret);
  ServerHandshake(const ServerHandshake&) = delete;
  ServerHandshake& operator=(const ServerHandshake&) = delete;

  State state() const { return state_; }
  bool done() const { return state_ == State::kAuthenticated || state_ == State::kFailed; }
  // kFailed: why (kPermissionDenied, kProtocolError, kUnavailable). OK otherwise.
  const absl::Status& status() const { return status_; }

  // Bytes to send next (empty unless in a kSending* state).
  absl::Span<const uint8_t> output() const;
  // REQUIRES: n <= output().size().
  void OnSent(size_t n);
  // Bytes the response still lacks (0 unless kReadingResponse).
  size_t input_wanted() const;
  // REQUIRES: bytes.size() <= input_wanted().
  void OnReceived(absl::Span<const uint8_t> bytes);
  // The peer closed the connection (or it failed with `why`): kFailed unless already done.
  void OnEof();
  void Fail(absl::Status why);

  // Sends and receives on the non-blocking stream `fd` as far as it can without blocking.
  Want Advance(int fd);

 private:
  void CheckResponse();

  const absl::string_view secret_;
  State state_ = State::kSendingChallenge;
  absl::Status status_;
  bool verdict_ok_ = false;
  Nonce server_nonce_;
  uint8_t out_[kVerdictBytes > kChallengeBytes ? kVerdictBytes : kChallengeBytes] = {};
  size_t out_size_ = 0;
  size_t out_sent_ = 0;
  uint8_t in_[kResponseBytes] = {};
  size_t in_size_ = 0;
};

}  // namespace rplasma::auth

#endif  // RPLASMA_MANAGER_AUTH_SERVER_HANDSHAKE_H_
