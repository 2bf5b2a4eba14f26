#include "manager/auth/peer_auth.h"

#include <sys/socket.h>

#include <algorithm>
#include <cstring>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "protocol/base/unique_fd.h"
#include "tests/support/status_matchers.h"
#include "tests/unit/auth/socket_pair.h"

namespace rplasma::auth {
namespace {

using ::rplasma::testing::HasErrorCode;
using ::rplasma::testing::IsOk;

absl::Time Soon() { return absl::Now() + absl::Seconds(5); }

struct Outcome {
  absl::Status client;
  absl::Status server;
};

Outcome RunHandshake(absl::string_view client_secret, absl::string_view server_secret) {
  SocketPair pair = MakeSocketPair();
  std::string server_copy(server_secret);
  auto server = std::async(std::launch::async, [&pair, server_copy] {
    absl::Status s = AuthenticateAsServer(pair.server.get(), server_copy, Soon());
    pair.server.reset();  // the transport closes on failure; the client must see it
    return s;
  });
  absl::Status client = AuthenticateAsClient(pair.client.get(), client_secret, Soon());
  if (!client.ok()) pair.client.reset();  // as the transport does: the server must not wait for us
  return {client, server.get()};
}

void SendBytes(int fd, const std::vector<uint8_t>& bytes) {
  ASSERT_EQ(::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL), static_cast<ssize_t>(bytes.size()));
}

std::vector<uint8_t> RecvBytes(int fd, size_t n) {
  std::vector<uint8_t> out(n);
  size_t got = 0;
  while (got < n) {
    ssize_t r = ::recv(fd, out.data() + got, n - got, 0);
    if (r <= 0) break;
    got += static_cast<size_t>(r);
  }
  out.resize(got);
  return out;
}

std::vector<uint8_t> Prefix(uint16_t last = 0) {
  return {0x52,
          0x50,
          0x41,
          0x55,
          kAuthVersion & 0xff,
          kAuthVersion >> 8,
          static_cast<uint8_t>(last),
          static_cast<uint8_t>(last >> 8)};
}

TEST(PeerAuthTest, MacIsHmacSha256OfLabelAndBothInputs) {
  std::vector<uint8_t> a = {1, 2, 3};
  std::vector<uint8_t> b = {4, 5};
  Mac m1 = ComputeMac("secret", "label", a, b);
  EXPECT_TRUE(MacEquals(m1, ComputeMac("secret", "label", a, b)));
  EXPECT_FALSE(MacEquals(m1, ComputeMac("secret2", "label", a, b)));
  EXPECT_FALSE(MacEquals(m1, ComputeMac("secret", "label2", a, b)));
  EXPECT_FALSE(MacEquals(m1, ComputeMac("secret", "label", b, a)));
  // RFC 4231 test case 2: key "Jefe", data "what do ya want for nothing?".
  std::string data = "what do ya want for nothing?";
  Mac rfc = ComputeMac("Jefe", "what do ya ",
                       absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>(data.data()) + 11, 6),
                       absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>(data.data()) + 17, 11));
  const uint8_t expected[kMacBytes] = {0x5b, 0xdc, 0xc1, 0x46, 0xbf, 0x60, 0x75, 0x4e, 0x6a, 0x04, 0x24,
                                       0x26, 0x08, 0x95, 0x75, 0xc7, 0x5a, 0x00, 0x3f, 0x08, 0x9d, 0x27,
                                       0x39, 0x83, 0x9d, 0xec, 0x58, 0xb9, 0x64, 0xec, 0x38, 0x43};
  EXPECT_EQ(std::memcmp(rfc.data(), expected, kMacBytes), 0);
}

TEST(PeerAuthTest, RandomNoncesDiffer) { EXPECT_NE(RandomNonce(), RandomNonce()); }

TEST(PeerAuthTest, MatchingSecretsAuthenticateBothSides) {
  Outcome o = RunHandshake("s3cret", "s3cret");
  EXPECT_THAT(o.client, IsOk());
  EXPECT_THAT(o.server, IsOk());
}

