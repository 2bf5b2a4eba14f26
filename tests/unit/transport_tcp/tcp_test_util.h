// Helpers for tcp transport tests: an mmap'd arena with a known byte pattern, and a pair of
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
#include "tests/support/test_bytes.h"
#include "tests/unit/transport_tcp/fake_request_handler.h"

namespace rplasma::transport::testing {

class TestArena {
 public:
  explicit TestArena(size_t size) : size_(size) {
    void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(p != MAP_FAILED) << "mmap of a test arena failed";
    base_ = static_cast<uint8_t*>(p);
  }
  ~TestArena() { ::munmap(base_, size_); }
  TestArena(const TestArena&) = delete;
  TestArena& operator=(const TestArena&) = delete;

  uint8_t* base() const { return base_; }
  size_t size() const { return size_; }
  // The arena holds TestBytes(seed, size()): byte i is TestBytes(seed, i + 1)'s last.
  void Fill(uint64_t seed) { ::rplasma::testing::FillTestBytes(seed, absl::MakeSpan(base_, size_)); }

 private:
  uint8_t* base_ = nullptr;
  size_t size_ = 0;
};

inline TransportOptions OptionsWithSecret(const std::string& secret) {
  TransportOptions o;
  o.secret = secret;
  o.connect_timeout = absl::Seconds(5);
  return o;
}

inline absl::Time Deadline(absl::Duration d = absl::Seconds(20)) { return absl::Now() + d; }

}  // namespace rplasma::transport::testing

#endif  // RPLASMA_TESTS_UNIT_TRANSPORT_TCP_TCP_TEST_UTIL_H_
