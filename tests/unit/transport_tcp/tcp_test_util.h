// Helpers for tcp transport tests: an mmap'd arena with a known byte pattern (TestArena), and a pair of
// transports (owner listening on loopback, reader connecting) wired to a FakeRequestHandler.
#ifndef RPLASMA_TESTS_UNIT_TRANSPORT_TCP_TCP_TEST_UTIL_H_
#define RPLASMA_TESTS_UNIT_TRANSPORT_TCP_TCP_TEST_UTIL_H_

#include <sys/mman.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "manager/transport/tcp/tcp_transport.h"
#include "protocol/base/logging.h"
#include "tests/support/test_arena.h"
#include "tests/support/test_bytes.h"
#include "tests/unit/transport_tcp/fake_request_handler.h"

namespace rplasma::transport::testing {

using ::rplasma::testing::TestArena;

inline TransportOptions OptionsWithSecret(const std::string& secret) {
  TransportOptions o;
  o.secret = secret;
  o.connect_timeout = absl::Seconds(5);
  return o;
}

inline absl::Time Deadline(absl::Duration d = absl::Seconds(20)) { return absl::Now() + d; }

}  // namespace rplasma::transport::testing

#endif  // RPLASMA_TESTS_UNIT_TRANSPORT_TCP_TCP_TEST_UTIL_H_
