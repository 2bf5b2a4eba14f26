// The client ids and shared-index sizes the store's unit tests share: the files of one test
// binary compile together, several to a translation unit (the unity build), so each name is
// defined once, here.
#ifndef RPLASMA_TESTS_UNIT_STORE_STORE_TEST_CLIENTS_H_
#define RPLASMA_TESTS_UNIT_STORE_STORE_TEST_CLIENTS_H_

#include <cstdint>

#include "store/shared_index.h"

namespace rplasma::store_test {

inline constexpr ClientId kAlice = 100;
inline constexpr ClientId kBob = 200;
inline constexpr uint64_t kEntries = 64;  // a test's shared index: entries...
inline constexpr uint64_t kSlots = 64;    // ...and reference slots

}  // namespace rplasma::store_test

#endif  // RPLASMA_TESTS_UNIT_STORE_STORE_TEST_CLIENTS_H_
