#include "tests/support/temp_dir.h"

#include <utility>

#include "absl/status/statusor.h"
#include "protocol/base/logging.h"

namespace rplasma::testing {

TempDir::TempDir() {
  absl::StatusOr<bench::ScratchDir> dir = bench::ScratchDir::Create("rplasma-test");
  CHECK(dir.ok()) << dir.status().ToString();
  dir_ = std::move(*dir);
}

}  // namespace rplasma::testing
