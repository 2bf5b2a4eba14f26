// Reading the cluster's shared peer secret from a file, with the checks ssh applies to its keys.
//
// A secret that is short can be guessed offline from one recorded handshake; a secret file that
// other users can read or write is no secret. ReadSecretFile refuses both with an error that names
// the file and what to fix, so every binary that takes --secret_file applies the same rules:
//   - the path is a regular file (after following symlinks) owned by anyone, but with no group or
//     other permission bits (mode & 077 == 0, e.g. 0600 or 0400);
//   - its contents, with trailing ASCII whitespace (a final newline) removed, are at least
//     kMinSecretBytes bytes.
//
// Thread-safety: reentrant.
#ifndef RPLASMA_MANAGER_AUTH_SECRET_FILE_H_
#define RPLASMA_MANAGER_AUTH_SECRET_FILE_H_

#include <cstddef>
#include <string>

#include "absl/status/statusor.h"

namespace rplasma::auth {

inline constexpr size_t kMinSecretBytes = 16;

// Returns the secret, or kInvalidArgument (unreadable, not a regular file, too short) or
// kPermissionDenied (group/other may read or write it), each naming `path`.
absl::StatusOr<std::string> ReadSecretFile(const std::string& path);

}  // namespace rplasma::auth

#endif  // RPLASMA_MANAGER_AUTH_SECRET_FILE_H_
