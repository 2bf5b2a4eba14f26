#include "tests/support/temp_dir.h"

#include <cstdlib>
#include <filesystem>

#include "protocol/base/logging.h"

namespace rplasma::testing {

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string pattern = std::string(base != nullptr ? base : "/tmp") + "/rplasma-test-XXXXXX";
  char* made = ::mkdtemp(pattern.data());
  CHECK(made != nullptr) << "mkdtemp(" << pattern << ") failed";
  path_ = made;
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

}  // namespace rplasma::testing
