// gtest matchers for absl::Status / StatusOr with the names of newer abseil:
//   EXPECT_THAT(s, IsOk());  EXPECT_THAT(s, StatusIs(absl::StatusCode::kNotFound));
//   EXPECT_THAT(s, HasErrorCode(ErrorCode::kObjectInUse));  EXPECT_THAT(or, IsOkAndHolds(42));
// ASSERT_OK(expr) / ASSERT_OK_AND_ASSIGN(lhs, expr) for brevity.
#ifndef RPLASMA_TESTS_SUPPORT_STATUS_MATCHERS_H_
#define RPLASMA_TESTS_SUPPORT_STATUS_MATCHERS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "protocol/base/status.h"

namespace rplasma::testing {

inline const absl::Status& GetStatus(const absl::Status& s) { return s; }
template <typename T>
const absl::Status& GetStatus(const absl::StatusOr<T>& s) {
  return s.status();
}

MATCHER(IsOk, "is OK") {
  const absl::Status& s = GetStatus(arg);
  if (!s.ok()) *result_listener << "status is " << s.ToString();
  return s.ok();
}

MATCHER_P(StatusIs, code, "has absl code " + ::testing::PrintToString(code)) {
  const absl::Status& s = GetStatus(arg);
  *result_listener << "status is " << s.ToString();
  return s.code() == code;
}

MATCHER_P(HasErrorCode, code, std::string("has rplasma code ") + std::string(ErrorCodeName(code))) {
  const absl::Status& s = GetStatus(arg);
  *result_listener << "status is " << s.ToString() << " (" << ErrorCodeName(ErrorCodeOf(s)) << ")";
  return ErrorCodeOf(s) == code;
}

// A StatusOr that is OK and whose value matches `value` (a value or a matcher).
MATCHER_P(IsOkAndHolds, value, "is OK and holds " + ::testing::PrintToString(value)) {
  if (!arg.ok()) {
    *result_listener << "status is " << arg.status().ToString();
    return false;
  }
  return ::testing::ExplainMatchResult(value, *arg, result_listener);
}

}  // namespace rplasma::testing

#define RPLASMA_TEST_CONCAT_INNER_(a, b) a##b
#define RPLASMA_TEST_CONCAT_(a, b) RPLASMA_TEST_CONCAT_INNER_(a, b)

#define ASSERT_OK(expr) ASSERT_THAT((expr), ::rplasma::testing::IsOk())
#define EXPECT_OK(expr) EXPECT_THAT((expr), ::rplasma::testing::IsOk())
#define ASSERT_OK_AND_ASSIGN(lhs, expr) \
  RPLASMA_ASSERT_OK_AND_ASSIGN_IMPL_(RPLASMA_TEST_CONCAT_(statusor_, __LINE__), lhs, expr)
#define RPLASMA_ASSERT_OK_AND_ASSIGN_IMPL_(statusor, lhs, expr) \
  auto statusor = (expr);                                       \
  ASSERT_THAT(statusor.status(), ::rplasma::testing::IsOk());   \
  lhs = std::move(statusor).value()

#endif  // RPLASMA_TESTS_SUPPORT_STATUS_MATCHERS_H_
