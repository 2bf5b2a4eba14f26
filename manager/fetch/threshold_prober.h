// ProbeThreshold: the `--pin-threshold auto` calibration run once per peer at first connect.
//
// For each probe size (4 KiB .. 4 MiB, x4), a few rounds of: ProbeGet{n} (n bytes inline) against
// ProbePin{n} + Read n bytes (then Unpin, not timed: no fetch waits for it), keeping each path's
// best time. Reads land in a scratch object this manager creates in its own store (unsealed,
// aborted afterwards), so they stay inside the registered arena. The samples go to ThresholdPolicy::Calibrate.
//
// Thread-safety: a free function; concurrent runs for different peers are fine.
#ifndef RPLASMA_MANAGER_FETCH_THRESHOLD_PROBER_H_
#define RPLASMA_MANAGER_FETCH_THRESHOLD_PROBER_H_

#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

#include "manager/fetch/threshold_policy.h"
#include "manager/peer/local_store.h"
#include "manager/transport/transport.h"
#include "protocol/base/clock.h"

namespace rplasma::fetch {

absl::StatusOr<std::vector<ProbeSample>> ProbeThreshold(transport::Channel& channel, peer::LocalStore& store,
                                                        absl::Time deadline, const Clock& clock, int rounds = 3);

}  // namespace rplasma::fetch

#endif  // RPLASMA_MANAGER_FETCH_THRESHOLD_PROBER_H_
