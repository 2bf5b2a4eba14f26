#include "tests/support/subprocess.h"

#include <dirent.h>

namespace rplasma::testing {

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

}  // namespace rplasma::testing
