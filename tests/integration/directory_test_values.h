// Values the Redis directory's integration tests share (directory_*_test.cc, one executable).
#ifndef RPLASMA_TESTS_INTEGRATION_DIRECTORY_TEST_VALUES_H_
#define RPLASMA_TESTS_INTEGRATION_DIRECTORY_TEST_VALUES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/time/time.h"

#include "manager/directory/directory.h"

namespace rplasma::testing {

// "Fails fast": within the operation timeout plus this scheduling slack (sanitizer builds).
inline constexpr absl::Duration kFailFastSlack = absl::Milliseconds(300);

// A location with no node id, its digest derived from the generation.
inline ObjectLocation Location(uint64_t size, uint64_t generation) {
  return ObjectLocation{"", {size, 8, generation, generation * 7 + 1}};
}

// The node ids of `locations`, in their order.
inline std::vector<std::string> NodeIds(const std::vector<ObjectLocation>& locations) {
  std::vector<std::string> ids;
  for (const ObjectLocation& l : locations) ids.push_back(l.node_id);
  return ids;
}

}  // namespace rplasma::testing

#endif  // RPLASMA_TESTS_INTEGRATION_DIRECTORY_TEST_VALUES_H_
