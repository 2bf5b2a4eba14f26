#include "tests/support/process_fds.h"

#include <dirent.h>
#include <unistd.h>

#include <string>

namespace rplasma::testing {

std::string DescribeOpenFdsOf(pid_t pid) {
  const std::string fd_dir = "/proc/" + std::to_string(pid) + "/fd";
  DIR* dir = ::opendir(fd_dir.c_str());
  if (dir == nullptr) return "(cannot read " + fd_dir + ")";
  std::string out;
  while (dirent* e = ::readdir(dir)) {
    if (e->d_name[0] == '.') continue;
    char target[256];
    const ssize_t n = ::readlink((fd_dir + "/" + e->d_name).c_str(), target, sizeof(target) - 1);
    out += std::string(e->d_name) + " -> " + (n > 0 ? std::string(target, n) : "?") + "\n";
  }
  ::closedir(dir);
  return out;
}

}  // namespace rplasma::testing
