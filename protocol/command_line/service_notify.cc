#include "protocol/command_line/service_notify.h"

#include <sys/socket.h>
#include <sys/un.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"

#include "protocol/base/status.h"
#include "protocol/base/unique_fd.h"

namespace rplasma {

absl::Status NotifyServiceManager(absl::string_view state) {
  const char* env = std::getenv("NOTIFY_SOCKET");
  if (env == nullptr || env[0] == '\0') return absl::OkStatus();
  const std::string path = env;
  if ((path[0] != '/' && path[0] != '@') || path.size() >= sizeof(sockaddr_un::sun_path)) {
    return MakeError(ErrorCode::kInvalidArgument, absl::StrCat("NOTIFY_SOCKET=", path, ": not a Unix socket path"));
  }
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.data(), path.size());
  if (path[0] == '@') addr.sun_path[0] = '\0';  // an abstract socket name
  // An abstract name has no terminating NUL; a path's is not needed either: the length says it.
  const socklen_t length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + path.size());

  UniqueFd fd(::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (!fd) return ErrnoError("socket", "NOTIFY_SOCKET", errno);
  ssize_t sent;
  do {
    sent =
        ::sendto(fd.get(), state.data(), state.size(), MSG_NOSIGNAL, reinterpret_cast<const sockaddr*>(&addr), length);
  } while (sent < 0 && errno == EINTR);
  if (sent < 0) return ErrnoError("sendto", path, errno);
  if (static_cast<size_t>(sent) != state.size()) return ErrnoError("sendto", path, EMSGSIZE);
  return absl::OkStatus();
}

}  // namespace rplasma
