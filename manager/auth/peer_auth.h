// Peer authentication: a mutual HMAC-SHA256 challenge-response over a shared secret.
//
// Every manager-to-manager connection (tcp, and verbs over its TCP side channel) runs this before
// any request is answered, any QP is created or any rkey is disclosed. Both sides prove knowledge
// of the secret without sending it; fresh random nonces from both sides make every proof unique
// to one connection, so a recorded proof cannot be replayed.
//
// Handshake (all messages fixed-size, little-endian; "magic" = "RPAU", version = kAuthVersion):
//
//   server -> client  Challenge  magic u32 | version u16 | reserved u16 = 0 | Ns[16]        24 B
//   client -> server  Response   magic u32 | version u16 | reserved u16 = 0 | Nc[16]
//                                | Mc = HMAC(secret, kClientLabel || Ns || Nc)[32]           56 B
//   server -> client  Verdict    magic u32 | version u16 | result u16 (0 ok, 1 denied)
//                                | Ms = HMAC(secret, kServerLabel || Nc || Ns)[32]            40 B
//                                  (Ms is all-zero when denied; the server then closes)
//
// The two directions use distinct labels and argument orders, so a MAC seen in one direction is
// never valid in the other (a reflected proof fails). The server checks Mc before it sends its own
// proof: a peer that does not know the secret learns nothing but a refusal. The client accepts
// only after Ms checks out. MACs are compared in constant time. An empty secret refuses on both
// sides without sending anything.
//
// AuthenticateAsServer blocks its thread for one handshake; a server facing the network runs
// ServerHandshake (server_handshake.h) in a HandshakePool instead, which holds no thread per peer.
//
// Thread-safety: all functions are reentrant; each handshake owns its fd for its duration.
#ifndef RPLASMA_MANAGER_AUTH_PEER_AUTH_H_
#define RPLASMA_MANAGER_AUTH_PEER_AUTH_H_

#include <array>
#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"

namespace rplasma::auth {

inline constexpr size_t kNonceBytes = 16;
inline constexpr size_t kMacBytes = 32;
using Nonce = std::array<uint8_t, kNonceBytes>;
using Mac = std::array<uint8_t, kMacBytes>;

inline constexpr uint32_t kAuthMagic = 0x55415052;  // "RPAU" little-endian
inline constexpr uint16_t kAuthVersion = 1;
inline constexpr absl::string_view kClientLabel = "rplasma-peer-auth-v1 client proof";
inline constexpr absl::string_view kServerLabel = "rplasma-peer-auth-v1 server proof";

// Message sizes of the handshake above.
inline constexpr size_t kChallengeBytes = 8 + kNonceBytes;
inline constexpr size_t kResponseBytes = 8 + kNonceBytes + kMacBytes;
inline constexpr size_t kVerdictBytes = 8 + kMacBytes;

// Cryptographically random bytes (OpenSSL RAND_bytes). CHECK-fails only if the OS RNG is broken.
Nonce RandomNonce();

// HMAC-SHA256(secret, label || a || b).
Mac ComputeMac(absl::string_view secret, absl::string_view label, absl::Span<const uint8_t> a,
               absl::Span<const uint8_t> b);

// Pays OpenSSL's first-use costs now: loading its provider and seeding its random generator take a
// few ms natively and 60-90 ms in an emulated guest, which the process's first handshake would
// otherwise spend inside its peer's handshake deadline. Idempotent; HandshakePool::Create calls it.
void WarmUpCrypto();

// Constant-time equality (CRYPTO_memcmp).
bool MacEquals(const Mac& x, const Mac& y);

// Pure codecs of the messages above (no I/O), shared by both sides and by ServerHandshake.
void EncodeChallenge(const Nonce& server_nonce, uint8_t out[kChallengeBytes]);
// kProtocolError on a bad magic, version or reserved field.
absl::Status ParseResponse(const uint8_t in[kResponseBytes], Nonce* client_nonce, Mac* client_mac);
// `server_mac` is sent only when `ok`; a refusal carries zeros.
void EncodeVerdict(bool ok, const Mac& server_mac, uint8_t out[kVerdictBytes]);

// Mutual challenge-response on a connected stream fd (blocking or not: I/O is poll-based).
// Returns OK once both sides proved the secret; kPermissionDenied on an empty secret or a wrong
// MAC; kProtocolError on a malformed message; kUnavailable on I/O errors or EOF;
// kDeadlineExceeded once `deadline` passes. On error the caller must close the fd.
absl::Status AuthenticateAsClient(int fd, absl::string_view secret, absl::Time deadline);
absl::Status AuthenticateAsServer(int fd, absl::string_view secret, absl::Time deadline);

}  // namespace rplasma::auth

#endif  // RPLASMA_MANAGER_AUTH_PEER_AUTH_H_
