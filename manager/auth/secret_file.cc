#include "manager/auth/secret_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "absl/utility/utility.h"

#include "protocol/base/status.h"
#include "protocol/base/unique_fd.h"

namespace rplasma::auth {
namespace {

constexpr size_t kMaxSecretFileBytes = 64 << 10;  // a secret is a line, not a file to slurp

absl::Status SecretFileError(ErrorCode code, const std::string& path, absl::string_view what) {
  return MakeError(code, absl::StrFormat("secret file %s: %s", path, what));
}

absl::Status SecretFileErrno(absl::string_view op, const std::string& path, int err) {
  return MakeError(ErrorCode::kInvalidArgument, ErrnoError(op, absl::StrCat("secret file ", path), err).message());
}

}  // namespace

absl::StatusOr<std::string> ReadSecretFile(const std::string& path) {
  // O_NONBLOCK: a FIFO in place of the file must not hang the open; fstat then refuses it.
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
  if (!fd) return SecretFileErrno("open", path, errno);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) {
    return SecretFileErrno("fstat", path, errno);
  }
  if (!S_ISREG(st.st_mode)) return SecretFileError(ErrorCode::kInvalidArgument, path, "not a regular file");
  if ((st.st_mode & 077) != 0) {
    return SecretFileError(
        ErrorCode::kPermissionDenied, path,
        absl::StrFormat("mode %04o lets group or other access it; chmod 600 it", st.st_mode & 07777));
  }
  if (st.st_size > static_cast<off_t>(kMaxSecretFileBytes)) {
    return SecretFileError(
        ErrorCode::kInvalidArgument, path,
        absl::StrFormat("%d bytes; a secret file holds at most %d", st.st_size, kMaxSecretFileBytes));
  }
  std::string contents;
  char buffer[4096];
  while (true) {
    ssize_t n = ::read(fd.get(), buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return SecretFileErrno("read", path, errno);
    if (n == 0) break;
    contents.append(buffer, static_cast<size_t>(n));
    if (contents.size() > kMaxSecretFileBytes) {
      return SecretFileError(ErrorCode::kInvalidArgument, path, "grew past the maximum size while being read");
    }
  }
  const absl::string_view secret = absl::StripTrailingAsciiWhitespace(contents);
  if (secret.size() < kMinSecretBytes) {
    return SecretFileError(
        ErrorCode::kInvalidArgument, path,
        absl::StrFormat("the secret is %d bytes; at least %d are required", secret.size(), kMinSecretBytes));
  }
  // Built in place: moving a local std::string into the StatusOr draws gcc 12's false
  // -Warray-bounds on the short-string copy at -O2 (seen with the libraries' precompiled header).
  return absl::StatusOr<std::string>(absl::in_place, secret);
}

}  // namespace rplasma::auth
