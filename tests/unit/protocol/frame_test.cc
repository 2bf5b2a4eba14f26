#include "protocol/frame.h"

#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <thread>

#include "absl/time/clock.h"
#include <gtest/gtest.h>

#include "protocol/base/unique_fd.h"
#include "tests/support/status_matchers.h"
#include "tests/support/wait_for.h"

namespace rplasma {
namespace {

using ::rplasma::testing::HasErrorCode;

TEST(FrameTest, EncodedFrameParsesBack) {
  std::string frame = EncodeFrame("hello");
  ASSERT_EQ(frame.size(), kFrameHeaderBytes + 5);
  ASSERT_OK_AND_ASSIGN(uint32_t length, ParseFrameHeader(frame.data(), kDefaultMaxFrameBytes));
  EXPECT_EQ(length, 5u);
}

TEST(FrameTest, LengthAboveCapIsRejectedBeforeAllocation) {
  char header[kFrameHeaderBytes];
  EncodeFrameHeader(0xffffffffu, header);
  EXPECT_THAT(ParseFrameHeader(header, kDefaultMaxFrameBytes), HasErrorCode(ErrorCode::kProtocolError));
}

TEST(FrameTest, WrongVersionAndReservedBitsAreRejected) {
  char header[kFrameHeaderBytes];
  EncodeFrameHeader(10, header);
  header[4] = 7;
  EXPECT_THAT(ParseFrameHeader(header, kDefaultMaxFrameBytes), HasErrorCode(ErrorCode::kProtocolError));
  EncodeFrameHeader(10, header);
  header[7] = 1;
  EXPECT_THAT(ParseFrameHeader(header, kDefaultMaxFrameBytes), HasErrorCode(ErrorCode::kProtocolError));
}

TEST(FrameTest, ZeroLengthIsRejected) {
  char header[kFrameHeaderBytes];
  EncodeFrameHeader(0, header);
  EXPECT_THAT(ParseFrameHeader(header, kDefaultMaxFrameBytes), HasErrorCode(ErrorCode::kProtocolError));
}

TEST(FrameReaderTest, AssemblesFramesFedByteByByte) {
  FrameReader reader;
  std::string stream = EncodeFrame("first") + EncodeFrame("second");
  std::vector<std::string> got;
  for (char c : stream) {
    reader.Append(absl::string_view(&c, 1));
    ASSERT_OK_AND_ASSIGN(auto next, reader.Next());
    if (next) got.push_back(*next);
  }
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0], "first");
  EXPECT_EQ(got[1], "second");
  EXPECT_FALSE(reader.HasPartialFrame());
}

TEST(FrameReaderTest, BadHeaderIsAnError) {
  FrameReader reader(64);
  char header[kFrameHeaderBytes];
  EncodeFrameHeader(65, header);
  reader.Append(absl::string_view(header, sizeof(header)));
  EXPECT_THAT(reader.Next(), HasErrorCode(ErrorCode::kProtocolError));
}

TEST(FrameTest, ReadFrameOverSocketPairAndEofIsUnavailable) {
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  UniqueFd a(sv[0]), b(sv[1]);
  ASSERT_OK(WriteFrame(a.get(), "payload"));
  ASSERT_OK_AND_ASSIGN(std::string got, ReadFrame(b.get()));
  EXPECT_EQ(got, "payload");
  a.reset();
  EXPECT_THAT(ReadFrame(b.get()), HasErrorCode(ErrorCode::kUnavailable));
}

TEST(FrameTest, ReadFrameHonoursDeadline) {
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  UniqueFd a(sv[0]), b(sv[1]);
  EXPECT_THAT(ReadFrame(b.get(), kDefaultMaxFrameBytes, absl::Now() + absl::Milliseconds(20)),
              HasErrorCode(ErrorCode::kDeadlineExceeded));
}

TEST(FrameTest, ReadFrameWithADeadlineWaitsForBytesSentInPartsAndReadsPipes) {
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  UniqueFd a(sv[0]), b(sv[1]);
  const std::string frame = EncodeFrame("in two parts");
  // Part of the header now, the rest once the reader has read that: it finds the first part at once
  // and polls for the rest.
  ASSERT_EQ(::write(a.get(), frame.data(), 3), 3);
  std::thread rest([&] {
    // Once the reader has taken the first part (nothing left unread on its end), it waits for more.
    const bool taken = rplasma::testing::WaitFor(
        [&] {
          int unread = -1;
          return ::ioctl(b.get(), FIONREAD, &unread) == 0 && unread == 0;
        },
        absl::Seconds(10));
    EXPECT_TRUE(taken) << "the reader never read the first part";
    ASSERT_EQ(::write(a.get(), frame.data() + 3, frame.size() - 3), static_cast<ssize_t>(frame.size() - 3));
  });
  absl::StatusOr<std::string> got = ReadFrame(b.get(), kDefaultMaxFrameBytes, absl::Now() + absl::Seconds(10));
  rest.join();
  ASSERT_OK(got);
  EXPECT_EQ(*got, "in two parts");

  // Not a socket: the same read through poll + read.
  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  UniqueFd in(p[0]), out(p[1]);
  ASSERT_OK(WriteFrame(out.get(), "through a pipe"));
  ASSERT_OK_AND_ASSIGN(std::string piped, ReadFrame(in.get(), kDefaultMaxFrameBytes, absl::Now() + absl::Seconds(10)));
  EXPECT_EQ(piped, "through a pipe");
  EXPECT_THAT(ReadFrame(in.get(), kDefaultMaxFrameBytes, absl::Now() + absl::Milliseconds(20)),
              HasErrorCode(ErrorCode::kDeadlineExceeded));
}

}  // namespace
}  // namespace rplasma