TEST(PeerAuthTest, WrongSecretIsRefusedOnBothSides) {
  Outcome o = RunHandshake("alpha", "beta");
  EXPECT_THAT(o.client, HasErrorCode(ErrorCode::kPermissionDenied));
  EXPECT_THAT(o.server, HasErrorCode(ErrorCode::kPermissionDenied));
}

TEST(PeerAuthTest, EmptySecretRefusesOnEitherSide) {
  Outcome o1 = RunHandshake("", "x");
  EXPECT_THAT(o1.client, HasErrorCode(ErrorCode::kPermissionDenied));
  EXPECT_FALSE(o1.server.ok());
  Outcome o2 = RunHandshake("x", "");
  EXPECT_FALSE(o2.client.ok());
  EXPECT_THAT(o2.server, HasErrorCode(ErrorCode::kPermissionDenied));
}

// An attacker without the secret plays client: it reflects the server's challenge nonce and
// sends back a MAC it saw the server produce (server-label MAC), or replays an old client proof.
TEST(PeerAuthTest, ReflectedServerMacIsRefused) {
  SocketPair pair = MakeSocketPair();
  auto server = std::async(std::launch::async, [&] { return AuthenticateAsServer(pair.server.get(), "k", Soon()); });
  std::vector<uint8_t> challenge = RecvBytes(pair.client.get(), kChallengeBytes);
  ASSERT_EQ(challenge.size(), kChallengeBytes);
  Nonce ns;
  std::memcpy(ns.data(), challenge.data() + 8, kNonceBytes);
  // Best an attacker can get: a server-direction MAC over these nonces (as if reflected from
  // another session where roles were swapped). It must not pass as a client proof.
  Nonce nc = ns;
  Mac reflected = ComputeMac("k", kServerLabel, ns, nc);
  std::vector<uint8_t> response = Prefix();
  response.insert(response.end(), nc.begin(), nc.end());
  response.insert(response.end(), reflected.begin(), reflected.end());
  SendBytes(pair.client.get(), response);
  EXPECT_THAT(server.get(), HasErrorCode(ErrorCode::kPermissionDenied));
  std::vector<uint8_t> verdict = RecvBytes(pair.client.get(), kVerdictBytes);
  ASSERT_EQ(verdict.size(), kVerdictBytes);
  EXPECT_EQ(verdict[6], 1) << "the verdict says denied";
  EXPECT_TRUE(std::all_of(verdict.begin() + 8, verdict.end(), [](uint8_t b) { return b == 0; }))
      << "a refused client learns no server MAC";
}

TEST(PeerAuthTest, ReplayedClientProofFromAnEarlierSessionIsRefused) {
  // Record a genuine session's client response.
  std::vector<uint8_t> recorded;
  {
    SocketPair pair = MakeSocketPair();
    auto client = std::async(std::launch::async, [&] { return AuthenticateAsClient(pair.client.get(), "k", Soon()); });
    Nonce ns = RandomNonce();
    std::vector<uint8_t> challenge = Prefix();
    challenge.insert(challenge.end(), ns.begin(), ns.end());
    SendBytes(pair.server.get(), challenge);
    recorded = RecvBytes(pair.server.get(), kResponseBytes);
    ASSERT_EQ(recorded.size(), kResponseBytes);
    pair.server.reset();
    EXPECT_FALSE(client.get().ok());
  }
  // Replay it against a real server: its fresh nonce makes the proof worthless.
  SocketPair pair = MakeSocketPair();
  auto server = std::async(std::launch::async, [&] { return AuthenticateAsServer(pair.server.get(), "k", Soon()); });
  ASSERT_EQ(RecvBytes(pair.client.get(), kChallengeBytes).size(), kChallengeBytes);
  SendBytes(pair.client.get(), recorded);
  EXPECT_THAT(server.get(), HasErrorCode(ErrorCode::kPermissionDenied));
}

