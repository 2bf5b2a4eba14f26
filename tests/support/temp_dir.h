// TempDir: a private (0700) directory under $TMPDIR, removed with its contents on destruction.
#ifndef RPLASMA_TESTS_SUPPORT_TEMP_DIR_H_
#define RPLASMA_TESTS_SUPPORT_TEMP_DIR_H_

#include <string>

namespace rplasma::testing {

class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string Join(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace rplasma::testing

#endif  // RPLASMA_TESTS_SUPPORT_TEMP_DIR_H_
