// RedisServer: bench-mpi/launch's RedisServer (the one redis launcher), a private, throw-away
// redis-server on 127.0.0.1 and a free port, for integration tests. Kill() SIGKILLs it; Restart()
// starts a fresh one on the same port. See bench-mpi/launch/redis_server.h.
//
// When redis-server is not installed, tests skip:
//   RPLASMA_SKIP_IF_NO_REDIS_SERVER();
//   ASSERT_OK_AND_ASSIGN(auto redis, RedisServer::Start());
//   ... redis->address() ...   // "127.0.0.1:PORT"
#ifndef RPLASMA_TESTS_SUPPORT_REDIS_SERVER_H_
#define RPLASMA_TESTS_SUPPORT_REDIS_SERVER_H_

#include <gtest/gtest.h>

#include "bench-mpi/launch/redis_server.h"
#include "tests/support/skip.h"

namespace rplasma::testing {

using RedisServer = ::rplasma::bench::RedisServer;
using RedisServerOptions = ::rplasma::bench::RedisServerOptions;

}  // namespace rplasma::testing

// Skips the current test (with the reason) when no redis-server binary is installed; fails it
// instead where every test must run (tests/support/skip.h).
#define RPLASMA_SKIP_IF_NO_REDIS_SERVER()                                                           \
  if (::rplasma::testing::RedisServer::FindBinary().empty())                                       \
  RPLASMA_SKIP_TEST("redis-server", "redis-server not found in PATH or /usr/bin/redis-server; "   \
                                    "install the redis-server package to run this test")

#endif  // RPLASMA_TESTS_SUPPORT_REDIS_SERVER_H_