// A fake server that does not know the secret replies "ok" with a made-up MAC.
TEST(PeerAuthTest, ClientRefusesAServerThatCannotProveTheSecret) {
  SocketPair pair = MakeSocketPair();
  auto client = std::async(std::launch::async, [&] { return AuthenticateAsClient(pair.client.get(), "k", Soon()); });
  Nonce ns = RandomNonce();
  std::vector<uint8_t> challenge = Prefix();
  challenge.insert(challenge.end(), ns.begin(), ns.end());
  SendBytes(pair.server.get(), challenge);
  std::vector<uint8_t> response = RecvBytes(pair.server.get(), kResponseBytes);
  ASSERT_EQ(response.size(), kResponseBytes);
  // Reflect the client's own MAC back as the server proof.
  std::vector<uint8_t> verdict = Prefix(0);
  verdict.insert(verdict.end(), response.begin() + 8 + kNonceBytes, response.end());
  SendBytes(pair.server.get(), verdict);
  EXPECT_THAT(client.get(), HasErrorCode(ErrorCode::kPermissionDenied));
}

TEST(PeerAuthTest, GarbageInsteadOfAResponseIsAProtocolError) {
  SocketPair pair = MakeSocketPair();
  auto server = std::async(std::launch::async, [&] { return AuthenticateAsServer(pair.server.get(), "k", Soon()); });
  ASSERT_EQ(RecvBytes(pair.client.get(), kChallengeBytes).size(), kChallengeBytes);
  SendBytes(pair.client.get(), std::vector<uint8_t>(kResponseBytes, 0xAB));
  EXPECT_THAT(server.get(), HasErrorCode(ErrorCode::kProtocolError));
}

TEST(PeerAuthTest, WrongVersionIsAProtocolError) {
  SocketPair pair = MakeSocketPair();
  auto client = std::async(std::launch::async, [&] { return AuthenticateAsClient(pair.client.get(), "k", Soon()); });
  std::vector<uint8_t> challenge = Prefix();
  challenge[4] = 99;
  challenge.resize(kChallengeBytes, 0);
  SendBytes(pair.server.get(), challenge);
  EXPECT_THAT(client.get(), HasErrorCode(ErrorCode::kProtocolError));
}

TEST(PeerAuthTest, ShortMessageThenCloseIsUnavailable) {
  SocketPair pair = MakeSocketPair();
  auto server = std::async(std::launch::async, [&] { return AuthenticateAsServer(pair.server.get(), "k", Soon()); });
  ASSERT_EQ(RecvBytes(pair.client.get(), kChallengeBytes).size(), kChallengeBytes);
  SendBytes(pair.client.get(), Prefix());
  pair.client.reset();
  EXPECT_THAT(server.get(), HasErrorCode(ErrorCode::kUnavailable));
}

TEST(PeerAuthTest, SilentPeerHitsTheDeadline) {
  SocketPair pair = MakeSocketPair();
  absl::Time start = absl::Now();
  absl::Status s = AuthenticateAsClient(pair.client.get(), "k", start + absl::Milliseconds(200));
  absl::Duration took = absl::Now() - start;
  EXPECT_THAT(s, HasErrorCode(ErrorCode::kDeadlineExceeded));
  EXPECT_GE(took, absl::Milliseconds(190));
  EXPECT_LT(took, absl::Seconds(3));

  start = absl::Now();
  s = AuthenticateAsServer(pair.server.get(), "k", start + absl::Milliseconds(200));
  EXPECT_THAT(s, HasErrorCode(ErrorCode::kDeadlineExceeded));
  EXPECT_LT(absl::Now() - start, absl::Seconds(3));
}

TEST(PeerAuthTest, PastDeadlineFailsImmediately) {
  SocketPair pair = MakeSocketPair();
  EXPECT_THAT(AuthenticateAsServer(pair.server.get(), "k", absl::Now() - absl::Seconds(1)),
              HasErrorCode(ErrorCode::kDeadlineExceeded));
}

}  // namespace
}  // namespace rplasma::auth
