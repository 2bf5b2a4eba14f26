// TempDir: a private (0700) directory under $TMPDIR, removed with its contents on destruction —
// bench-mpi/launch's ScratchDir for tests, whose fixtures cannot return a status from a
// constructor: a directory that cannot be made fails the test binary at once.
#ifndef RPLASMA_TESTS_SUPPORT_TEMP_DIR_H_
#define RPLASMA_TESTS_SUPPORT_TEMP_DIR_H_

#include <string>

#include "bench-mpi/launch/child_process.h"

namespace rplasma::testing {

class TempDir {
 public:
  TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return dir_.path(); }
  std::string Join(const std::string& name) const { return dir_.Join(name); }

 private:
  bench::ScratchDir dir_;
};

}  // namespace rplasma::testing

#endif  // RPLASMA_TESTS_SUPPORT_TEMP_DIR_H_
