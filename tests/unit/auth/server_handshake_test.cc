// ServerHandshake driven by hand (any chunking, hostile bytes) and over socketpairs against the
// real client, byte by byte.
#include "manager/auth/server_handshake.h"

#include <sys/socket.h>

#include <cstring>
#include <future>
#include <string>
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
using State = ServerHandshake::State;

constexpr char kSecret[] = "server-handshake-test-secret";

// A well-formed response to `challenge` under `secret`.
std::vector<uint8_t> ResponseTo(absl::Span<const uint8_t> challenge, absl::string_view secret, Nonce client_nonce) {
  Nonce server_nonce;
  std::memcpy(server_nonce.data(), challenge.data() + 8, kNonceBytes);
  Mac mac = ComputeMac(secret, kClientLabel, server_nonce, client_nonce);
  std::vector<uint8_t> out(kResponseBytes);
  // The challenge's first 8 bytes are the prefix a response carries too.
  std::memcpy(out.data(), challenge.data(), 8);
  std::memcpy(out.data() + 8, client_nonce.data(), kNonceBytes);
  std::memcpy(out.data() + 8 + kNonceBytes, mac.data(), kMacBytes);
  return out;
}

// Drains the whole output `chunk` bytes at a time (partial writes).
std::vector<uint8_t> TakeOutput(ServerHandshake& hs, size_t chunk) {
  std::vector<uint8_t> sent;
  while (!hs.output().empty()) {
    absl::Span<const uint8_t> out = hs.output();
    const size_t n = std::min(chunk, out.size());
    sent.insert(sent.end(), out.begin(), out.begin() + n);
    hs.OnSent(n);
  }
  return sent;
}

void Feed(ServerHandshake& hs, const std::vector<uint8_t>& bytes, size_t chunk) {
  for (size_t at = 0; at < bytes.size() && hs.input_wanted() > 0; at += chunk) {
    const size_t n = std::min({chunk, bytes.size() - at, hs.input_wanted()});
    hs.OnReceived(absl::MakeConstSpan(bytes.data() + at, n));
  }
}

TEST(ServerHandshakeTest, RightSecretAuthenticatesWhateverTheChunking) {
  for (size_t chunk : {1, 3, 7, 64}) {
    ServerHandshake hs(kSecret);
    EXPECT_EQ(hs.state(), State::kSendingChallenge);
    EXPECT_EQ(hs.input_wanted(), 0u) << "nothing is read before the challenge is out";
    std::vector<uint8_t> challenge = TakeOutput(hs, chunk);
    ASSERT_EQ(challenge.size(), kChallengeBytes);
    ASSERT_EQ(hs.state(), State::kReadingResponse);
    Nonce client_nonce = RandomNonce();
    Feed(hs, ResponseTo(challenge, kSecret, client_nonce), chunk);
    ASSERT_EQ(hs.state(), State::kSendingVerdict);
    std::vector<uint8_t> verdict = TakeOutput(hs, chunk);
    ASSERT_EQ(verdict.size(), kVerdictBytes);
    EXPECT_EQ(hs.state(), State::kAuthenticated);
    EXPECT_THAT(hs.status(), IsOk());
    // The verdict proves the server: its MAC is the server label's over (Nc, Ns).
    Nonce server_nonce;
    std::memcpy(server_nonce.data(), challenge.data() + 8, kNonceBytes);
    Mac expected = ComputeMac(kSecret, kServerLabel, client_nonce, server_nonce);
    EXPECT_EQ(std::memcmp(verdict.data() + 8, expected.data(), kMacBytes), 0);
    EXPECT_EQ(verdict[6] | (verdict[7] << 8), 0) << "result ok";
  }
}

TEST(ServerHandshakeTest, WrongSecretGetsARefusalWithoutTheServersProof) {
  ServerHandshake hs(kSecret);
  std::vector<uint8_t> challenge = TakeOutput(hs, 64);
  Feed(hs, ResponseTo(challenge, "some-other-secret-entirely", RandomNonce()), 64);
  ASSERT_EQ(hs.state(), State::kSendingVerdict);
  std::vector<uint8_t> verdict = TakeOutput(hs, 5);
  EXPECT_EQ(hs.state(), State::kFailed);
  EXPECT_THAT(hs.status(), HasErrorCode(ErrorCode::kPermissionDenied));
  EXPECT_EQ(verdict[6], 1) << "result denied";
  EXPECT_EQ(std::vector<uint8_t>(verdict.begin() + 8, verdict.end()), std::vector<uint8_t>(kMacBytes, 0));
}

TEST(ServerHandshakeTest, ARefusalStaysPermissionDeniedEvenIfItsVerdictCannotBeSent) {
  ServerHandshake hs(kSecret);
  std::vector<uint8_t> challenge = TakeOutput(hs, 64);
  Feed(hs, ResponseTo(challenge, "some-other-secret-entirely", RandomNonce()), 64);
  hs.Fail(MakeError(ErrorCode::kDeadlineExceeded, "peer does not read"));
  EXPECT_EQ(hs.state(), State::kFailed);
  EXPECT_THAT(hs.status(), HasErrorCode(ErrorCode::kPermissionDenied));
}

