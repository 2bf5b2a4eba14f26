#include "manager/auth/server_handshake.h"

#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "protocol/base/logging.h"
#include "protocol/base/status.h"

namespace rplasma::auth {

ServerHandshake::ServerHandshake(absl::string_view secret) : secret_(secret), server_nonce_(RandomNonce()) {
  if (secret_.empty()) {
    state_ = State::kFailed;
    status_ = MakeError(ErrorCode::kPermissionDenied, "peer auth: no shared secret configured; refusing");
    return;
  }
  EncodeChallenge(server_nonce_, out_);
  out_size_ = kChallengeBytes;
}

absl::Span<const uint8_t> ServerHandshake::output() const {
  if (state_ != State::kSendingChallenge && state_ != State::kSendingVerdict) return {};
  return absl::MakeConstSpan(out_ + out_sent_, out_size_ - out_sent_);
}

void ServerHandshake::OnSent(size_t n) {
  CHECK(n <= output().size()) << "OnSent past the output";
  out_sent_ += n;
  if (out_sent_ < out_size_) return;
  out_sent_ = out_size_ = 0;
  if (state_ == State::kSendingChallenge) {
    state_ = State::kReadingResponse;
  } else if (verdict_ok_) {
    state_ = State::kAuthenticated;
  } else {
    state_ = State::kFailed;  // status_ was set when the proof failed
  }
}

size_t ServerHandshake::input_wanted() const {
  return state_ == State::kReadingResponse ? kResponseBytes - in_size_ : 0;
}

void ServerHandshake::OnReceived(absl::Span<const uint8_t> bytes) {
  CHECK(bytes.size() <= input_wanted()) << "OnReceived past the response";
  std::memcpy(in_ + in_size_, bytes.data(), bytes.size());
  in_size_ += bytes.size();
  if (in_size_ == kResponseBytes) CheckResponse();
}

void ServerHandshake::CheckResponse() {
  Nonce client_nonce;
  Mac client_mac;
  if (absl::Status parsed = ParseResponse(in_, &client_nonce, &client_mac); !parsed.ok()) {
    Fail(std::move(parsed));
    return;
  }
  verdict_ok_ = MacEquals(client_mac, ComputeMac(secret_, kClientLabel, server_nonce_, client_nonce));
  // The server proves itself only to a client that proved itself first.
  const Mac server_mac = verdict_ok_ ? ComputeMac(secret_, kServerLabel, client_nonce, server_nonce_) : Mac{};
  if (!verdict_ok_) {
    status_ = MakeError(ErrorCode::kPermissionDenied, "peer auth: the client's proof is wrong (secrets differ)");
  }
  EncodeVerdict(verdict_ok_, server_mac, out_);
  out_size_ = kVerdictBytes;
  out_sent_ = 0;
  state_ = State::kSendingVerdict;
}

void ServerHandshake::OnEof() { Fail(MakeError(ErrorCode::kUnavailable, "peer auth: connection closed by peer")); }

void ServerHandshake::Fail(absl::Status why) {
  if (done()) return;
  // A refused client stays refused, whatever happens to the verdict that tells it so.
  if (!(state_ == State::kSendingVerdict && !verdict_ok_)) status_ = std::move(why);
  state_ = State::kFailed;
}

ServerHandshake::Want ServerHandshake::Advance(int fd) {
  while (!done()) {
    if (absl::Span<const uint8_t> out = output(); !out.empty()) {
      const ssize_t n = ::send(fd, out.data(), out.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) return Want::kWrite;
        Fail(MakeError(ErrorCode::kUnavailable, ErrnoError("send", "peer auth", errno).message()));
        break;
      }
      OnSent(static_cast<size_t>(n));
      continue;
    }
    uint8_t buffer[kResponseBytes];
    const ssize_t n = ::recv(fd, buffer, input_wanted(), MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return Want::kRead;
      Fail(MakeError(ErrorCode::kUnavailable, ErrnoError("recv", "peer auth", errno).message()));
      break;
    }
    if (n == 0) {
      OnEof();
      break;
    }
    OnReceived(absl::MakeConstSpan(buffer, static_cast<size_t>(n)));
  }
  return Want::kNothing;
}

}  // namespace rplasma::auth
