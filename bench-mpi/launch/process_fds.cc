#include "bench-mpi/launch/process_fds.h"

#include <dirent.h>
#include <unistd.h>

#include <string>

#include "absl/strings/str_cat.h"

namespace rplasma::bench {

int CountOpenFds() {
  int count = 0;
  DIR* dir = ::opendir("/proc/self/fd");
  if (dir == nullptr) return -1;
  while (struct dirent* e = ::readdir(dir)) {
    if (e->d_name[0] != '.') ++count;
  }
  ::closedir(dir);
  return count - 1;  // the DIR's own fd
}

int CountOpenFds(pid_t pid) {
  if (pid <= 0) return -1;
  DIR* dir = ::opendir(absl::StrCat("/proc/", pid, "/fd").c_str());
  if (dir == nullptr) return -1;
  int count = 0;
  while (dirent* e = ::readdir(dir)) {
    if (e->d_name[0] != '.') ++count;
  }
  ::closedir(dir);
  return count;
}

std::string DescribeOpenFds(pid_t pid) {
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

}  // namespace rplasma::bench
