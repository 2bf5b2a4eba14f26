#include "manager/auth/secret_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "absl/strings/str_cat.h"
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "bench-mpi/launch/child_process.h"
#include "protocol/base/unique_fd.h"
#include "tests/support/status_matchers.h"

namespace rplasma::auth {
namespace {

using ::rplasma::testing::HasErrorCode;
using ::testing::HasSubstr;

// Writes `contents` to `path`, created with `mode` (chmod'ed after, so the umask cannot narrow it).
void WriteFile(const std::string& path, const std::string& contents, mode_t mode) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  ASSERT_TRUE(fd) << path;
  ASSERT_EQ(::write(fd.get(), contents.data(), contents.size()), static_cast<ssize_t>(contents.size()));
  ASSERT_EQ(::fchmod(fd.get(), mode), 0);
}

TEST(SecretFileTest, PrivateFileWithLongSecretIsReadWithoutTrailingNewline) {
  bench::ScratchDir dir = bench::ScratchDir::CreateOrDie();
  const std::string path = dir.Join("secret");
  WriteFile(path, "0123456789abcdef0123\n", 0600);
  absl::StatusOr<std::string> secret = ReadSecretFile(path);
  ASSERT_TRUE(secret.ok()) << secret.status();
  EXPECT_EQ(*secret, "0123456789abcdef0123");
}

TEST(SecretFileTest, ReadOnlyOwnerModeIsAccepted) {
  bench::ScratchDir dir = bench::ScratchDir::CreateOrDie();
  const std::string path = dir.Join("secret");
  WriteFile(path, std::string(kMinSecretBytes, 'k'), 0400);
  absl::StatusOr<std::string> secret = ReadSecretFile(path);
  ASSERT_TRUE(secret.ok()) << secret.status();
  EXPECT_EQ(secret->size(), kMinSecretBytes);
}

TEST(SecretFileTest, OneByteSecretIsRefusedNamingFileAndMinimum) {
  bench::ScratchDir dir = bench::ScratchDir::CreateOrDie();
  const std::string path = dir.Join("secret");
  WriteFile(path, "x\n", 0600);
  absl::StatusOr<std::string> secret = ReadSecretFile(path);
  EXPECT_THAT(secret.status(), HasErrorCode(ErrorCode::kInvalidArgument));
  EXPECT_THAT(std::string(secret.status().message()), HasSubstr(path));
  EXPECT_THAT(std::string(secret.status().message()), HasSubstr("at least 16"));
}

TEST(SecretFileTest, SecretOneByteShortOfMinimumIsRefused) {
  bench::ScratchDir dir = bench::ScratchDir::CreateOrDie();
  const std::string path = dir.Join("secret");
  // Trailing whitespace does not count towards the length.
  WriteFile(path, absl::StrCat(std::string(kMinSecretBytes - 1, 'k'), " \n\n"), 0600);
  EXPECT_THAT(ReadSecretFile(path).status(), HasErrorCode(ErrorCode::kInvalidArgument));
}

TEST(SecretFileTest, EmptyFileIsRefused) {
  bench::ScratchDir dir = bench::ScratchDir::CreateOrDie();
  const std::string path = dir.Join("secret");
  WriteFile(path, "", 0600);
  EXPECT_THAT(ReadSecretFile(path).status(), HasErrorCode(ErrorCode::kInvalidArgument));
}

TEST(SecretFileTest, WorldReadableFileIsRefusedNamingFileAndMode) {
  bench::ScratchDir dir = bench::ScratchDir::CreateOrDie();
  const std::string path = dir.Join("secret");
  WriteFile(path, std::string(32, 'k'), 0644);
  absl::StatusOr<std::string> secret = ReadSecretFile(path);
  EXPECT_THAT(secret.status(), HasErrorCode(ErrorCode::kPermissionDenied));
  EXPECT_THAT(std::string(secret.status().message()), HasSubstr(path));
  EXPECT_THAT(std::string(secret.status().message()), HasSubstr("0644"));
}

TEST(SecretFileTest, GroupReadableOrAnyoneWritableFileIsRefused) {
  bench::ScratchDir dir = bench::ScratchDir::CreateOrDie();
  const std::string path = dir.Join("secret");
  for (mode_t mode : {0640, 0620, 0602, 0604, 0610, 0601}) {
    WriteFile(path, std::string(32, 'k'), mode);
    EXPECT_THAT(ReadSecretFile(path).status(), HasErrorCode(ErrorCode::kPermissionDenied)) << std::oct << mode;
  }
}

TEST(SecretFileTest, MissingFileIsRefusedNamingIt) {
  bench::ScratchDir dir = bench::ScratchDir::CreateOrDie();
  const std::string path = dir.Join("absent");
  absl::StatusOr<std::string> secret = ReadSecretFile(path);
  EXPECT_THAT(secret.status(), HasErrorCode(ErrorCode::kInvalidArgument));
  EXPECT_THAT(std::string(secret.status().message()), HasSubstr(path));
}

TEST(SecretFileTest, DirectoryOrFifoIsRefusedWithoutHanging) {
  bench::ScratchDir dir = bench::ScratchDir::CreateOrDie();
  EXPECT_THAT(ReadSecretFile(dir.path()).status(), HasErrorCode(ErrorCode::kInvalidArgument));
  const std::string fifo = dir.Join("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_THAT(ReadSecretFile(fifo).status(), HasErrorCode(ErrorCode::kInvalidArgument));
}

}  // namespace
}  // namespace rplasma::auth