TEST(ServerHandshakeTest, HostileResponsesFailAsProtocolErrorsWithoutAVerdict) {
  std::vector<std::vector<uint8_t>> hostile;
  hostile.push_back(std::vector<uint8_t>(kResponseBytes, 0x41));  // bad magic
  hostile.push_back(std::vector<uint8_t>(kResponseBytes, 0x00));
  std::vector<uint8_t> bad_version(kResponseBytes, 0);
  bad_version[0] = 'R', bad_version[1] = 'P', bad_version[2] = 'A', bad_version[3] = 'U', bad_version[4] = 9;
  hostile.push_back(bad_version);
  std::vector<uint8_t> reserved = bad_version;
  reserved[4] = kAuthVersion, reserved[6] = 1;
  hostile.push_back(reserved);
  for (const std::vector<uint8_t>& bytes : hostile) {
    ServerHandshake hs(kSecret);
    TakeOutput(hs, 64);
    Feed(hs, bytes, 13);
    EXPECT_EQ(hs.state(), State::kFailed);
    EXPECT_THAT(hs.status(), HasErrorCode(ErrorCode::kProtocolError));
    EXPECT_TRUE(hs.output().empty()) << "a malformed response gets no verdict";
    EXPECT_EQ(hs.input_wanted(), 0u);
  }
}

TEST(ServerHandshakeTest, EofBeforeTheResponseIsCompleteFails) {
  ServerHandshake hs(kSecret);
  std::vector<uint8_t> challenge = TakeOutput(hs, 64);
  std::vector<uint8_t> response = ResponseTo(challenge, kSecret, RandomNonce());
  response.resize(kResponseBytes - 1);
  Feed(hs, response, 64);
  EXPECT_EQ(hs.input_wanted(), 1u);
  hs.OnEof();
  EXPECT_EQ(hs.state(), State::kFailed);
  EXPECT_THAT(hs.status(), HasErrorCode(ErrorCode::kUnavailable));
}

TEST(ServerHandshakeTest, EmptySecretRefusesBeforeSendingAnything) {
  ServerHandshake hs("");
  EXPECT_EQ(hs.state(), State::kFailed);
  EXPECT_THAT(hs.status(), HasErrorCode(ErrorCode::kPermissionDenied));
  EXPECT_TRUE(hs.output().empty());
}

TEST(ServerHandshakeTest, AdvanceOverASocketNeverReadsPastTheResponse) {
  int fds[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, fds), 0);
  UniqueFd server(fds[0]), client(fds[1]);
  ServerHandshake hs(kSecret);
  EXPECT_EQ(hs.Advance(server.get()), ServerHandshake::Want::kRead) << "challenge sent, waiting for the response";
  uint8_t challenge[kChallengeBytes];
  ASSERT_EQ(::recv(client.get(), challenge, sizeof(challenge), 0), static_cast<ssize_t>(sizeof(challenge)));
  std::vector<uint8_t> response = ResponseTo(challenge, kSecret, RandomNonce());
  // Half the response: the machine waits for more.
  ASSERT_EQ(::send(client.get(), response.data(), 20, 0), 20);
  EXPECT_EQ(hs.Advance(server.get()), ServerHandshake::Want::kRead);
  EXPECT_EQ(hs.input_wanted(), kResponseBytes - 20);
  // The rest, plus the first bytes of a request that must stay in the socket.
  std::vector<uint8_t> rest(response.begin() + 20, response.end());
  rest.insert(rest.end(), {'N', 'E', 'X', 'T'});
  ASSERT_EQ(::send(client.get(), rest.data(), rest.size(), 0), static_cast<ssize_t>(rest.size()));
  EXPECT_EQ(hs.Advance(server.get()), ServerHandshake::Want::kNothing);
  EXPECT_EQ(hs.state(), State::kAuthenticated);
  char next[8] = {};
  ASSERT_EQ(::recv(server.get(), next, sizeof(next), MSG_DONTWAIT), 4);
  EXPECT_EQ(std::string(next, 4), "NEXT");
}

TEST(ServerHandshakeTest, AuthenticateAsServerRunsTheMachineAgainstTheRealClient) {
  SocketPair pair = MakeSocketPair();
  ASSERT_GE(pair.client.get(), 0);
  auto client_side = std::async(std::launch::async, [&] {
    return AuthenticateAsClient(pair.client.get(), kSecret, absl::Now() + absl::Seconds(5));
  });
  EXPECT_THAT(AuthenticateAsServer(pair.server.get(), kSecret, absl::Now() + absl::Seconds(5)), IsOk());
  EXPECT_THAT(client_side.get(), IsOk());
}

}  // namespace
}  // namespace rplasma::auth
