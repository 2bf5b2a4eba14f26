// RPLASMA_SKIP_TEST(need, reason): skips the current test because this machine lacks `need`
// ("redis-server", "root", "mpirun", "hugepages", "rdma-device", "mallinfo"), saying `reason`.
//
// Where every test must run — RPLASMA_REQUIRE_ALL=1, which .ci/run sets — the test FAILS instead,
// unless `need` is listed in RPLASMA_ALLOWED_SKIPS (comma-separated): a CI machine that silently
// lacks Redis or root would otherwise pass while testing nothing. On a developer's machine (the
// variable unset) a missing tool is a skip, as before.
//
// Use in a test body or SetUp (it returns from the function, as GTEST_SKIP does).
#ifndef RPLASMA_TESTS_SUPPORT_SKIP_H_
#define RPLASMA_TESTS_SUPPORT_SKIP_H_

#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include <gtest/gtest.h>

#include "bench-mpi/launch/redis_server.h"

namespace rplasma::testing {

// True when a skip for `need` must fail the test (see above).
inline bool SkipIsFailure(absl::string_view need) {
  const char* require = std::getenv("RPLASMA_REQUIRE_ALL");
  if (require == nullptr || absl::string_view(require) != "1") return false;
  const char* allowed = std::getenv("RPLASMA_ALLOWED_SKIPS");
  if (allowed == nullptr) return true;
  for (absl::string_view entry : absl::StrSplit(allowed, ',')) {
    if (entry == need) return false;
  }
  return true;
}

}  // namespace rplasma::testing

#define RPLASMA_SKIP_TEST(need, reason)                                                      \
  do {                                                                                       \
    const std::string rplasma_skip_reason_ = (reason);                                       \
    if (::rplasma::testing::SkipIsFailure(need)) {                                           \
      FAIL() << "this test cannot run here (no " << (need)                                   \
             << ") and RPLASMA_REQUIRE_ALL=1 forbids skipping it: " << rplasma_skip_reason_; \
    }                                                                                        \
    GTEST_SKIP() << rplasma_skip_reason_;                                                    \
  } while (0)

// Skips the current test (with the reason) when no redis-server binary is installed; fails it
// instead where every test must run (above). Then bench::RedisServer::Start() gives a private one.
#define RPLASMA_SKIP_IF_NO_REDIS_SERVER()                                       \
  if (::rplasma::bench::RedisServer::FindBinary().empty())                      \
  RPLASMA_SKIP_TEST("redis-server",                                             \
                    "redis-server not found in PATH or /usr/bin/redis-server; " \
                    "install the redis-server package to run this test")

#endif  // RPLASMA_TESTS_SUPPORT_SKIP_H_
