// The threshold policy's options the estimator's tests start from.
#ifndef RPLASMA_TESTS_UNIT_FETCH_THRESHOLD_POLICY_OPTIONS_H_
#define RPLASMA_TESTS_UNIT_FETCH_THRESHOLD_POLICY_OPTIONS_H_

#include <cstdint>

#include "manager/fetch/threshold_policy.h"

namespace rplasma::fetch {

// `mode` with `default_bytes` as every peer's starting threshold, and no exploration.
inline ThresholdPolicyOptions Options(ThresholdSetting::Mode mode, uint64_t default_bytes) {
  ThresholdPolicyOptions options;
  options.setting.mode = mode;
  options.setting.table.default_bytes = default_bytes;
  options.explore_every = 0;
  return options;
}

// auto from `default_bytes`, exploring as the manager does.
inline ThresholdPolicyOptions Exploring(uint64_t default_bytes) {
  ThresholdPolicyOptions options = Options(ThresholdSetting::Mode::kAuto, default_bytes);
  options.explore_every = ThresholdPolicyOptions().explore_every;  // the manager's
  return options;
}

}  // namespace rplasma::fetch

#endif  // RPLASMA_TESTS_UNIT_FETCH_THRESHOLD_POLICY_OPTIONS_H_
