#include "protocol/command_line/default_socket.h"

#include <unistd.h>

#include <cstdlib>

#include "absl/strings/str_cat.h"

namespace rplasma {

std::string DefaultSocketDir(uid_t euid, const char* xdg_runtime_dir) {
  if (euid == 0) return "/run/rplasma";
  // A relative XDG_RUNTIME_DIR would make the socket depend on the working directory; the spec
  // says to ignore it then.
  if (xdg_runtime_dir != nullptr && xdg_runtime_dir[0] == '/') return absl::StrCat(xdg_runtime_dir, "/rplasma");
  return absl::StrCat("/tmp/rplasma-", euid);
}

std::string DefaultSocketDir() { return DefaultSocketDir(::geteuid(), std::getenv("XDG_RUNTIME_DIR")); }

std::string DefaultStoreSocket() { return DefaultSocketDir() + "/store.sock"; }

std::string DefaultManagerSocket() { return DefaultSocketDir() + "/manager.sock"; }

}  // namespace rplasma
